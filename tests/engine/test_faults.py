"""The recorder never changes what the user's program does (issue 19, items 1-5).

Each fault test runs a small program twice, plainly and under ``dyn-inspect --no-tui``,
and compares what the user sees: stdout, stderr up to our end-of-run summary (apart from
the one ``dyn-inspect: recording stopped: ...`` line where a fault stops recording) and the
exit code. The faults are real: a program that closes every descriptor and opens its own
file, a tmpfs of a few pages that fills up, a runs directory that is a file, read-only or
full, ``os.fork``, SIGINT sent to the launcher alone, Ctrl-C typed at a terminal.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dyn_inspect.engine.eventlog import LATEST, EventLog
from dyn_inspect.inspector.run import Run

STOPPED = "dyn-inspect: recording stopped: "
CLI = [sys.executable, "-m", "dyn_inspect.cli"]


@dataclass
class Result:
    stdout: str
    stderr: str
    returncode: int

    @property
    def user_stderr(self) -> str:
        """stderr without our lines: the ``recording stopped`` notice and the summary that
        ``--no-tui`` prints after the program ended (the first other ``dyn-inspect:`` line)."""
        lines = [ln for ln in self.stderr.splitlines(keepends=True) if not ln.startswith(STOPPED)]
        for i, ln in enumerate(lines):
            if ln.startswith("dyn-inspect: "):
                return "".join(lines[:i])
        return "".join(lines)

    @property
    def notices(self) -> list[str]:
        return [ln for ln in self.stderr.splitlines() if ln.startswith(STOPPED)]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYN_INSPECT_")}
    env.update(extra)
    return env


def plain(program: Path, cwd: Path, *args: str, timeout: float = 300) -> Result:
    done = subprocess.run([sys.executable, str(program), *args], cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    return Result(done.stdout, done.stderr, done.returncode)


def recorded(program: Path, cwd: Path, runs: Path, *args: str, timeout: float = 300) -> Result:
    done = subprocess.run([*CLI, "--no-tui", "--runs-dir", str(runs), str(program), *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return Result(done.stdout, done.stderr, done.returncode)


def _stacks_on_hang(argv: list[str], cwd: Path, timeout: float = 300) -> Result:
    """``argv`` run to its end; past ``timeout`` every process of its session gets SIGABRT,
    which Python's faulthandler (``PYTHONFAULTHANDLER``: a signal handler, no thread that a
    fork would copy) answers with each thread's stack on stderr, and the test fails with them."""
    proc = subprocess.Popen(argv, cwd=cwd, env=_env(PYTHONFAULTHANDLER="1"), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGABRT)
        out, err = proc.communicate(timeout=60)
        pytest.fail(f"{argv} hung past {timeout:.0f} s; its output:\n{out}\nits threads:\n{err}")
    return Result(out, err, proc.returncode)


