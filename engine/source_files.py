"""The one way to read a source file that a run names: regular Python files under an
allowed root, bounded in size, never ``/proc``, ``/sys`` or ``/dev``.

A run directory is untrusted input (a colleague's run, an import, a bug report): the paths
in its events are whatever its author wrote. Reading one as-is prints ``/proc/self/environ``
(this process's tokens) or ``~/.ssh`` keys, blocks forever on a FIFO or ``/dev/stdin``
(the language server would read its own JSON-RPC stream) and exhausts memory on
``/dev/zero``. Every reader of a run-named file goes through ``read_source``:

- the path is resolved (``realpath``: symlinks followed here, so the checks below are on
  the file really opened) and must end in a Python source suffix (``.py``, ``.pyw``,
  ``.pyi``): what torch names is code, never a key or a password file;
- it must lie under an allowed root: this process's directory, its import path
  (``sys.path``, the interpreter's library folders: a break inside torch shows torch's
  line), and roots added with ``allow_root`` (a run's recorded directory, the language
  server's workspace folders). A root is refused when it is ``/`` or one folder deep
  (``/home``, ``/etc``, ``/tmp``): a crafted run recording ``cwd="/"`` allows nothing;
- it is opened ``O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW`` (a FIFO opens without
  waiting for a writer, a symlink swapped in after the check is not followed), ``fstat``
  must say regular file, and at most ``MAX_SOURCE_BYTES`` are read: a larger file is not
  source (None).

This lives in the engine because the TORCH_TRACE importer's normalizers read the files a
trace names too (line texts, indentation); the inspector and the faces import it from
``dyn_inspect.inspector.source_files`` (``tests/inspector/test_hostile_sources.py``).
"""

from __future__ import annotations

import functools
import os
import stat
import sys
import sysconfig
from collections.abc import Iterable

__all__ = [
    "MAX_SOURCE_BYTES",
    "allow_root",
    "allowed_path",
    "read_source",
    "source_line",
    "source_lines",
    "source_version",
]

MAX_SOURCE_BYTES = 8 * 1024 * 1024  # the largest file in torch itself is under 1 MiB
SOURCE_SUFFIXES = (".py", ".pyw", ".pyi")
NEVER = ("/proc", "/sys", "/dev")  # kernel and device trees: nothing there is source

_added: set[str] = set()
_asked: set[str] = set()  # every path allow_root was given (a followed run asks on each refresh)


def _acceptable_root(path: str) -> str | None:
    """``path`` resolved, when it may serve as a root: absolute, not ``/`` nor one folder
    deep, not under ``NEVER``."""
    if not path or not os.path.isabs(path):
        return None
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    parts = [p for p in real.split(os.sep) if p]
    if len(parts) < 2 or _never(real):
        return None
    return real


def _never(real: str) -> bool:
    return any(real == d or real.startswith(d + os.sep) for d in NEVER)


def allow_root(path: str | os.PathLike[str] | None) -> None:
    """Let files under ``path`` be read (a run's recorded directory, a workspace folder);
    a root that is too broad (``/``, ``/home``) is ignored."""
    if path is None:
        return
    raw = os.fspath(path)
    if raw in _asked:
        return
    _asked.add(raw)
    real = _acceptable_root(raw)
    if real is not None and real not in _added:
        _added.add(real)
        _roots_cached.cache_clear()
        _permitted.cache_clear()


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    names = ("stdlib", "platstdlib", "purelib", "platlib")
    paths = sysconfig.get_paths()
    return tuple(paths[n] for n in names if n in paths)


@functools.lru_cache(maxsize=8)
def _roots_cached(cwd: str, path_key: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for candidate in (cwd, *path_key, *_library_roots(), *sorted(_added)):
        real = _acceptable_root(candidate)
        if real is not None and real not in out:
            out.append(real)
    return tuple(out)


def _roots(extra: Iterable[str]) -> tuple[str, ...]:
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    base = _roots_cached(cwd, tuple(p for p in sys.path if p and os.path.isabs(p)))
    more = tuple(r for r in (_acceptable_root(os.fspath(e)) for e in extra) if r is not None and r not in base)
    return base + more


@functools.lru_cache(maxsize=1024)
def _permitted(path: str, roots: tuple[str, ...]) -> str | None:
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    if not real.endswith(SOURCE_SUFFIXES) or _never(real):
        return None
    if not any(real.startswith(r + os.sep) for r in roots):
        return None
    return real


def allowed_path(path: str, roots: Iterable[str] = ()) -> str | None:
    """The real path ``read_source`` would open for ``path``, or None when it may not."""
    if not path or "\0" in path:
        return None
    return _permitted(path, _roots(roots))


def source_version(path: str, roots: Iterable[str] = ()) -> tuple[int, int] | None:
    """(mtime_ns, size) of a readable source file (what caches of its text are keyed by),
    None when ``read_source`` would refuse it. ``stat`` opens nothing: a FIFO costs nothing here."""
    real = allowed_path(path, roots)
    if real is None:
        return None
    try:
        st = os.stat(real)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SOURCE_BYTES:
        return None
    return st.st_mtime_ns, st.st_size


def read_source(path: str, roots: Iterable[str] = ()) -> str | None:
    """The text of the source file ``path`` (UTF-8, undecodable bytes replaced), or None
    when it is not a regular Python file under an allowed root, or larger than the cap."""
    real = allowed_path(path, roots)
    if real is None:
        return None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SOURCE_BYTES:
            return None
        chunks: list[bytes] = []
        left = MAX_SOURCE_BYTES + 1  # one byte more: a file that grew past the cap is refused
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            return None
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", errors="replace")


@functools.lru_cache(maxsize=128)
def _lines(real: str, mtime_ns: int, size: int, roots: tuple[str, ...]) -> tuple[str, ...]:
    text = read_source(real, roots)
    # Python numbers lines at newlines only: str.splitlines would also split at a form feed.
    return () if text is None else tuple(text.split("\n"))


def source_lines(path: str, roots: Iterable[str] = ()) -> tuple[str, ...]:
    """The file's lines (without newlines), read once per version; () when refused."""
    extra = tuple(roots)
    version = source_version(path, extra)
    real = allowed_path(path, extra)
    if version is None or real is None:
        return ()
    return _lines(real, *version, _roots(extra))


def source_line(path: str, line: int, roots: Iterable[str] = ()) -> str:
    """Line ``line`` (1-based) of the file with its newline, "" when absent or refused:
    what ``linecache.getline`` answers, without reading whatever the path names."""
    lines = source_lines(path, roots)
    if not 1 <= line <= len(lines):
        return ""
    return lines[line - 1] + "\n"
