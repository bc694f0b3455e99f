"""Run directories made by hand for the tests that feed the readers a crafted run (no tests
here): a launcher log naming whatever command a hostile run could name."""

from __future__ import annotations

import time
from pathlib import Path

from dyn_inspect.engine.eventlog import EventLog
from dyn_inspect.engine.schema import RunEnd, RunStart


def crafted_run(tmp: Path, mode: str, command: list[str]) -> Path:
    """A run directory whose launcher log names ``command`` (what verify reads first)."""
    run = tmp / "runs" / "20261202-000000-abcdef"
    run.mkdir(parents=True)
    log = EventLog(run, "launcher.jsonl")
    log.write(RunStart(t=time.time(), command=command, cwd=str(tmp), mode=mode, tool_version="0.1.0"))  # type: ignore[arg-type]
    log.write(RunEnd(exit_code=0, duration_s=1.0))
    log.close()
    return run
