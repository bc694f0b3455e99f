"""The language server's findings cache (lsp/findings_cache.py) on a real recording: read
back equal to what was built, and not used once the run or a described file changed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from dyn_inspect.inspector import index
from dyn_inspect.inspector.reports.findings import build_index
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace
from dyn_inspect.lsp import findings_cache

ROOT = Path(__file__).parents[2]


@pytest.fixture
def run_copy(faces_recompiles_run: Run, tmp_path: Path) -> Path:
    dest = tmp_path / faces_recompiles_run.path.name
    shutil.copytree(faces_recompiles_run.path, dest, ignore=shutil.ignore_patterns(index.INDEX_FILE))
    Run(dest)  # writes the index
    return dest


def _opened(path: Path) -> tuple[Run, Workspace]:
    run = Run(path, skip=index.NOT_FOR_FINDINGS)
    return run, Workspace.for_run([ROOT], run)


def test_saved_findings_read_back_equal(run_copy: Path) -> None:
    run, ws = _opened(run_copy)
    assert run.from_index and run.read_on_open == 0
    built = build_index(run, ws)
    assert built.files, "the recording has findings in this checkout"
    assert findings_cache.load(run, ws) is None  # nothing saved yet
    findings_cache.save(run, ws, built)
    again, ws2 = _opened(run_copy)
    got = findings_cache.load(again, ws2)
    assert got is not None
    assert dict(got.files.items()) == built.files
    assert (got.run_path, got.status, got.event_count, got.baselines) == (built.run_path, built.status, built.event_count, built.baselines)
    assert got.for_path(next(iter(built.files))) == built.files[next(iter(built.files))]


def test_not_used_after_a_described_file_changed(run_copy: Path, tmp_path: Path) -> None:
    run, ws = _opened(run_copy)
    built = build_index(run, ws)
    findings_cache.save(run, ws, built)
    described = next(iter(built.files))
    st = os.stat(described)
    try:
        os.utime(described, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert findings_cache.load(*_opened(run_copy)) is None
    finally:
        os.utime(described, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert findings_cache.load(*_opened(run_copy)) is not None


def test_not_used_for_another_workspace_or_a_grown_run(run_copy: Path, tmp_path: Path) -> None:
    run, ws = _opened(run_copy)
    findings_cache.save(run, ws, build_index(run, ws))
    assert findings_cache.load(run, Workspace.for_run([ROOT / "tests"], run)) is None
    log = next(p for p in sorted(run_copy.glob("p*.jsonl")) if p.stat().st_size > 1000)
    line = next(raw for raw in log.read_bytes().splitlines(keepends=True) if b'"kind":"graph_break"' in raw)
    with open(log, "ab") as f:
        f.write(line)
    grown, ws2 = _opened(run_copy)
    assert grown.from_index and grown.read_on_open == 1
    assert findings_cache.load(grown, ws2) is None  # the model is more than the index


def test_a_run_whose_index_covers_it_is_shown_from_the_cache_before_it_is_read(run_copy: Path, tmp_path: Path) -> None:
    from dyn_inspect.lsp.run_source import RunSource, touch_of

    run, ws = _opened(run_copy)
    built = build_index(run, ws)
    assert findings_cache.peek(run_copy, [ROOT]) is None  # nothing saved yet
    findings_cache.save(run, ws, built, touch_of(run, [ROOT]))
    peeked = findings_cache.peek(run_copy, [ROOT])
    assert peeked is not None
    shown, touch = peeked
    assert dict(shown.files.items()) == built.files and touch == touch_of(run, [ROOT])
    # The run the server would choose, from what was saved alone (the only run there).
    # (Its own folder: no .dyn-inspect/runs of this checkout is scanned.)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    source = RunSource(elsewhere, roots=[elsewhere])
    source.configure(str(run_copy.parent), None)
    choice = source.cached_choice(lambda path: findings_cache.peek(path, [ROOT]))
    assert choice is not None and choice[0].resolve() == run_copy.resolve()
    assert source.run is None  # nothing was read
    # Grown since: not covered by its index any more, so it has to be read.
    log = next(p for p in sorted(run_copy.glob("p*.jsonl")) if p.stat().st_size > 1000)
    with open(log, "ab") as f:
        f.write(log.read_bytes().splitlines(keepends=True)[-1])
    assert findings_cache.peek(run_copy, [ROOT]) is None
    assert source.cached_choice(lambda path: findings_cache.peek(path, [ROOT])) is None
