"""This user's dyn-inspect cache (``cache_dir()``) and the files derived from runs kept in
it: the language server's findings, the TUI's first screens and last frames, and the
recorder's kernel lines of each output code (``engine.kernel_lines``). One file per
key, written whole or not at all, the oldest dropped past a bound. Best effort throughout: a
cache that cannot be written is no cache, never an error.

Light on purpose (the standard library only): the recorder writes it inside the user's
program.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


# What this cache holds, one folder each (``folder(name)``). The files derived from a run
# (its index, the findings, the first screen) are keyed by ``derived_key``: the run's
# identity and the code that derived them, so a changed analysis or headline is never
# answered from an entry the old code wrote.
PRODUCTS = {
    "indexes": "the run indexes that readers built (inspector.index)",
    "findings": "the language server's findings of a finished run (lsp.findings_cache)",
    "first-screen": "the TUI's overview of a finished run (tui.first_screen)",
    "kernel-lines": "kernel source stacks per output code, for warm cache hits (engine.kernel_lines)",
}

# The packages whose code derives the files above (``code_fingerprint``).
_PACKAGES = ("dyn_inspect", "dyn_inspect.engine", "dyn_inspect.inspector", "dyn_inspect.lsp", "dyn_inspect.tui")
_fingerprint: bytes | None = None


def code_fingerprint() -> bytes:
    """A fingerprint of the installed dyn-inspect's code: the path, size and mtime of every
    module and template of the packages that derive cached files. An edited checkout, an
    upgrade or a reinstall changes it (never a hand-bumped number): their entries are then
    not used, and built again."""
    global _fingerprint
    if _fingerprint is None:
        import hashlib
        import importlib.util

        h = hashlib.blake2b(digest_size=16)
        for name in _PACKAGES:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            for top in (spec.submodule_search_locations or []) if spec is not None else []:
                _walk(top, h, name != "dyn_inspect")  # (dyn_inspect itself: its own modules only)
        _fingerprint = h.digest()
    return _fingerprint


def _walk(top: str, h: Any, deep: bool) -> None:
    try:
        entries = sorted(os.scandir(top), key=lambda e: e.name)
    except OSError:
        return
    for e in entries:
        if e.name.endswith((".py", ".j2")):
            try:
                st = e.stat()
            except OSError:
                continue
            h.update(f"{e.path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode("utf-8", "surrogateescape"))
        elif deep and e.name != "__pycache__" and e.is_dir(follow_symlinks=False):
            _walk(e.path, h, deep)


def derived_key(product: str, *parts: object) -> bytes:
    """The key of ``product``'s entry for ``parts`` (the run's path, its index identity, ...)
    as derived by this code (``code_fingerprint``)."""
    import hashlib

    h = hashlib.blake2b(digest_size=20)
    for part in (product, code_fingerprint().hex(), *parts):
        h.update(repr(part).encode("utf-8", "surrogateescape") + b"\0")
    return h.digest()


INDEXES = "indexes"  # (PRODUCTS)
INDEX_SUFFIX = ".dyn"
INDEX_FILE = "index.dyn"  # a run's own index, written by its recorder (``inspector.index``)
KEEP = 64  # entries kept of each kind (indexes, findings, first screens, frames): the oldest go first


def run_key(run_dir: str | os.PathLike[str]) -> bytes:
    """The key of a run's index in this cache: its real path (a run deleted and recorded again
    at the same path finds the old entry, which then no longer matches the logs and is not
    used) and the code that reads it (``derived_key``)."""
    return derived_key(INDEXES, os.path.realpath(run_dir))[:16]


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
