"""The TUI in a real terminal: ``dyn-inspect`` runs inside a detached tmux session of fixed
size, keys are sent with ``send-keys`` and the screen is read with ``capture-pane``.

This is what the pilot tests cannot show: the real driver (raw mode, alternate screen,
key parsing), suspending for ``$EDITOR`` and coming back, the program on a real pty, and
the exit code the shell sees after quitting.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from corpus_support import CORPUS, EXAMPLES, marker_line
from dyn_inspect.inspector.run import Run
from inductor_pool import seed

TMUX = shutil.which("tmux")
DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed: the real-terminal check needs it")

BREAKS = CORPUS / "breaks.py"


class Terminal:
    """One detached tmux session on a private server (``-L``), so that nothing the user
    runs in tmux is touched and no tmux configuration is read (``-f /dev/null``)."""

    def __init__(self, tmp: Path, width: int = 140, height: int = 40) -> None:
        self.socket = f"dyn-inspect-test-{os.getpid()}-{id(self)}"
        self.tmp = tmp
        self.width, self.height = width, height
        self.exit_file = tmp / "exit-code"

    def tmux(self, *args: str, check: bool = True) -> str:
        p = subprocess.run([TMUX, "-L", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True)  # type: ignore[list-item]
        if check and p.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)}: {p.stderr}")
        return p.stdout

    def start(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
        # -u COLUMNS/LINES: the test process may carry them (they would override the pane's size).
        command = (
            f"cd {shlex.quote(str(cwd))} && env -u COLUMNS -u LINES {exports} {shlex.join(argv)}; "
            f"echo $? > {shlex.quote(str(self.exit_file))}; sleep 600"
        )
        self.tmux("new-session", "-d", "-s", "main", "-x", str(self.width), "-y", str(self.height), command)

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", "main", *(["-l"] if literal else []), *keys)
        time.sleep(0.15)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "main")

    def wait_for(self, *texts: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if all(t in screen for t in texts):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{texts} not on screen after {timeout}s:\n{screen}")
            time.sleep(0.1)

    def exit_code(self, timeout: float = 20.0) -> int:
        deadline = time.monotonic() + timeout
        while not self.exit_file.exists() or not self.exit_file.read_text().strip():
            if time.monotonic() > deadline:
                raise AssertionError(f"dyn-inspect did not exit:\n{self.screen()}")
            time.sleep(0.1)
        return int(self.exit_file.read_text())

    def close(self) -> None:
        self.tmux("kill-server", check=False)


@pytest.fixture
def terminal(tmp_path: Path):
    term = Terminal(tmp_path)
    yield term
    term.close()


def test_open_navigate_search_edit_and_quit(terminal: Terminal, breaks_run: Run, tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    opened = tmp_path / "opened.txt"
    editor.write_text(f"#!/bin/sh\necho \"$@\" > {shlex.quote(str(opened))}\n")
    editor.chmod(0o755)
    terminal.start([str(DYN_INSPECT), "open", str(breaks_run.path)], cwd=tmp_path, env={"EDITOR": str(editor)})
    screen = terminal.wait_for("Graph breaks (5)", "finished · exit 0", "frames")

    terminal.keys("2")
    branch, builtin = marker_line(BREAKS, "BREAK:branch"), marker_line(BREAKS, "BREAK:builtin")
    screen = terminal.wait_for(f"breaks.py:{branch}", f"breaks.py:{builtin}", "GB0170")

    # Search for the tolist() break and jump to it: its source line is shown, marked.
    terminal.keys("/")
    terminal.wait_for("search breaks, recompiles")  # typed before the box is up, keys go elsewhere
    terminal.keys("tolist", literal=True)
    terminal.wait_for("matches")
    terminal.keys("Enter")
    screen = terminal.wait_for("Tensor.tolist()", "GB0109")
    assert any("❱" in line and "tolist()" in line for line in screen.splitlines())

    # `o` suspends the TUI, runs $EDITOR +line file, and comes back.
    terminal.keys("o")
    deadline = time.monotonic() + 10
    while not opened.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert opened.read_text().split() == [f"+{builtin}", str(BREAKS)]
    terminal.wait_for("GB0109")

    terminal.keys("4")
    terminal.wait_for("branchy", "with_helper", "explicit")
    terminal.keys("q")
    assert terminal.exit_code() == 0


def test_live_program_output_stdin_and_exit_code(terminal: Terminal, tmp_path: Path) -> None:
    script = tmp_path / "ask.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            print("\\x1b[32mready\\x1b[0m", flush=True)
            name = input("name? ")
            print("hello", name, flush=True)
            sys.exit(5)
            """
        )
    )
    terminal.start([str(DYN_INSPECT), "--runs-dir", str(tmp_path / "runs"), str(script)], cwd=tmp_path)
    terminal.wait_for("python3 ask.py")
    terminal.keys("6")
    terminal.wait_for("ready", "name?")
    terminal.keys("Ada", literal=True)
    terminal.keys("Enter")
    screen = terminal.wait_for("hello Ada", "exited with 5")
    assert "name? Ada" in screen
    terminal.keys("q")
    assert terminal.exit_code() == 5
    run = Run(next(p for p in (tmp_path / "runs").iterdir() if p.is_dir() and not p.is_symlink()))
    assert run.model.exit_code == 5


