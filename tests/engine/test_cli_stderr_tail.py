"""A --no-tui run keeps the traceback of the program's uncaught exception in the run
(``stderr-tail.log``), so a traceback printed to the terminal is not lost: the program's
stderr is its own, its exit code is unchanged, and `summary --json` and the TUI's Output
view show it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from dyn_inspect.engine.stderr_tail import TAIL_BYTES, TAIL_NAME, read_tail
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from tui_support import SIZE, settle

DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"
PROGRAM = """
import sys
print("on stdout")
for i in range(3):
    print(f"err line {i}", file=sys.stderr)
sys.stderr.write("x" * 100_000 + "\\n")  # not the traceback: not kept
raise ValueError("the end")
"""


def record(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    (tmp_path / "prog.py").write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if k != "DYN_INSPECT_RUNS_DIR"}
    p = subprocess.run(
        [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(tmp_path / "runs"), "prog.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    run_dir = next(d for d in (tmp_path / "runs").iterdir() if d.is_dir() and not d.is_symlink())
    return p, run_dir


def test_no_tui_run_keeps_the_stderr_tail(tmp_path: Path) -> None:
    p, run_dir = record(tmp_path)
    assert p.returncode == 1
    assert p.stdout == "on stdout\n"
    assert "err line 0\nerr line 1\nerr line 2\n" in p.stderr and "x" * 100_000 in p.stderr  # all its own
    tail_file = run_dir / TAIL_NAME
    assert stat.S_IMODE(tail_file.stat().st_mode) == 0o600
    tail = read_tail(run_dir)
    assert tail is not None and tail.startswith("Traceback (most recent call last):\n") and tail.endswith("ValueError: the end\n")
    assert tail in p.stderr  # what python printed
    assert len(tail.encode()) <= TAIL_BYTES and "on stdout" not in tail and "err line" not in tail
    data = json.loads(subprocess.run([str(DYN_INSPECT), "summary", str(run_dir), "--json"], capture_output=True, text=True).stdout)
    assert data["stderr_tail"].endswith("ValueError: the end")


def test_tail_that_is_not_a_regular_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("not the program's")
    (tmp_path / TAIL_NAME).symlink_to(tmp_path / "secret")
    assert read_tail(tmp_path) is None
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / TAIL_NAME).unlink()
    os.rename(tmp_path / "fifo", tmp_path / TAIL_NAME)
    assert read_tail(tmp_path) is None  # and it did not hang


async def test_output_view_shows_the_tail(tmp_path: Path) -> None:
    _p, run_dir = record(tmp_path)
    app = InspectorApp(run_dir, run=Run(run_dir), clock=lambda: 0.0, initial_view="output")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lines = app.output_view.plain_lines()
        assert lines[-1] == "ValueError: the end"
