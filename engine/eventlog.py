"""Writing a run directory: append-only event logs plus a content-addressed blob store.

Layout (documented in docs/event-log.md)::

    .dyn-inspect/runs/<run-id>/
        launcher.jsonl           run_start / run_end, written by the parent
        p<pid>.jsonl             one log per recorded process (ranks, subprocesses)
        blobs/<ab>/<digest>      payloads (graph code, kernels, guards), stored once
    .dyn-inspect/runs/latest     symlink to the newest run

Every event is one JSON line written with a single ``os.write`` on an ``O_APPEND`` file
descriptor: a reader tailing the file sees whole lines or an unterminated tail it can
ignore, and a process killed with SIGKILL leaves every event it finished writing. A blob
is renamed into place before the event that names it is written, so a reader never
follows a reference to a missing payload. Files are 0600 and directories 0700 because the
log holds model source.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
import time
from pathlib import Path

import msgspec

from dyn_inspect.engine.schema import SCHEMA_VERSION, Blob, Event, LogHeader

RUNS_DIR_ENV = "DYN_INSPECT_RUNS_DIR"
DEFAULT_RUNS_DIR = Path(".dyn-inspect") / "runs"
LATEST = "latest"
TOOL_VERSION = "0.1.0"


def runs_root(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """Where runs live: the flag, else $DYN_INSPECT_RUNS_DIR, else ./.dyn-inspect/runs."""
    chosen = explicit or os.environ.get(RUNS_DIR_ENV)
    base = Path(chosen) if chosen else DEFAULT_RUNS_DIR
    if not base.is_absolute():
        base = (cwd or Path.cwd()) / base
    return base


def _mkdir_private(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass


def new_run_dir(root: Path) -> Path:
    """Create a fresh run directory and point ``latest`` at it."""
    _mkdir_private(root)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run = root / f"{stamp}-{secrets.token_hex(3)}"
    _mkdir_private(run)
    _mkdir_private(run / "blobs")
    point_latest(root, run)
    return run


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
    """Content-addressed payload storage shared by every process of a run."""

    def __init__(self, run_dir: Path) -> None:
        self.root = run_dir / "blobs"
        self._known: set[str] = set()

    def put(self, data: str | bytes) -> Blob:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
        if digest not in self._known:
            path = self.root / digest[:2] / digest
            if not path.exists():
                _mkdir_private(path.parent)
                tmp = path.with_name(f".{digest}.{os.getpid()}.{threading.get_ident()}")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                try:
                    _write_all(fd, raw)
                finally:
                    os.close(fd)
                os.replace(tmp, path)
            self._known.add(digest)
        return Blob(digest=digest, size=len(raw))


def blob_path(run_dir: Path, blob: Blob | str) -> Path:
    digest = blob if isinstance(blob, str) else blob.digest
    return run_dir / "blobs" / digest[:2] / digest


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class EventLog:
    """One append-only log file; thread-safe; each event is one ``os.write``."""

    def __init__(self, run_dir: Path, name: str, source: str = "live", origin: str | None = None) -> None:
        self.run_dir = run_dir
        self.path = run_dir / name
        self.blobs = BlobStore(run_dir)
        self._lock = threading.Lock()
        self._encoder = msgspec.json.Encoder()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.write(
            LogHeader(
                t=time.time(),
                schema=SCHEMA_VERSION,
                writer=f"dyn-inspect {TOOL_VERSION}",
                pid=os.getpid(),
                source=source,  # type: ignore[arg-type]
                origin=origin,
            )
        )

    def write(self, event: Event) -> None:
        line = self._encoder.encode(event) + b"\n"
        with self._lock:
            if self._fd >= 0:
                _write_all(self._fd, line)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