def write_program(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def assert_same_for_the_user(mine: Result, theirs: Result) -> None:
    assert mine.stdout == theirs.stdout
    assert mine.user_stderr == theirs.stderr
    assert mine.returncode == theirs.returncode


def run_dirs(runs: Path) -> list[Path]:
    return sorted(p for p in runs.iterdir() if p.is_dir() and not p.is_symlink()) if runs.is_dir() else []


# -- 1. the program closes our descriptor and opens its own file under the same number ----

CLOSER = """
    import os, sys, torch

    @torch.compile
    def f(x):
        return (x * 2).sin() + 1

    print(round(f(torch.ones(4)).sum().item(), 4))
    os.closerange(3, 1024)  # daemons and test harnesses do this
    fd = os.open("user.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"the user's own 25 bytes.\\n")

    @torch.compile
    def g(x):
        return (x + 3).cos()

    print(round(g(torch.ones(5)).sum().item(), 4))
    os.close(fd)
    print(open("user.txt").read(), end="")
    sys.exit(3)
"""


@pytest.mark.corpus
def test_descriptor_closed_and_reused_by_the_program_is_never_written(tmp_path: Path) -> None:
    program = write_program(tmp_path, "closer.py", CLOSER)
    (tmp_path / "plain").mkdir()
    (tmp_path / "mine").mkdir()
    theirs = plain(program, tmp_path / "plain")
    mine = recorded(program, tmp_path / "mine", tmp_path / "runs")
    assert theirs.returncode == 3, theirs.stderr
    assert_same_for_the_user(mine, theirs)
    assert mine.notices == []
    assert "Bad file descriptor" not in mine.stderr
    user_file = tmp_path / "mine" / "user.txt"
    assert user_file.read_bytes() == b"the user's own 25 bytes.\n"
    # The compile after closerange is still recorded, into our own file.
    run = Run(tmp_path / "runs" / LATEST)
    names = {c.capture.co_name for c in run.model.compiles.values() if c.capture}
    assert {"f", "g"} <= names
    assert run.model.run_end is not None and run.model.run_end.exit_code == 3


# -- 2. disk full while the program runs ------------------------------------------------


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of 64 KiB (16 pages): a compile's blobs fill it. Needs root (mount)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root; the RLIMIT_FSIZE tests below cover the writer")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


COMPILES_A_LOT = """
    import sys, torch

    def make(k):
        def fn(x):
            return (x * k).sin().cos() + k
        return torch.compile(fn)

    total = 0.0
    for k in range(6):
        total += make(k)(torch.ones(8)).sum().item()
    print(f"total {total:.4f}")
    print("the program's own stderr", file=sys.stderr)
    sys.exit(6)
"""


@pytest.mark.corpus
def test_disk_full_keeps_the_exit_code_and_says_so_once(tmp_path: Path, small_tmpfs: Path) -> None:
    program = write_program(tmp_path, "fills.py", COMPILES_A_LOT)
    theirs = plain(program, tmp_path)
    mine = recorded(program, tmp_path, small_tmpfs / "runs")
    assert theirs.returncode == 6, theirs.stderr
    assert_same_for_the_user(mine, theirs)
    assert "Traceback" not in mine.stderr
    assert len(mine.notices) == 1, mine.stderr
    assert mine.notices[0].startswith(STOPPED + "disk full (")
    (run_dir,) = run_dirs(small_tmpfs / "runs")
    # No half-written temp blob, no torn line: every line of every log is whole JSON.
    assert [p for p in (run_dir / "blobs").rglob(".*")] == []
    for log in run_dir.glob("*.jsonl"):
        data = log.read_bytes()
        assert not data or data.endswith(b"\n"), log
        for line in data.splitlines():
            json.loads(line)
    run = Run(run_dir)
    assert run.model.run_end is not None and run.model.run_end.exit_code == 6


WRITER = """
    import resource, sys, time
    from pathlib import Path
    from dyn_inspect.engine.eventlog import EventLog
    from dyn_inspect.engine.schema import Raw

    run = Path(sys.argv[1])
    (run / "blobs").mkdir(parents=True)
    log = EventLog(run, "p1.jsonl")
    resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))  # writes past 20 kB fail (EFBIG)
    for i in range(400):
        blob = log.blobs.put("payload %d " % i * 40)
        log.write(Raw(torch_kind="x" * 100, payload=blob))
    log.close()
    print("the program went on")
"""


def test_writer_past_the_file_size_limit_stops_cleanly(tmp_path: Path) -> None:
    """Without root: RLIMIT_FSIZE makes our writes fail like a full disk (EFBIG)."""
    program = write_program(tmp_path, "writer.py", WRITER)
    run = tmp_path / "run"
    done = subprocess.run([sys.executable, str(program), str(run)], capture_output=True, text=True, env=_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the program went on\n"
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(STOPPED + "disk full (File too large"), done.stderr
    data = (run / "p1.jsonl").read_bytes()
    assert data.endswith(b"\n") and all(json.loads(line) for line in data.splitlines())
    assert [p for p in (run / "blobs").rglob(".*")] == []
    assert 0 < len(data) <= 20000


def test_strict_writer_raises_and_takes_back_the_partial_line(tmp_path: Path) -> None:
    """The importer and the launcher write strictly: a failure is an error, never a torn line."""
    program = write_program(tmp_path, "strict.py", """
        import resource, sys
        from pathlib import Path
        from dyn_inspect.engine.eventlog import EventLog
        from dyn_inspect.engine.schema import Raw

        run = Path(sys.argv[1])
        (run / "blobs").mkdir(parents=True)
        log = EventLog(run, "launcher.jsonl", strict=True)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4000, 4000))
        try:
            for i in range(100):
                log.write(Raw(torch_kind="y" * 300))
        except OSError as exc:
            print("raised", exc.errno)
    """)
    run = tmp_path / "run"
    done = subprocess.run([sys.executable, str(program), str(run)], capture_output=True, text=True, env=_env(), timeout=60)
    assert done.stdout.startswith("raised "), done.stderr
    assert done.stderr == ""
    data = (run / "launcher.jsonl").read_bytes()
    assert data.endswith(b"\n") and all(json.loads(line) for line in data.splitlines())


# -- 3. the runs directory cannot hold a run ------------------------------------------

MARKER_PROGRAM = """
    from pathlib import Path
    Path("it-ran").write_text("yes")
    print("ran")
"""


def _previous_run(runs: Path) -> Path:
    """A runs root that already holds one finished run, pointed at by ``latest``."""
    runs.mkdir(parents=True)
    old = runs / "20260101-000000-abcdef"
    old.mkdir()
    (old / "blobs").mkdir()
    log = EventLog(old, "launcher.jsonl", strict=True)
    log.close()
    os.symlink(old.name, runs / LATEST)
    return old


def _unwritable(kind: str, tmp_path: Path) -> Iterator[Path]:
    if kind == "a file":
        path = tmp_path / "runs"
        path.write_text("not a directory")
        yield path
        return
    if kind == "read-only":
        runs = tmp_path / "ro" / "runs"
        _previous_run(runs)
        if os.geteuid() != 0:
            os.chmod(runs, 0o500)
            yield runs
            os.chmod(runs, 0o700)
            return
        done = subprocess.run(["mount", "--bind", "-o", "ro", str(runs), str(runs)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot bind-mount read-only: {done.stderr.strip()}")
        subprocess.run(["mount", "-o", "remount,bind,ro", str(runs)], check=False)
        try:
            yield runs
        finally:
            subprocess.run(["umount", "-l", str(runs)], check=False)
        return
    # full: a tiny tmpfs, filled to the last page
    if os.geteuid() != 0:
        pytest.skip("a full filesystem needs root (tmpfs)")
    mnt = tmp_path / "full"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        runs = mnt / "runs"
        _previous_run(runs)
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 512):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        yield runs
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.parametrize("kind", ["a file", "read-only", "full"])
def test_runs_dir_that_cannot_hold_a_run_is_refused_in_one_line(tmp_path: Path, kind: str) -> None:
    program = write_program(tmp_path, "marker.py", MARKER_PROGRAM)
    work = tmp_path / "work"
    work.mkdir()
    gen = _unwritable(kind, tmp_path)
    runs = next(gen)
    try:
        before = sorted(os.listdir(runs)) if runs.is_dir() else None
        latest = os.readlink(runs / LATEST) if runs.is_dir() else None
        mine = recorded(program, work, runs, timeout=60)
        assert mine.returncode == 2
        assert mine.stdout == ""
        lines = mine.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("dyn-inspect: cannot "), mine.stderr
        assert "nothing was run" in lines[0]
        assert not (work / "it-ran").exists()  # refused before starting the program
        if before is not None:
            assert sorted(os.listdir(runs)) == before  # no phantom run
            assert os.readlink(runs / LATEST) == latest
    finally:
        for _ in gen:
            pass


# -- 4. os.fork ---------------------------------------------------------------------------

FORKS = """
    import os, sys
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"  # Inductor's worker pool does not survive a fork
    import torch

    @torch.compile
    def parent_fn(x):
        return x.sin() * 2

    print("parent", round(parent_fn(torch.ones(3)).sum().item(), 4), flush=True)
    children = []
    for n in range(2):
        pid = os.fork()
        if pid == 0:
            @torch.compile
            def child_fn(x):
                return x.cos() + n

            print("child", n, round(child_fn(torch.ones(3)).sum().item(), 4), flush=True)
            sys.stdout.flush()
            sys.exit(0)  # a normal exit: atexit runs in the child too
        os.waitpid(pid, 0)  # one at a time: the output order is the plain run's

    @torch.compile
    def after(x):
        return x.tan()

    print("after", round(after(torch.ones(3)).sum().item(), 4))
"""


@pytest.mark.corpus
def test_forked_children_start_their_own_logs(tmp_path: Path) -> None:
    program = write_program(tmp_path, "forks.py", FORKS)
    # A plain run of this program once hung on a loaded CI after both children had printed
    # (session 19): should either run hang again, the failure shows every thread's stack.
    theirs = _stacks_on_hang([sys.executable, str(program)], tmp_path)
    mine = _stacks_on_hang([*CLI, "--no-tui", "--runs-dir", str(tmp_path / "runs"), str(program)], tmp_path)
    assert theirs.returncode == 0, theirs.stderr
    assert_same_for_the_user(mine, theirs)
    run = Run(tmp_path / "runs" / LATEST)
    logs = {name: log for name, log in run.logs.items() if name != "launcher.jsonl"}
    assert len(logs) == 3, sorted(logs)
    for name, log in logs.items():
        assert log.header is not None and name == f"p{log.header.pid}.jsonl"  # each its own writer
    by_log: dict[str, list[str]] = {}
    for c in run.model.compiles.values():
        if c.capture is not None:
            by_log.setdefault(c.log, []).append(c.capture.co_name)
    parent = next(n for n, fns in by_log.items() if "parent_fn" in fns)
    assert sorted(by_log[parent]) == ["after", "parent_fn"]
    assert sorted(fns for n, fns in by_log.items() if n != parent) == [["child_fn"], ["child_fn"]]
    # No log holds two compiles with one id (the parent's did, three times, before).
    for name in logs:
        _, events = zip(*run.events(name), strict=True)
        starts = [e.cid for e in events if type(e).__name__ == "CompileStart"]
        assert len(starts) == len(set(starts)), (name, starts)


# -- 5. SIGINT sent to the launcher alone; Ctrl-C typed at a terminal ---------------------

WAITS = """
    import signal, sys, time
    import torch  # recorded like any torch program

    count = 0

    def on_int(signum, frame):
        global count
        count += 1

    signal.signal(signal.SIGINT, on_int)
    print("ready", flush=True)
    deadline = time.time() + 60
    while not count and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # a second SIGINT (a double delivery) would arrive meanwhile
    print("interrupts", count, flush=True)
    sys.exit(7 if count else 1)
"""


def _interrupt_after_ready(argv: list[str], cwd: Path) -> Result:
    """Start ``argv`` in its own session (no terminal: an IDE), SIGINT it alone when ready."""
    proc = subprocess.Popen(argv, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first == "ready\n", first
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return Result(first + out, err, proc.returncode)


@pytest.mark.corpus
def test_sigint_sent_to_the_launcher_alone_reaches_the_program(tmp_path: Path) -> None:
    program = write_program(tmp_path, "waits.py", WAITS)
    theirs = _interrupt_after_ready([sys.executable, str(program)], tmp_path)
    mine = _interrupt_after_ready([*CLI, "--no-tui", "--runs-dir", str(tmp_path / "runs"), str(program)], tmp_path)
    assert theirs.stdout == "ready\ninterrupts 1\n" and theirs.returncode == 7
    assert_same_for_the_user(mine, theirs)


@pytest.mark.corpus
def test_ctrl_c_at_a_terminal_reaches_the_program_once(tmp_path: Path) -> None:
    """The terminal interrupts the whole foreground group: the launcher must not add a
    second SIGINT of its own."""
    program = write_program(tmp_path, "waits.py", WAITS)
    argv = [*CLI, "--no-tui", "--runs-dir", str(tmp_path / "runs"), str(program)]
    pid, master = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal, it is the foreground group
        os.chdir(tmp_path)
        os.execvpe(argv[0], argv, _env())
    output = b""
    deadline = time.time() + 180
    sent = False
    try:
        while time.time() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                output += chunk
            if not sent and b"ready" in output:
                os.write(master, b"\x03")  # Ctrl-C, as typed
                sent = True
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(master)
    text = output.decode(errors="replace")
    assert sent, text
    assert "interrupts 1" in text, text
    assert os.waitstatus_to_exitcode(status) == 7
