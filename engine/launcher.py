"""Running the user's program in a child process that records itself.

The child is started exactly as the user would start it (``python train.py args``,
``python -m pkg``, or any command such as ``torchrun``), so ``sys.argv``, ``__main__``,
stdin/stdout/stderr and the exit code behave as without us. What differs is the
environment: the startup hook directory on ``PYTHONPATH`` and the run directory.
The parent writes ``launcher.jsonl`` (run_start / run_end with the child's exit code).

Ranks: ``dyn-inspect run -- torchrun ...`` needs nothing special (every worker inherits
the environment and logs itself, tagged with RANK/LOCAL_RANK/WORLD_SIZE). With
``torchrun --no-python dyn-inspect train.py`` each worker is a launcher of its own: the
workers of one torchrun agent attempt join one run directory (``join_group_run``), and a
launcher started inside a recorded run (``DYN_INSPECT_RUN_DIR`` set) records into that
run. Joined launchers write no ``launcher.jsonl``: the run's status then comes from the
rank processes' own ends.

Faults (docs/security.md): a runs directory that cannot hold a run (read-only, a file,
full) is refused in one line before the program starts, with nothing left behind and
``latest`` unchanged. Once the program runs, recording faults never change its exit code:
a write that fails stops recording, and the user reads one line
(``dyn-inspect: recording stopped: disk full (...)``) after the program ends; the
recording processes report theirs through a pipe to the launcher, which says it once.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from dyn_inspect.engine import kernel_meta, recorder, tracehook
from dyn_inspect.engine.eventlog import (
    NODE_TAG_ENV,
    NOTICE_FD_ENV,
    TOOL_VERSION,
    EventLog,
    RecordingUnavailable,
    _mkdir_private,
    describe_error,
    new_run_dir,
    point_latest,
    process_log_name,
    remove_run_dir,
    runs_root,
)
from dyn_inspect.engine.schema import ProcessEnd, RunEnd, RunStart
from dyn_inspect.engine.stderr_tail import TAIL_ENV

BOOTSTRAP_DIR = Path(__file__).resolve().parent / "bootstrap"

Mode = Literal["script", "module", "command"]


@dataclass
class LaunchSpec:
    command: list[str]
    mode: Mode
    runs_dir: str | None = None
    compile_disabled: bool = False
    provenance: bool = True
    profile_kernels: int = 0  # N steady-state steps to profile per kernel (engine/profiler.py)
    all_graphs: bool = False  # also the graphs before Inductor's passes (engine/tracehook.py)
    kernel_ir: bool = False  # keep each Triton kernel's IR stages (engine/kernel_meta.py)
    extra_env: dict[str, str] = field(default_factory=dict)


def child_command(target: str, args: list[str], mode: Mode) -> list[str]:
    if mode == "script":
        return [sys.executable, target, *args]
    if mode == "module":
        return [sys.executable, "-m", target, *args]
    return [target, *args]


def child_env(run_dir: Path, spec: LaunchSpec) -> dict[str, str]:
    env = dict(os.environ)
    env.update(spec.extra_env)
    existing = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(BOOTSTRAP_DIR) + (os.pathsep + existing if existing else "")
    env[recorder.RUN_DIR_ENV] = str(run_dir)
    env[recorder.LAUNCHER_PID_ENV] = str(os.getpid())
    if spec.compile_disabled:
        env["TORCHDYNAMO_DISABLE"] = "1"  # torch's own switch: every torch.compile runs eagerly
        env[recorder.DISABLE_ENV] = "1"
    if not spec.provenance:
        env[recorder.PROVENANCE_ENV] = "0"
    if spec.all_graphs:
        env[tracehook.ALL_GRAPHS_ENV] = "1"
    if spec.kernel_ir:
        env[kernel_meta.IR_ENV] = "1"
    else:
        env.pop(kernel_meta.IR_ENV, None)
    if spec.profile_kernels > 0:
        env["DYN_INSPECT_PROFILE_KERNELS"] = str(spec.profile_kernels)
    else:
        env.pop("DYN_INSPECT_PROFILE_KERNELS", None)
    return env


GROUP_CLAIM_PREFIX = ".group-"
_STALE_CLAIM_S = 24 * 3600
# How long after a group's first worker started the others may still join its run. All
# workers of one attempt start within seconds of each other (torchrun starts every node's
# workers once the rendezvous completes); a later job with the same key is a new run.
JOIN_WINDOW_S = 300.0


def torchrun_group_key() -> str | None:
    """What the workers of one torchrun attempt share, or None outside torchrun.

    One node (``GROUP_WORLD_SIZE`` 1): the agent's per-attempt directory of error files
    (unique, random), else run id + agent pid + restart count, hashed with the host name.
    Several nodes: what every node's workers see alike — the job's rendezvous id
    (``TORCHELASTIC_RUN_ID``) and the address rank 0's store serves
    (``MASTER_ADDR:MASTER_PORT``), no host name: nodes on one shared disk make one run."""
    env = os.environ
    if "TORCHELASTIC_RUN_ID" not in env or "LOCAL_RANK" not in env:
        return None
    nodes = env.get("GROUP_WORLD_SIZE", "1")
    if nodes.isdigit() and int(nodes) > 1:
        raw = "\0".join(
            ["job", env["TORCHELASTIC_RUN_ID"], env.get("MASTER_ADDR", ""), env.get("MASTER_PORT", ""), nodes, env.get("WORLD_SIZE", "")]
        ).encode()
        return hashlib.blake2b(raw, digest_size=8).hexdigest()
    error_file = env.get("TORCHELASTIC_ERROR_FILE")
    if error_file:
        attempt = os.path.dirname(os.path.dirname(error_file))  # .../<run>_<rand>/attempt_N
    else:
        attempt = f"{env['TORCHELASTIC_RUN_ID']}:{os.getppid()}:{env.get('TORCHELASTIC_RESTART_COUNT', '0')}"
    raw = f"{socket.gethostname()}\0{attempt}".encode()
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def join_group_run(root: Path, key: str) -> tuple[Path, bool]:
    """(the run directory of group ``key``, whether this process created it).

    The first worker names it by an atomic symlink ``root/.group-<key>-<k>`` → run name;
    the others follow the link. A claim older than ``JOIN_WINDOW_S`` belongs to an earlier
    job with the same key (the same rendezvous id and port): it is left alone and the
    next ``k`` is claimed (never renamed or removed, so two workers racing past a stale
    claim still meet on one run). Other groups' claims older than a day are swept."""
    _mkdir_private(root)
    name = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    created = False
    for k in range(10_000):
        claim = root / f"{GROUP_CLAIM_PREFIX}{key}-{k}"
        try:
            os.symlink(name, claim)
            created = True
            break
        except FileExistsError:
            try:
                if time.time() - claim.lstat().st_mtime > JOIN_WINDOW_S:
                    continue
                name = os.readlink(claim)
            except FileNotFoundError:
                continue
            break
    run = root / name
    run.mkdir(exist_ok=True, mode=0o700)  # 0700 like new_run_dir: the logs hold model source
    (run / "blobs").mkdir(exist_ok=True, mode=0o700)
    if created:
        point_latest(root, run)
        now = time.time()
        for old in root.glob(f"{GROUP_CLAIM_PREFIX}*"):
            if old.name.startswith(f"{GROUP_CLAIM_PREFIX}{key}-"):
                continue  # our own chain: a peer may be walking it right now
            try:
                if now - old.lstat().st_mtime > _STALE_CLAIM_S:
                    old.unlink()
            except OSError:
                pass
    return run, created


