"""This user's dyn-inspect cache (``cache_dir()``) and the files derived from runs kept in
it: the language server's findings, the TUI's first screens and last frames, and the
recorder's kernel lines of each output code (``engine.kernel_lines``). One file per
key, written whole or not at all, the oldest dropped past a bound. Best effort throughout: a
cache that cannot be written is no cache, never an error.

Light on purpose (the standard library only): ``tui.last_frame`` reads it before anything
else has been imported.
"""

from __future__ import annotations

import os
from pathlib import Path

KEY_ENV = "DYN_INSPECT_KEY_DIR"  # where the cache (and index.key) lives (tests point it at a temporary dir)


def cache_dir() -> Path:
    """This user's dyn-inspect cache: the index key, the language server's findings, the
    TUI's first screens."""
    env = os.environ.get(KEY_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dyn-inspect"


def folder(name: str) -> Path:
    return cache_dir() / name


INDEXES = "indexes"  # the run indexes that readers built (``inspector.index``)
INDEX_SUFFIX = ".dyn"
INDEX_FILE = "index.dyn"  # a run's own index, written by its recorder (``inspector.index``)
KEEP = 64  # entries kept of each kind (indexes, findings, first screens, frames): the oldest go first


def run_key(run_dir: str | os.PathLike[str]) -> bytes:
    """The key of a run's entries: its real path (a run deleted and recorded again at the
    same path finds the old entry, which then no longer matches the logs and is not used)."""
    import hashlib

    return hashlib.blake2b(os.fsencode(os.path.realpath(run_dir)), digest_size=16).digest()


def index_path(run_dir: str | os.PathLike[str]) -> Path:
    """Where a reader keeps the index it built of ``run_dir``: never inside the run, which
    is the recorder's (a reader writing there races ``rm -rf`` of the run)."""
    return folder(INDEXES) / f"{run_key(run_dir).hex()}{INDEX_SUFFIX}"


def write(where: Path, key: bytes, data: bytes, keep: int = KEEP, suffix: str = ".msgpack") -> bool:
    """``data`` as ``where/<key><suffix>`` (a temporary file renamed over it: a reader sees
    the old file or the new one, a full disk leaves neither half-written); then only the
    ``keep`` newest files stay. False when it could not be written."""
    import tempfile

    try:
        where.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".entry-", suffix=".tmp", dir=where)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, where / f"{key.hex()}{suffix}")
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    _prune(where, keep, suffix)
    return True


def read(where: Path, key: bytes, max_bytes: int | None = None, suffix: str = ".msgpack") -> bytes | None:
    """The file of ``key``, None when absent, unreadable or over ``max_bytes``."""
    try:
        with open(where / f"{key.hex()}{suffix}", "rb") as f:
            data = f.read() if max_bytes is None else f.read(max_bytes + 1)
    except OSError:
        return None
    return None if max_bytes is not None and len(data) > max_bytes else data


def drop(where: Path, key: bytes) -> None:
    try:
        (where / f"{key.hex()}.msgpack").unlink()
    except OSError:
        pass


def _prune(where: Path, keep: int, suffix: str) -> None:
    def age(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0  # (gone meanwhile: another process pruned it)

    for old in sorted(where.glob(f"*{suffix}"), key=age)[:-keep]:
        try:
            old.unlink()
        except OSError:
            pass
