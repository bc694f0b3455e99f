"""Writing a run directory: append-only event logs plus a content-addressed blob store.

Layout (documented in docs/event-log.md)::

    .dyn-inspect/runs/<run-id>/
        launcher.jsonl           run_start / run_end, written by the parent
        p<pid>.jsonl             one log per recorded process (ranks, subprocesses);
                                 n<node>-p<pid>.jsonl in a multi-node torchrun job
        blobs/<ab>/<digest>      payloads (graph code, kernels, guards), stored once
    .dyn-inspect/runs/latest     symlink to the newest run

Every event is one JSON line written with a single ``os.write`` on an ``O_APPEND`` file
descriptor: a reader tailing the file sees whole lines or an unterminated tail it can
ignore, and a process killed with SIGKILL leaves every event it finished writing. A blob
is renamed into place before the event that names it is written, so a reader never
follows a reference to a missing payload. Files are 0600 and directories 0700 because the
log holds model source.

The recorder runs inside the user's program, so its I/O must never change what the program
does (docs/security.md): before every write the log's descriptor is checked to still be
our file (a program that runs ``os.closerange`` and opens its own file gets the same
number back), and reopened by path with ``O_APPEND`` when it is not; a write that fails
(disk full, quota, a removed run directory) is undone (no torn line), stops recording in
that process and says so in one line on stderr; blobs half-written are removed.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import shutil
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import msgspec

from dyn_inspect.engine.schema import SCHEMA_VERSION, Blob, Event, LogHeader

RUNS_DIR_ENV = "DYN_INSPECT_RUNS_DIR"
DEFAULT_RUNS_DIR = Path(".dyn-inspect") / "runs"
LATEST = "latest"
TOOL_VERSION = "0.1.0"
# BlobStore digests: blake2b with 16 bytes, as hex. Readers accept nothing else as a name.
DIGEST_RE = re.compile(r"[0-9a-f]{32}")
# Set by the launcher: "fd:dev:ino" of a pipe on which a recording process says why it
# stopped; the launcher prints one line after the program, not one per process.
NOTICE_FD_ENV = "DYN_INSPECT_NOTICE_FD"
# Set by a node's launcher that shares its run with other nodes (host-launcher pid): the
# processes that are no torchrun worker name their logs by it (pids of machines clash).
NODE_TAG_ENV = "DYN_INSPECT_NODE_TAG"
_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_notice_lock = threading.Lock()
_noticed_pid: int | None = None


class RecordingUnavailable(Exception):
    """The runs directory cannot hold a new run (read-only, not a directory, full): one line."""


def describe_error(exc: OSError) -> str:
    """``disk full (No space left on device: p123.jsonl)`` and the like, for one line."""
    name = os.path.basename(str(exc.filename)) if exc.filename else ""
    detail = (exc.strerror or str(exc)) + (f": {name}" if name else "")
    if exc.errno in _NO_SPACE:
        return f"disk full ({detail})"
    if exc.errno == errno.ENOENT:
        return f"the run directory was deleted ({detail})"
    return f"cannot write the run ({detail})"


def _notice_pipe_ok(fd: int, dev: int, ino: int) -> bool:
    try:
        st = os.fstat(fd)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (dev, ino)


def tell_recording_stopped(exc: OSError) -> None:
    """Say once per process (and once per launched run, via the launcher's pipe) that
    recording stopped. Never raises: the user's program goes on."""
    global _noticed_pid
    with _notice_lock:
        if _noticed_pid == os.getpid():
            return
        _noticed_pid = os.getpid()
    tell_launcher(describe_error(exc))


def tell_launcher(reason: str) -> None:
    """Hand ``reason`` to the launcher's pipe (it prints ``dyn-inspect: recording stopped:
    <reason>`` once, after the program), else print that line here. Never raises."""
    spec = os.environ.get(NOTICE_FD_ENV, "")
    try:
        fd, dev, ino = (int(x) for x in spec.split(":"))
    except ValueError:
        fd = -1
    if fd >= 0 and _notice_pipe_ok(fd, dev, ino):
        line = reason.replace("\n", " ").encode("utf-8", "replace")[:500] + b"\n"  # < PIPE_BUF: atomic
        try:
            if os.write(fd, line) == len(line):
                return  # the launcher prints the line once, after the program ends
        except OSError:
            pass
    try:
        sys.stderr.write(f"dyn-inspect: recording stopped: {reason}\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - a closed stderr is the program's business
        pass


def runs_root(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """Where runs live: the flag, else $DYN_INSPECT_RUNS_DIR, else ./.dyn-inspect/runs."""
    chosen = explicit or os.environ.get(RUNS_DIR_ENV)
    base = Path(chosen) if chosen else DEFAULT_RUNS_DIR
    if not base.is_absolute():
        base = (cwd or Path.cwd()) / base
    return base


def _mkdir_private(path: Path) -> None:
    """``mkdir -p`` where every directory it creates (``.dyn-inspect`` too, not only the
    leaf) is 0700 whatever the umask; the leaf is made 0700 even if it existed."""
    missing: list[Path] = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            continue  # created meanwhile (another rank)
        try:
            os.chmod(d, 0o700)
        except OSError:
            pass
    if not path.is_dir():
        path.mkdir(exist_ok=True)  # raises the error that says why not (a file in the way)
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass


def process_log_name(pid: int, env: Mapping[str, str] | None = None) -> str:
    """The log a process writes: ``p<pid>.jsonl``, or ``n<node>-p<pid>.jsonl`` in a torchrun
    job of several nodes (``GROUP_WORLD_SIZE`` > 1), whose nodes may share a disk and a pid;
    ``h<host>-<launcher pid>-p<pid>.jsonl`` for another process of such a node."""
    env = os.environ if env is None else env
    node, nodes = env.get("GROUP_RANK", ""), env.get("GROUP_WORLD_SIZE", "")
    if node.isdigit() and nodes.isdigit() and int(nodes) > 1:
        return f"n{int(node)}-p{pid}.jsonl"
    tag = env.get(NODE_TAG_ENV, "")
    if tag and all(c.isalnum() or c in "-._" for c in tag):
        return f"h{tag}-p{pid}.jsonl"  # a node's process outside the workers (the torchrun agent)
    return f"p{pid}.jsonl"


def new_run_dir(root: Path, point: bool = True) -> Path:
    """Create a fresh run directory and (``point``) repoint ``latest`` at it. Raises
    ``RecordingUnavailable`` when ``root`` cannot hold it; nothing is left behind then."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run = root / f"{stamp}-{secrets.token_hex(3)}"
    try:
        _mkdir_private(root)
        run.mkdir(mode=0o700)
    except OSError as exc:
        raise RecordingUnavailable(f"cannot create a run in {root}: {exc.strerror or exc}") from None
    try:
        _mkdir_private(run / "blobs")
    except OSError as exc:
        remove_run_dir(run)
        raise RecordingUnavailable(f"cannot create a run in {root}: {exc.strerror or exc}") from None
    if point:
        point_latest(root, run)
    return run


def remove_run_dir(run: Path) -> None:
    """Take back a run directory this process created and could not complete."""
    shutil.rmtree(run, ignore_errors=True)


def point_latest(root: Path, run: Path) -> None:
    """Atomically repoint ``root/latest`` (a relative symlink) at ``run``."""
    tmp = root / f".latest-{os.getpid()}-{secrets.token_hex(2)}"
    try:
        os.symlink(run.name, tmp)
        os.replace(tmp, root / LATEST)
    except OSError:
        # Filesystems without symlinks: readers fall back to the newest directory name.
        tmp.unlink(missing_ok=True)


class BlobStore:
    """Content-addressed payload storage shared by every process of a run.

    ``on_error`` (set by ``EventLog``): called with a write failure instead of raising;
    after it, ``stopped()`` is true and payloads are hashed but no longer written (the
    events that would name them are not written either)."""

    def __init__(
        self,
        run_dir: Path,
        on_error: Callable[[OSError], None] | None = None,
        stopped: Callable[[], bool] | None = None,
    ) -> None:
        self.root = run_dir / "blobs"
        self._known: set[str] = set()
        self._on_error = on_error
        self._stopped = stopped or (lambda: False)

    def put(self, data: str | bytes) -> Blob:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
        if digest not in self._known and not self._stopped():
            path = self.root / digest[:2] / digest
            tmp = path.with_name(f".{digest}.{os.getpid()}.{threading.get_ident()}")
            try:
                if not path.exists():
                    _mkdir_fanout(path.parent)
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
                    try:
                        _write_all(fd, raw)
                    finally:
                        os.close(fd)
                    os.replace(tmp, path)
                self._known.add(digest)
            except OSError as exc:
                try:
                    os.unlink(tmp)  # a full disk must not keep our half-written temp files
                except OSError:
                    pass
                if self._on_error is None:
                    raise
                self._on_error(exc)
        return Blob(digest=digest, size=len(raw))


def _mkdir_fanout(path: Path) -> None:
    """Create ``blobs/<ab>`` with a plain ``mkdir`` (the parents are made only at the run's
    start): a run deleted while it records (``rm -rf .dyn-inspect``) is never re-created —
    ``mkdir -p`` made ``rm`` fail "Directory not empty" — the ENOENT stops recording."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        return  # (another process of the run made it)
    try:
        os.chmod(path, 0o700)  # whatever the umask
    except OSError:
        pass


def valid_digest(digest: object) -> bool:
    """A digest is a file name under ``blobs/``: only the store's own form is one."""
    return isinstance(digest, str) and DIGEST_RE.fullmatch(digest) is not None


def blob_path(run_dir: Path, blob: Blob | str) -> Path:
    """Where a payload lives. A digest that is not the store's own form (``/dev/zero``,
    ``../../x``) names no file: the path returned is one that cannot exist."""
    digest = blob if isinstance(blob, str) else blob.digest
    if not valid_digest(digest):
        return run_dir / "blobs" / "invalid-digest" / "-"
    return run_dir / "blobs" / digest[:2] / digest


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class EventLog:
    """One append-only log file; thread-safe; each event is one ``os.write``.

    ``strict`` (the launcher, the importer): write failures raise. Otherwise (inside the
    user's program) the first failure stops this log, removes a partial line and says so
    once on stderr; later writes do nothing.
    """

    def __init__(self, run_dir: Path, name: str, source: str = "live", origin: str | None = None, strict: bool = False) -> None:
        self.run_dir = run_dir
        self.path = run_dir / name
        self.strict = strict
        self.stopped: OSError | None = None
        self.blobs = BlobStore(run_dir, None if strict else self._stop, lambda: self.stopped is not None)
        self._lock = threading.Lock()
        self._encoder = msgspec.json.Encoder()
        self._fd = -1
        self._ident = (0, 0)
        header = LogHeader(
            t=time.time(),
            schema=SCHEMA_VERSION,
            writer=f"dyn-inspect {TOOL_VERSION}",
            pid=os.getpid(),
            source=source,  # type: ignore[arg-type]
            origin=origin,
        )
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
            st = os.fstat(self._fd)
            self._ident = (st.st_dev, st.st_ino)
            self._append(self._encoder.encode(header) + b"\n")
        except OSError as exc:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
                try:
                    if os.stat(self.path).st_size == 0:
                        os.unlink(self.path)  # a log without its header is no log
                except OSError:
                    pass
            if strict:
                raise
            self._stop(exc)

    def _verified_fd(self) -> tuple[int, int]:
        """(our descriptor, the file's size now), after checking that the descriptor
        still is our file. The program may have closed it and opened one of its own under
        the same number: then we reopen our file by path and never touch that number."""
        try:
            st = os.fstat(self._fd)
            if (st.st_dev, st.st_ino) == self._ident:
                if st.st_nlink == 0:
                    # Removed (``rm -rf`` of the run): writing on would fill a file nobody
                    # can read, and say nothing. Stop, and say why.
                    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(self.path))
                return self._fd, st.st_size
        except FileNotFoundError:
            raise
        except OSError:
            pass
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)  # no O_CREAT: gone means stop
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != self._ident:
            os.close(fd)
            raise OSError(errno.ESTALE, "the log file was replaced", str(self.path))
        self._fd = fd
        return fd, st.st_size

    def _append(self, line: bytes) -> None:
        fd, size = self._verified_fd()
        try:
            _write_all(fd, line)
        except OSError as exc:
            try:
                os.ftruncate(fd, size)  # take back a partial line: readers see whole events
            except OSError:
                pass
            if exc.filename is None:
                exc.filename = str(self.path)
            raise

    def _stop(self, exc: OSError) -> None:
        if self.stopped is None:
            self.stopped = exc
            tell_recording_stopped(exc)

    def write(self, event: Event) -> None:
        line = self._encoder.encode(event) + b"\n"
        with self._lock:
            if self._fd < 0 or self.stopped is not None:
                return
            try:
                self._append(line)
            except OSError as exc:
                if self.strict:
                    raise
                self._stop(exc)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                try:
                    st = os.fstat(self._fd)
                    if (st.st_dev, st.st_ino) == self._ident:
                        os.close(self._fd)  # only a descriptor that is still ours
                except OSError:
                    pass
                self._fd = -1

    def forget(self) -> None:
        """In a forked child: drop the parent's log without writing to it (the descriptor
        is shared with the parent; closing our copy is harmless when it is still ours)."""
        self._lock = threading.Lock()
        self.close()