_TORCHRUN_VALUE_FLAGS = {"nnodes", "node_rank", "rdzv_id", "rdzv_endpoint", "master_addr", "master_port"}


def torchrun_options(command: list[str]) -> dict[str, str] | None:
    """torchrun's own options in ``command`` (``torchrun ...``, ``python -m torch.distributed.run
    ...``), ``-``/``_`` spellings alike; None when the command is not torchrun."""
    words = list(command)
    if words and os.path.basename(words[0]) == "torchrun":
        rest = words[1:]
    elif "-m" in words[:3] and words[words.index("-m") + 1 : words.index("-m") + 2] in (
        ["torch.distributed.run"],
        ["torch.distributed.launch"],
    ):
        rest = words[words.index("-m") + 2 :]
    else:
        return None
    opts: dict[str, str] = {}
    i = 0
    while i < len(rest):
        word = rest[i]
        if not word.startswith("--"):
            break  # the training script: its own arguments follow
        name, eq, value = word[2:].partition("=")
        name = name.replace("-", "_")
        if name in _TORCHRUN_VALUE_FLAGS:
            if not eq:
                i += 1
                value = rest[i] if i < len(rest) else ""
            opts[name] = value
        elif (
            not eq
            and name not in ("standalone", "no_python", "run_path", "module", "virtual_local_rank")
            and i + 1 < len(rest)
            and not rest[i + 1].startswith("-")
        ):
            i += 1  # an option with a value we do not need
        i += 1
    return opts


