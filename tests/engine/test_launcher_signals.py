"""`dyn-inspect --no-tui` under signals behaves as `python prog.py` would: a signal sent to
the launcher reaches the program (which may handle it and run on), the launcher ends as the
program ended (killed by the same signal), and run_end is written either way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"
PROGRAM = """
import os, signal, sys, time
got = []
if sys.argv[1] != "default":
    signal.signal(getattr(signal, sys.argv[1]), lambda s, f: got.append(s))
open("ready", "w").close()
deadline = time.monotonic() + 60
while not got and time.monotonic() < deadline:
    time.sleep(0.01)
open("handled", "w").write(str(got))
sys.exit(0 if got else 7)
"""


def default_sigint() -> None:
    """In the launcher before it starts: SIGINT at its default, as from a terminal. A shell
    starts a background job (``bash tests/run.sh &``) with SIGINT ignored, python keeps it
    ignored and so does the program (as under plain python): the SIGINT cases would test
    that instead."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(tmp_path: Path, handled: str) -> subprocess.Popen[bytes]:
    (tmp_path / "prog.py").write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if k != "DYN_INSPECT_RUNS_DIR"}
    return subprocess.Popen(
        [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(tmp_path / "runs"), "prog.py", handled],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=default_sigint,
    )


def wait_ready(tmp_path: Path, p: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while not (tmp_path / "ready").exists():
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "the program never started"
        time.sleep(0.02)


def record(tmp_path: Path, **kwargs) -> subprocess.CompletedProcess[str]:
    """``dyn-inspect --no-tui prog.py`` in ``tmp_path``, run to its end (``kwargs``: more of
    subprocess.run's)."""
    env = {k: v for k, v in os.environ.items() if k != "DYN_INSPECT_RUNS_DIR"}
    return subprocess.run(
        [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(tmp_path / "runs"), "prog.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


def run_end(tmp_path: Path) -> dict:
    run = next(d for d in (tmp_path / "runs").iterdir() if d.is_dir() and not d.is_symlink())
    events = [json.loads(line) for line in (run / "launcher.jsonl").read_text().splitlines()]
    return next(e for e in events if e.get("kind") == "run_end")


@pytest.mark.parametrize("name", ["SIGUSR1", "SIGUSR2", "SIGHUP", "SIGALRM", "SIGQUIT", "SIGWINCH", "SIGABRT", "SIGXCPU", "SIGRTMIN"])
def test_a_handled_signal_reaches_the_program_which_runs_on(tmp_path: Path, name: str) -> None:
    p = start(tmp_path, name)
    wait_ready(tmp_path, p)
    p.send_signal(getattr(signal, name))
    p.communicate(timeout=120)
    assert (tmp_path / "handled").read_text() == f"[{int(getattr(signal, name))}]"
    assert p.returncode == 0
    assert run_end(tmp_path)["exit_code"] == 0


@pytest.mark.parametrize("name", ["SIGHUP", "SIGUSR1", "SIGTERM", "SIGINT", "SIGALRM", "SIGIO", "SIGRTMIN"])
def test_the_launcher_dies_by_the_signal_that_killed_the_program(tmp_path: Path, name: str) -> None:
    p = start(tmp_path, "default")
    wait_ready(tmp_path, p)
    sig = getattr(signal, name)
    p.send_signal(sig)
    p.communicate(timeout=120)
    assert not (tmp_path / "handled").exists()  # the program ended by it, not by its loop
    end = run_end(tmp_path)
    if sig == signal.SIGINT:  # python's own SIGINT: KeyboardInterrupt, then it re-kills itself by SIGINT
        assert p.returncode == -signal.SIGINT and end["exit_code"] == 130
    else:
        assert p.returncode == -sig
        assert end["signal"] == sig and end["exit_code"] == 128 + sig


def test_a_signal_the_program_sends_its_own_group_is_not_forwarded_again(tmp_path: Path) -> None:
    """os.killpg(0, SIGUSR1): the group holds the program and the launcher; the program must
    get it once (a second delivery would be forwarded by the launcher)."""
    (tmp_path / "prog.py").write_text(
        "import os, signal, time\n"
        "got = []\n"
        "signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))\n"
        "os.killpg(0, signal.SIGUSR1)\n"
        "deadline = time.monotonic() + 3\n"  # (time for a wrong second delivery to arrive)
        "while time.monotonic() < deadline: time.sleep(0.01)\n"
        "print(len(got))\n"
    )
    p = record(tmp_path, start_new_session=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "1\n"


def test_a_program_killed_by_sigkill_ends_the_launcher_by_sigkill(tmp_path: Path) -> None:
    """The OOM killer's SIGKILL: python's parent sees death by signal 9. ``end_like`` set
    the killing signal's handler to SIG_DFL first, which SIGKILL refuses (EINVAL), and then
    exited 137 instead (a supervisor's WIFSIGNALED was false)."""
    (tmp_path / "prog.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    plain = subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, capture_output=True, timeout=120)
    assert plain.returncode == -signal.SIGKILL
    ours = record(tmp_path)
    assert ours.returncode == -signal.SIGKILL, ours.stderr
    end = run_end(tmp_path)
    assert end["signal"] == signal.SIGKILL and end["exit_code"] == 128 + signal.SIGKILL


# The launcher with a signal sent to it right after the program was started and before it
# waits (``Launch.start`` wrapped to do so): on a loaded machine a test's signal landed
# there, python's default action ended the launcher alone, and the program ran on orphaned.
EARLY = """
import os, signal, sys
from dyn_inspect.engine import launcher
start = launcher.Launch.start
def start_then_signal(self, **kw):
    process = start(self, **kw)
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    return process
launcher.Launch.start = start_then_signal
from dyn_inspect.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_signal_while_the_program_starts_reaches_it(tmp_path: Path, name: str) -> None:
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "early.py").write_text(EARLY)
    env = {k: v for k, v in os.environ.items() if k != "DYN_INSPECT_RUNS_DIR"}
    p = subprocess.run(
        [sys.executable, "early.py", name, "--no-tui", "--runs-dir", str(tmp_path / "runs"), "prog.py", "default"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        preexec_fn=default_sigint,
    )
    sig = getattr(signal, name)
    assert not (tmp_path / "handled").exists(), p.stderr  # the program ended by it, not by its loop
    assert p.returncode == -sig, p.stderr  # and the launcher as the program did
    assert run_end(tmp_path)["exit_code"] == (130 if sig == signal.SIGINT else 128 + sig)