SIGNALLED = """
import os, signal, sys, time
got = []
signal.signal(getattr(signal, sys.argv[1]), lambda s, f: got.append(s))
open("parent", "w").write(str(os.getppid()))  # the TUI's process: it started the program
print("waiting for", sys.argv[1], flush=True)
deadline = time.monotonic() + 60
while not got and time.monotonic() < deadline:
    time.sleep(0.01)
open("handled", "w").write(str(got))
print("handled", got, flush=True)
sys.exit(0 if got else 7)
"""


def _tui_pid(tmp_path: Path) -> int:
    deadline = time.monotonic() + 30
    while not (tmp_path / "parent").exists() or not (tmp_path / "parent").read_text():
        assert time.monotonic() < deadline, "the program did not start"
        time.sleep(0.05)
    return int((tmp_path / "parent").read_text())


@pytest.mark.parametrize("name", ["SIGUSR1", "SIGTERM"])
def test_live_tui_forwards_signals_to_the_program(terminal: Terminal, tmp_path: Path, name: str) -> None:
    """Issue 29 #6 with the TUI: the program runs in its own session, so a signal sent to
    dyn-inspect reached it only if forwarded. SIGUSR1 (SLURM's checkpoint signal) used to
    kill the TUI and orphan the program; SIGTERM SIGKILLed the program, which never ran its
    handler. Now the program gets either one; after SIGTERM the TUI ends with the program."""
    (tmp_path / "prog.py").write_text(SIGNALLED)
    terminal.start([str(DYN_INSPECT), "--runs-dir", str(tmp_path / "runs"), "prog.py", name], cwd=tmp_path)
    pid = _tui_pid(tmp_path)
    terminal.keys("6")
    terminal.wait_for("waiting for")
    os.kill(pid, getattr(signal, name))
    deadline = time.monotonic() + 30
    while not (tmp_path / "handled").exists():
        assert time.monotonic() < deadline, f"the program never got {name}:\n{terminal.screen()}"
        time.sleep(0.05)
    assert (tmp_path / "handled").read_text() == f"[{int(getattr(signal, name))}]"
    if name == "SIGTERM":
        assert terminal.exit_code() == 0  # no q: the TUI ended with the program
    else:
        terminal.wait_for("exited with code 0")  # the TUI is still up, the program ended as it chose
        terminal.keys("q")
        assert terminal.exit_code() == 0
    run = Run(next(p for p in (tmp_path / "runs").iterdir() if p.is_dir() and not p.is_symlink()))
    assert run.model.exit_code == 0