def multinode_launch_key(command: list[str]) -> str | None:
    """``dyn-inspect run -- torchrun --nnodes 2 ...`` on each node of a shared disk: what the
    nodes' commands share (the rendezvous id and endpoint, or the static master address),
    so that their launchers record into one run. None for one node or a non-torchrun command."""
    opts = torchrun_options(command)
    if opts is None:
        return None
    nnodes = opts.get("nnodes", "1").split(":")[-1]
    if not nnodes.isdigit() or int(nnodes) < 2:
        return None
    where = opts.get("rdzv_endpoint") or f"{opts.get('master_addr', '')}:{opts.get('master_port', '')}"
    raw = "\0".join(["launch", opts.get("rdzv_id", "none"), where, nnodes]).encode()
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def _node_tag() -> str:
    host = "".join(c if c.isalnum() or c in "-." else "_" for c in socket.gethostname())[:64] or "host"
    return f"{host}-{os.getpid()}"


def launcher_log_name(multinode: bool) -> str:
    """``launcher.jsonl``; on a node of a shared-disk multi-node run one per node launcher
    (``launcher-<host>-<pid>.jsonl``: inspector/ranks.py finds its node through it)."""
    return f"launcher-{_node_tag()}.jsonl" if multinode else "launcher.jsonl"


def joined_run_dir(spec: LaunchSpec) -> Path | None:
    """The run this launcher records into instead of starting one: the enclosing recorded
    run (we are inside ``dyn-inspect run``), or the run shared by the torchrun workers."""
    enclosing = os.environ.get(recorder.RUN_DIR_ENV)
    if enclosing and Path(enclosing).is_dir():
        return Path(enclosing)
    key = torchrun_group_key()
    if key is None:
        return None
    return join_group_run(runs_root(spec.runs_dir), key)[0]


