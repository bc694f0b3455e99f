"""Files derived from runs, kept in this user's cache (``index.cache_dir()``): the language
server's findings and the TUI's first screens. One file per key, written whole or not at
all, the oldest dropped past a bound. Best effort throughout: a cache that cannot be
written is no cache, never an error."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from dyn_inspect.inspector.index import cache_dir


def folder(name: str) -> Path:
    return cache_dir() / name


def write(where: Path, key: bytes, data: bytes, keep: int) -> bool:
    """``data`` as ``where/<key>.msgpack`` (a temporary file renamed over it: a reader sees
    the old file or the new one, a full disk leaves neither half-written); then only the
    ``keep`` newest files stay. False when it could not be written."""
    try:
        where.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".entry-", suffix=".tmp", dir=where)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, where / f"{key.hex()}.msgpack")
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    _prune(where, keep)
    return True


def read(where: Path, key: bytes, max_bytes: int | None = None) -> bytes | None:
    """The file of ``key``, None when absent, unreadable or over ``max_bytes``."""
    try:
        with open(where / f"{key.hex()}.msgpack", "rb") as f:
            data = f.read() if max_bytes is None else f.read(max_bytes + 1)
    except OSError:
        return None
    return None if max_bytes is not None and len(data) > max_bytes else data


def drop(where: Path, key: bytes) -> None:
    try:
        (where / f"{key.hex()}.msgpack").unlink()
    except OSError:
        pass


def _prune(where: Path, keep: int) -> None:
    def age(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0  # (gone meanwhile: another process pruned it)

    for old in sorted(where.glob("*.msgpack"), key=age)[:-keep]:
        try:
            old.unlink()
        except OSError:
            pass
