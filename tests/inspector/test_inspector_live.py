"""Following a run that is still being written: only appended bytes are read, the model
grows with them, and a half-written last line waits for its newline."""

from __future__ import annotations

import shutil
from pathlib import Path

from dyn_inspect.inspector.run import Run


def _copy_growing(src: Run, dst: Path, fraction: float) -> tuple[Path, list[bytes]]:
    """A copy of ``src`` whose process log holds only its first ``fraction`` of lines."""
    shutil.copytree(src.path / "blobs", dst / "blobs")
    log = next(p for p in src.path.glob("p*.jsonl"))
    lines = log.read_bytes().splitlines(keepends=True)
    cut = int(len(lines) * fraction)
    (dst / log.name).write_bytes(b"".join(lines[:cut]))
    return dst / log.name, lines[cut:]


def test_refresh_reads_only_new_events(recompiles_run: Run, tmp_path: Path) -> None:
    path, rest = _copy_growing(recompiles_run, tmp_path / "live", 0.3)
    live = Run(tmp_path / "live")
    log = live.logs[path.name]
    before_events, before_compiles = live.model.event_count, len(live.model.compiles)
    assert live.model.status == "running"  # no process_end yet
    assert log.offset == path.stat().st_size
    with open(path, "ab") as f:
        f.write(b"".join(rest[:10]))
    assert live.refresh() == 10
    assert live.model.event_count == before_events + 10
    assert log.offset == path.stat().st_size  # read up to the end, once
    assert live.refresh() == 0  # nothing new: nothing read
    with open(path, "ab") as f:
        f.write(b"".join(rest[10:]))
    assert live.refresh() == len(rest) - 10
    full = recompiles_run.model
    assert live.model.event_count == full.event_count - 3  # launcher.jsonl (3 lines) was not copied
    assert len(live.model.compiles) == len(full.compiles) >= before_compiles
    assert len(live.model.recompiles) == len(full.recompiles)
    assert live.model.processes[path.name].end is not None


def test_half_written_line_waits_for_its_newline(recompiles_run: Run, tmp_path: Path) -> None:
    path, rest = _copy_growing(recompiles_run, tmp_path / "live", 0.5)
    live = Run(tmp_path / "live")
    count = live.model.event_count
    line = rest[0]
    with open(path, "ab") as f:
        f.write(line[: len(line) // 2])
    assert live.refresh() == 0 and live.model.event_count == count
    assert live.logs[path.name].unterminated_tail() == len(line) // 2
    with open(path, "ab") as f:
        f.write(line[len(line) // 2 :])
    assert live.refresh() == 1 and live.model.event_count == count + 1