class Launch:
    """A started run: the run directory, the launcher log and (once started) the child.

    Raises ``RecordingUnavailable`` (one line for the user) when the run cannot be
    created; nothing is left behind and ``latest`` does not move."""

    def __init__(self, spec: LaunchSpec) -> None:
        self.spec = spec
        try:
            joined = joined_run_dir(spec)
        except OSError as exc:
            raise RecordingUnavailable(f"cannot join the run in {runs_root(spec.runs_dir)}: {exc.strerror or exc}") from None
        self.joined = joined is not None
        self.node_tag: str | None = None  # set when this node shares its run with other nodes
        self.started = time.time()
        self.process: subprocess.Popen[bytes] | None = None
        self.notice: str | None = None  # "recording stopped: ..." once the run ended, if it did
        self.process_env: dict[str, str] = {}  # the child's environment (names its log)
        self._notice_read = -1
        self.log: EventLog | None = None  # ours (launcher.jsonl); None when we joined a run
        if joined is not None:
            self.run_dir = joined
            return
        root = runs_root(spec.runs_dir)
        shared_key = multinode_launch_key(spec.command) if spec.mode == "command" else None
        if shared_key is not None:
            self.node_tag = _node_tag()
            try:
                self.run_dir, created = join_group_run(root, shared_key)
            except OSError as exc:
                raise RecordingUnavailable(f"cannot record into {root}: {exc.strerror or exc}") from None
        else:
            self.run_dir, created = new_run_dir(root, point=False), True
        try:
            self.log = log = EventLog(self.run_dir, launcher_log_name(shared_key is not None), strict=True)
            log.write(
                RunStart(
                    t=self.started,
                    command=spec.command,
                    cwd=os.getcwd(),
                    mode=spec.mode,
                    tool_version=TOOL_VERSION,
                    compile_disabled=spec.compile_disabled,
                    profile_steps=spec.profile_kernels,
                    kernel_ir=spec.kernel_ir,
                )
            )
        except OSError as exc:
            if created:
                remove_run_dir(self.run_dir)
            raise RecordingUnavailable(f"cannot record into {root}: {describe_error(exc)}") from None
        # Only a run that could start is ``latest`` (editors follow it from here on).
        if created:
            point_latest(root, self.run_dir)

    def start(self, **popen_kwargs: Any) -> subprocess.Popen[bytes]:
        env = self.process_env = child_env(self.run_dir, self.spec)
        if self.node_tag is not None:
            env[NODE_TAG_ENV] = self.node_tag
        read, write = os.pipe()
        os.set_blocking(read, False)
        st = os.fstat(write)
        env[NOTICE_FD_ENV] = f"{write}:{st.st_dev}:{st.st_ino}"
        pass_fds = tuple(popen_kwargs.pop("pass_fds", ()) or ()) + (write,)
        try:
            self.process = subprocess.Popen(  # noqa: S603 - the user's own command
                self.spec.command, env=env, pass_fds=pass_fds, **popen_kwargs
            )
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)
        self._notice_read = read
        return self.process

    def _child_notices(self) -> list[str]:
        """What the recording processes said through the pipe (each: why it stopped)."""
        if self._notice_read < 0:
            return []
        chunks: list[bytes] = []
        try:
            while True:
                chunk = os.read(self._notice_read, 65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except OSError:
            pass  # EAGAIN: a forked grandchild still holds the pipe
        os.close(self._notice_read)
        self._notice_read = -1
        return [m for m in b"".join(chunks).decode("utf-8", "replace").split("\n") if m]

    def finish(self, returncode: int) -> int:
        sig = -returncode if returncode < 0 else None
        exit_code = 128 + sig if sig else returncode
        own: OSError | None = None
        if self.log is not None:
            try:
                self.log.write(RunEnd(exit_code=exit_code, signal=sig, duration_s=time.time() - self.started))
            except OSError as exc:
                own = exc  # the program's exit code still wins
            self.log.close()
        elif sig and self.process is not None:
            self._end_killed_child(exit_code)
        notices = self._child_notices()
        reason = notices[0] if notices else (describe_error(own) if own is not None else None)
        if reason is not None and self.notice is None:
            self.notice = f"dyn-inspect: recording stopped: {reason}"
        return exit_code

    def _end_killed_child(self, exit_code: int) -> None:
        """Joined run, child killed by a signal (torchrun SIGTERMs the other ranks when one
        fails): it wrote no process_end and there is no run_end to say so — write its end."""
        assert self.process is not None
        path = self.run_dir / process_log_name(self.process.pid, self.process_env)
        try:
            with open(path, "rb") as f:
                f.seek(max(f.seek(0, os.SEEK_END) - 4096, 0))
                tail = f.read()
            if b'"kind":"process_end"' in tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]:
                return
            end = ProcessEnd(t=time.time(), duration_s=time.time() - self.started, exit_code=exit_code)
            line = msgspec.json.encode(end) + b"\n"
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, line if tail.endswith(b"\n") or not tail else b"\n" + line)
            finally:
                os.close(fd)
        except OSError:
            pass  # no log: the child never imported torch


