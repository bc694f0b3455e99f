"""The details document the language server writes for ``dynInspect.showDetails`` lives in
the shared temporary directory: a planted symlink or another user's folder there must never
make us write (or chmod) anything else (issue 29, severe 4)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from dyn_inspect.lsp import details_file

DETAILS = {"function": "train_step", "line": 12, "found": True, "file": "train.py"}


@pytest.fixture
def tmpdir_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # gettempdir() answers this
    return tmp_path / f"dyn-inspect-{os.getuid()}"


def test_writes_a_read_only_file_in_a_private_folder(tmpdir_here: Path) -> None:
    path = details_file.write_details_document(DETAILS)
    assert path is not None and path.parent == tmpdir_here / "details"
    assert stat.S_IMODE(os.stat(tmpdir_here).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o400
    assert "train_step" in path.read_text()
    assert details_file.write_details_document(DETAILS) == path  # written again over its own read-only copy


def test_a_planted_symlink_is_not_written_through(tmpdir_here: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    victim.chmod(0o644)
    (tmpdir_here / "details").mkdir(parents=True, mode=0o700)
    tmpdir_here.chmod(0o700)
    (tmpdir_here / "details" / "train_step-12.md").symlink_to(victim)
    details_file.write_details_document(DETAILS)
    assert victim.read_text() == "precious"
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o644


def test_a_planted_folder_symlink_or_an_open_folder_is_refused(tmpdir_here: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    tmpdir_here.symlink_to(elsewhere)
    assert details_file.write_details_document(DETAILS) is None
    assert list(elsewhere.iterdir()) == []
    tmpdir_here.unlink()
    tmpdir_here.mkdir()
    tmpdir_here.chmod(0o777)  # anyone could plant files in it
    assert details_file.write_details_document(DETAILS) is None


def test_our_own_folder_left_readable_by_an_older_version_is_closed_and_used(tmpdir_here: Path) -> None:
    # dyn-inspect before 0.1's safety pass made it with mkdir(parents=True): 0755. Nobody
    # else could write in it, so it is ours to close; refusing it hid every details document.
    tmpdir_here.mkdir(mode=0o755)
    tmpdir_here.chmod(0o755)
    path = details_file.write_details_document(DETAILS)
    assert path is not None and path.parent == tmpdir_here / "details"
    assert stat.S_IMODE(os.stat(tmpdir_here).st_mode) == 0o700
