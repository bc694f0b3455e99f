"""How the language server finds runs (lsp/run_source.py) without polling each of them: an
idle server re-listed every run folder every 50 ms (59 % of a core with 2,000 runs)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from dyn_inspect.lsp import run_source
from dyn_inspect.lsp.run_source import RunSource


def _age(path: Path) -> None:
    """As if the folder last changed a minute ago (a listing is trusted only then)."""
    t = time.time() - 60
    os.utime(path, (t, t))


def test_runs_are_listed_again_only_when_the_runs_folder_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    for i in range(30):
        (root / f"20260101-0000{i:02d}-aaaaaa").mkdir()
        (root / f"20260101-0000{i:02d}-aaaaaa" / "p01.jsonl").write_text("{}\n")
    _age(root)
    elsewhere = tmp_path / "workspace"
    elsewhere.mkdir()
    source = RunSource(elsewhere, roots=[elsewhere])
    source.configure(str(root), None)
    looked: list[Path] = []
    real = run_source.is_run_dir
    monkeypatch.setattr(run_source, "is_run_dir", lambda p: looked.append(p) or real(p))

    assert len(source.candidates()) == 30 and len(looked) == 30
    looked.clear()
    for _ in range(20):
        assert len(source.candidates()) == 30
    assert looked == []  # nothing changed: no run folder was looked into

    # The recorder makes a run's folder, then its first log: looked into until it is a run.
    new = root / "20260102-000000-bbbbbb"
    new.mkdir()
    _age(root)
    assert len(source.candidates()) == 30
    looked.clear()
    assert len(source.candidates()) == 30 and looked == [new]
    (new / "p01.jsonl").write_text("{}\n")
    assert source.candidates()[0] == new  # newest first
    looked.clear()
    assert len(source.candidates()) == 31 and looked == []

    shutil.rmtree(root / "20260101-000000-aaaaaa")
    _age(root)
    listed = source.candidates()
    assert len(listed) == 30 and root / "20260101-000000-aaaaaa" not in listed


def test_a_change_in_the_last_second_is_never_trusted_to_the_listing(tmp_path: Path) -> None:
    # A folder made in the same mtime tick as the listing would not change the mtime again.
    root = tmp_path / "runs"
    root.mkdir()
    source = RunSource(tmp_path, roots=[tmp_path / "nothing"])
    source.configure(str(root), None)
    before = root.stat()
    assert source.candidates() == []
    run = root / "20260101-000000-cccccc"
    run.mkdir()
    (run / "p01.jsonl").write_text("{}\n")
    os.utime(root, ns=(before.st_atime_ns, before.st_mtime_ns))  # as if made in the same tick
    assert source.candidates() == [run]