# Runs dyn-inspect with the signal sent to itself just before the TUI starts the program
# (InspectorApp._start_child): the window a supervisor's signal can fall in.
EARLY_TUI = """
import os, signal, sys
from dyn_inspect.tui import app
start_child = app.InspectorApp._start_child
def signalled_first(self):
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    return start_child(self)
app.InspectorApp._start_child = signalled_first
from dyn_inspect.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("name", ["SIGUSR1", "SIGTERM"])
def test_live_tui_keeps_a_signal_that_arrives_before_the_program_starts(terminal: Terminal, tmp_path: Path, name: str) -> None:
    """Issue 29: a signal the TUI got before it started the program was dropped (SIGUSR1)
    or ended the TUI without the program ever running (SIGTERM). It is sent once the program
    starts, as --no-tui does: the program meets it before it installed its handler, so it
    dies by it as under plain python, and the run says so."""
    (tmp_path / "prog.py").write_text(SIGNALLED)
    (tmp_path / "early_tui.py").write_text(EARLY_TUI)
    argv = [sys.executable, "early_tui.py", name, "--runs-dir", str(tmp_path / "runs"), "prog.py", name]
    terminal.start(argv, cwd=tmp_path)
    sig = getattr(signal, name)
    if name == "SIGTERM":
        assert terminal.exit_code(timeout=60) == 128 + sig  # no q: the TUI ended with the program
    else:
        terminal.wait_for(f"exited with code {128 + sig}", timeout=60)  # the TUI stays, as for any exit
        terminal.keys("q")
        assert terminal.exit_code() == 128 + sig
    assert not (tmp_path / "handled").exists(), terminal.screen()  # it never reached its own loop
    run = Run(next(p for p in (tmp_path / "runs").iterdir() if p.is_dir() and not p.is_symlink()))
    assert run.model.exit_code == 128 + sig


@pytest.mark.corpus  # records a real compile inline
def test_live_example_shows_breaks_and_recompiles(terminal: Terminal, tmp_path: Path) -> None:
    """The acceptance check: `dyn-inspect examples/train.py` in a terminal shows the
    script's graph breaks and recompiles while it runs (real Inductor compiles)."""
    train = EXAMPLES / "train.py"
    terminal.start(
        [str(DYN_INSPECT), "--runs-dir", str(tmp_path / "runs"), "train.py", "--steps", "4"],
        cwd=EXAMPLES,
        env={"TORCHINDUCTOR_CACHE_DIR": seed(tmp_path / "inductor-cache")},
    )
    terminal.wait_for("compiling forward", timeout=120)
    terminal.keys("2")
    branch = marker_line(train, "# data-dependent branch: graph break")
    terminal.wait_for(f"train.py:{branch}", "GB0170", timeout=300)
    screen = terminal.wait_for("finished · exit 0", timeout=600)
    assert f"train.py:{marker_line(train, '# print(): graph break')}" in screen
    assert "model_utils.py:" in screen
    terminal.keys("3")
    terminal.wait_for("forward", "guard diff", "size mismatch at index", "expected 16, actual 32", "mark_dynamic(x, 0)")
    terminal.keys("6")
    terminal.wait_for("step 3 batch 16")
    terminal.keys("q")
    assert terminal.exit_code() == 0


NVIM = shutil.which("nvim")


def _shell_lines(screen: str) -> list[str]:
    return [line.rstrip() for line in screen.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "host",
    [
        "tmux",
        # libvterm keeps one saved cursor for both screens (not tmux's, xterm's, xterm.js's
        # way): the shell's screen after the TUI's exit is worth checking there too.
        pytest.param("nvim", marks=pytest.mark.skipif(NVIM is None, reason="Neovim is not installed")),
    ],
)
def test_open_from_the_saved_first_screen_twice_leaves_the_shell_as_it_was(breaks_run: Run, tmp_path: Path, host: str) -> None:
    """Two opens of a run drawn from its saved first screen: each shows the overview, a key
    typed reaches the TUI, and the shell's screen is as it was after each — in tmux, and in
    Neovim's terminal inside tmux."""
    from dyn_inspect.tui import first_screen

    path = tmp_path / "runs" / breaks_run.path.name
    shutil.copytree(breaks_run.path, path, ignore=shutil.ignore_patterns("index.dyn"), symlinks=True)
    Run(path)  # writes the index
    assert first_screen.save(Run(path))
    script = tmp_path / "open.sh"
    script.write_text(f"echo before\n{shlex.quote(str(DYN_INSPECT))} open {shlex.quote(str(path))}\necho after-$?\nsleep 600\n")
    command = ["sh", str(script)] if host == "tmux" else [str(NVIM), "-u", "NONE", "-c", "set laststatus=0 noshowmode noruler", "-c", f"terminal sh {script}", "-c", "startinsert"]
    branch = marker_line(BREAKS, "BREAK:branch")
    terminals = [Terminal(tmp_path / "first"), Terminal(tmp_path / "second")]
    try:
        for term in terminals:
            term.tmp.mkdir()
            term.start(command, cwd=tmp_path)
            term.wait_for("Graph breaks (5)", "finished · exit 0", "frames")
            term.keys("2")
            term.wait_for(f"breaks.py:{branch}", "GB0170")
            term.keys("q")
            assert _shell_lines(term.wait_for("after-0")) == ["before", "after-0"]
    finally:
        for term in terminals:
            term.close()