# The signals python would receive that would end the launcher (or that the program may
# handle: a checkpoint on SIGUSR1, a reload on SIGHUP) while the program runs on: every
# default-terminating one another process may send (systemd's watchdog SIGABRT, a batch
# system's SIGXCPU, real-time signals), not only the common ones — any other killed the
# launcher alone and orphaned the program without run_end. Job control (TSTP, TTIN, TTOU,
# CONT) keeps its default: the launcher and the program share one process group, so Ctrl-Z,
# fg and bg stop and continue both. The faults (SEGV, BUS, FPE, ILL, TRAP, SYS) are a
# process's own and keep theirs (a handler of ours would loop on a real fault). SIGPIPE and
# SIGXFSZ are python's ignored signals (our own writes raise instead); SIGCHLD is ours.
# docs/security.md, "Signals".
FORWARDED_SIGNALS: tuple[int, ...] = tuple(
    getattr(signal, name)
    for name in (
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGTERM",
        "SIGUSR1",
        "SIGUSR2",
        "SIGALRM",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGPWR",
        "SIGABRT",
        "SIGXCPU",
        "SIGIO",
        "SIGSTKFLT",
    )
    if hasattr(signal, name)
) + tuple(n for n in range(getattr(signal, "SIGRTMIN", 0), getattr(signal, "SIGRTMAX", -1) + 1) if n in signal.valid_signals())


def _descends_from(pid: int, ancestor: int) -> bool:
    """Whether ``pid`` is ``ancestor`` or one of its descendants (``/proc``; False when unknown)."""
    for _ in range(64):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            pid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


def should_forward(info: Any, child: int) -> bool:
    """A signal that reached the launcher goes on to the program unless the program got it
    already: sent by the kernel (si_code > 0: a terminal's Ctrl-C, Ctrl-\\, resize or hangup
    reaches the whole foreground group, the program included), or sent by the program or one
    of its processes (``os.killpg(0, ...)`` signalled the group, the program included)."""
    if info.si_code > 0:
        return False
    sender = info.si_pid
    return not (sender == os.getpid() or (sender > 0 and _descends_from(sender, child)))


class _EarlySignals:
    """Notes the forwarded signals that arrive while the program is being started, before
    ``_wait_forwarding`` blocks them: one sent by then (``kill`` right after the program
    wrote its first file, a supervisor's SIGTERM during the fork) reached python's default
    action in the launcher alone, which died of it (or raised KeyboardInterrupt) and left
    the program running orphaned. A signal python ignores here (``nohup``'s SIGHUP) is left
    alone, so the program inherits it ignored as it would from python."""

    def __init__(self) -> None:
        self.pending: list[int] = []
        self.previous: dict[int, Any] = {}
        for sig in FORWARDED_SIGNALS:
            try:
                current = signal.getsignal(sig)
                if current is signal.SIG_IGN or current is None:  # None: a handler not set from python
                    continue
                self.previous[sig] = signal.signal(sig, self._note)
            except (OSError, ValueError):
                pass

    def _note(self, signum: int, _frame: object) -> None:
        self.pending.append(signum)

    def restore(self) -> None:
        for sig, handler in self.previous.items():
            try:
                signal.signal(sig, handler)
            except (OSError, ValueError, TypeError):
                pass
        self.previous.clear()


