"""The run's last first frame (``tui/last_frame.py``), replayed by ``dyn-inspect open RUN``
before Textual is imported: only for the run as it was when the frame was kept, on a
terminal of that size, and the terminal given back as it was.

Replays run in a child process on a real pseudo-terminal (``pty``), what ``dyn-inspect``'s
``main`` does first; the frames are kept from a recorded run (a real compile)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from dyn_inspect.engine import eventlog
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui import first_screen, last_frame

# Replays for sys.argv[1:], then prints what it saw (on stderr: stdout is the terminal).
CHILD = """
import json, os, sys, termios
from pathlib import Path
from dyn_inspect.tui import last_frame

other = os.environ.get("CONFIRM_WITH")
shown = last_frame.replay(sys.argv[1:])
echo_during = bool(termios.tcgetattr(0)[3] & termios.ECHO)
stays = last_frame.confirm(Path(other), shown=True) if other else None
last_frame.undo()
os.write(1, b"<undone>")
sys.stderr.write(json.dumps({"shown": shown, "echo_during": echo_during, "stays": stays,
                             "echo_after": bool(termios.tcgetattr(0)[3] & termios.ECHO)}))
"""


def _replay(argv: list[str], size: tuple[int, int], cwd: Path, env: dict[str, str] | None = None) -> tuple[dict[str, object], bytes]:
    """What a child on a ``size`` (columns, lines) terminal replays for ``dyn-inspect ARGV``:
    its report and every byte it wrote to the terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    child_env = {k: v for k, v in os.environ.items() if k not in ("DYN_INSPECT_NO_FRAME", "DYN_INSPECT_NO_INDEX")}
    child_env.update(env or {})  # (the terminal's environment is this process's: a frame is kept for it)
    p = subprocess.Popen([sys.executable, "-c", CHILD, *argv], stdin=slave, stdout=slave, stderr=subprocess.PIPE, cwd=cwd, env=child_env)
    os.close(slave)
    written = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        written += chunk
    os.close(master)
    report = json.loads(p.communicate(timeout=60)[1] or b"{}")
    return report, written


def _indexed(run: Run, tmp_path: Path) -> Path:
    path = tmp_path / "runs" / run.path.name
    shutil.copytree(run.path, path, ignore=shutil.ignore_patterns("index.dyn"), symlinks=True)
    Run(path)  # the first open of the finished run writes its index
    assert first_screen.save(Run(path))  # (as the command that wrote it does)
    return path


def test_the_name_it_repeats_is_the_engines() -> None:
    # (last_frame names it itself, to replay before engine.eventlog is imported)
    assert last_frame.RUNS_DIR_ENV == eventlog.RUNS_DIR_ENV


def test_a_kept_frame_is_replayed_for_its_run_and_terminal_only(breaks_run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    path = _indexed(breaks_run, tmp_path)
    assert _replay(["open", str(path)], (100, 30), tmp_path)[0]["shown"] is False  # none kept yet

    spot = last_frame.spot(path)
    assert spot is not None
    frame = "\x1b[1;1Hthe kept frame ✓"
    assert last_frame.keep(spot, 100, 30, frame)
    report, written = _replay(["open", str(path)], (100, 30), tmp_path)
    assert report == {"shown": True, "echo_during": False, "stays": None, "echo_after": True}
    start = written.index(b"\x1b[?1049h\x1b[?25l" + frame.encode())
    # Given back: the cursor shown and the main screen again (Textual never took over here).
    assert written.index(b"\x1b[?25h\x1b[?1049l", start) < written.index(b"<undone>")

    # `open` (the latest run), the runs dir, the project's dir and the run's id: the same run.
    (path.parent / "latest").symlink_to(path.name)
    runs = {eventlog.RUNS_DIR_ENV: str(path.parent)}
    assert _replay(["open"], (100, 30), tmp_path, runs)[0]["shown"] is True
    assert _replay(["open", path.name], (100, 30), tmp_path, runs)[0]["shown"] is True
    assert _replay(["open", str(path.parent)], (100, 30), tmp_path)[0]["shown"] is True
    project = tmp_path / "project"
    (project / ".dyn-inspect").mkdir(parents=True)
    (project / ".dyn-inspect" / "runs").symlink_to(path.parent)
    assert _replay(["open", "project"], (100, 30), tmp_path)[0]["shown"] is True
    assert _replay(["open", "elsewhere"], (100, 30), tmp_path, runs)[0]["shown"] is False
    # Not for another terminal size or colour setting, nor any other command or option.
    assert _replay(["open", str(path)], (101, 30), tmp_path)[0]["shown"] is False
    assert _replay(["open", str(path)], (100, 30), tmp_path, {"NO_COLOR": "1"})[0]["shown"] is False
    for argv in (["summary", str(path)], ["open", "--view", "kernels", str(path)], ["open", str(path), "--view=kernels"]):
        assert _replay(argv, (100, 30), tmp_path)[0]["shown"] is False
    assert _replay(["open", str(path)], (100, 30), tmp_path, {"DYN_INSPECT_NO_FRAME": "1"})[0]["shown"] is False

    # Confirmed for its run; wiped at once when the run that opens is another.
    assert _replay(["open", str(path)], (100, 30), tmp_path, {"CONFIRM_WITH": str(path)})[0]["stays"] is True
    report, written = _replay(["open", str(path)], (100, 30), tmp_path, {"CONFIRM_WITH": str(tmp_path)})
    assert report["stays"] is False and b"\x1b[2J" in written

    # A log appended to since: the frame is of another run now, not replayed.
    log = max(path.glob("p*.jsonl"), key=lambda p: p.stat().st_size)
    with log.open("ab") as f:
        f.write(b"\n")
    assert _replay(["open", str(path)], (100, 30), tmp_path)[0]["shown"] is False


def test_a_frame_file_that_is_not_one_is_not_replayed(breaks_run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    path = _indexed(breaks_run, tmp_path)
    spot = last_frame.spot(path)
    assert spot is not None and last_frame.keep(spot, 80, 24, "\x1b[1;1Hframe")
    [kept] = [p for p in last_frame._folder().glob("*.frame") if b"frame" in p.read_bytes() and str(path).encode() in p.read_bytes()]
    data = kept.read_bytes()
    for broken in (b"garbage", data[: len(last_frame.MAGIC) + 5], data.replace(b'"files"', b'"filez"')):
        kept.write_bytes(broken)
        assert _replay(["open", str(path)], (80, 24), tmp_path)[0]["shown"] is False
    kept.write_bytes(data)
    assert _replay(["open", str(path)], (80, 24), tmp_path)[0]["shown"] is True