def _wait_forwarding(process: subprocess.Popen[bytes], early: _EarlySignals) -> int:
    """Wait for the child, forwarding ``FORWARDED_SIGNALS`` as ``should_forward`` says. They
    stay blocked when the child has ended, so that the launcher writes ``run_end`` whatever
    arrives then (``end_like`` unblocks them). Those ``early`` noted while the child was
    being started are forwarded first (no sender is known for them: while the child did not
    exist yet, nothing else could have delivered them to it)."""
    watched = {*FORWARDED_SIGNALS, signal.SIGCHLD}
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    early.restore()  # (blocked now: whatever arrives from here waits for sigtimedwait)
    for signum in early.pending:
        try:
            process.send_signal(signum)
        except OSError:
            pass
    early.pending.clear()
    while True:
        returncode = process.poll()
        if returncode is not None:
            return returncode
        info = signal.sigtimedwait(watched, 1.0)
        if info is None or info.si_signo == signal.SIGCHLD:
            continue
        if should_forward(info, process.pid):
            try:
                process.send_signal(info.si_signo)
            except OSError:
                pass


_CORE_SIGNALS = {
    getattr(signal, n)
    for n in ("SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE", "SIGSEGV", "SIGSYS", "SIGXCPU", "SIGXFSZ")
    if hasattr(signal, n)
}


def end_like(exit_code: int, sig: int | None) -> int:
    """End as the program ended: killed by ``sig`` (so that a shell loop stopped by Ctrl-C
    stops, and a supervisor sees the signal), else return ``exit_code`` to exit with."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(FORWARDED_SIGNALS) | {signal.SIGCHLD})
    if not sig:
        return exit_code
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    try:
        if sig in _CORE_SIGNALS:
            import resource

            # The program's core (if any) is the one that matters, not the launcher's.
            resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        if sig != signal.SIGKILL:  # (always its default: setting it raises, and the exit was 137)
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
    except (OSError, ValueError):
        pass
    return exit_code  # a signal that does not end a process (none should reach here)


def _keep_closed_std_fds_closed() -> None:
    """A standard descriptor we were started without (``2>&-``: python's ``sys.stderr`` is
    None) stays closed in the program, and none of our files takes its number (our log
    opened as descriptor 2 got the program's stderr): /dev/null holds it, closed at exec."""
    for fd, stream in enumerate((sys.__stdin__, sys.__stdout__, sys.__stderr__)):
        if stream is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd, inheritable=False)
                os.close(null)
        os.set_inheritable(fd, False)  # whatever holds it now is ours, not the program's


def run_foreground(spec: LaunchSpec) -> tuple[Path, int, int | None]:
    """Run with the terminal shared (no TUI): the program gets our stdin, stdout and stderr
    themselves (the very descriptors python would give it: no relay, so the order of its
    stdout and stderr lines, ``isatty`` and a background child's stderr stay its own), and
    Ctrl-C reaches it, not us. Returns (run directory, exit code, killing signal or None);
    the caller ends through ``end_like``. Raises ``RecordingUnavailable`` before starting
    anything when the run cannot be recorded."""
    # The uncaught exception's traceback is kept in the run by the program itself
    # (engine/bootstrap/sitecustomize.py, engine/stderr_tail.py).
    spec.extra_env[TAIL_ENV] = "1"
    _keep_closed_std_fds_closed()
    launch = Launch(spec)
    early = _EarlySignals() if hasattr(signal, "sigtimedwait") else None
    try:
        process = launch.start()
    except BaseException as exc:
        if early is not None:
            early.restore()
        if not isinstance(exc, OSError):
            raise
        launch.finish(127)
        raise FileNotFoundError(f"cannot start {spec.command[0]}: {exc.strerror}") from exc
    if early is not None:
        returncode = _wait_forwarding(process, early)
    else:  # no POSIX signal waiting: the plain way (Ctrl-C reaches the child by itself)
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        forward = lambda signum, _frame: process.send_signal(signum)  # noqa: E731
        previous_term = signal.signal(signal.SIGTERM, forward)
        try:
            returncode = process.wait()
        finally:
            signal.signal(signal.SIGINT, previous)
            signal.signal(signal.SIGTERM, previous_term)
    exit_code = launch.finish(returncode)
    if launch.notice and sys.stderr is not None:
        print(launch.notice, file=sys.stderr, flush=True)
    return launch.run_dir, exit_code, (-returncode if returncode < 0 else None)
