"""Source-location questions every face asks, answered once: is this library code, how a
path is shown (relative to the run's cwd, a library file from its package), the run's cwd,
``FILE:LINE`` parsing, whether a recorded path is the file a user named, which frame of a
stack is the user's, where a function's ``def`` line is.

"Library code" and the nearest non-library frame are defined in the engine (it needs them
while recording and never imports the inspector); they are re-exported here.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from dyn_inspect.engine.normalizers.locations import is_library_file as is_library
from dyn_inspect.engine.normalizers.locations import is_ours, package_path
from dyn_inspect.engine.normalizers.locations import nearest_user_frame as _nearest_non_library
from dyn_inspect.engine.schema import Loc
from dyn_inspect.inspector.cell_names import cell_label
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.source_files import read_source, source_lines, source_version

if TYPE_CHECKING:
    from dyn_inspect.inspector.model import RunModel

__all__ = [
    "def_line",
    "file_line",
    "from_user",
    "inside",
    "is_library",
    "is_ours",
    "not_ours",
    "nearest_user_frame",
    "package_path",
    "parse_file_line",
    "relative",
    "run_cwd",
    "same_file",
    "short_loc",
    "short_path",
    "split_file_line",
]


def inside(path: str, root: str | os.PathLike[str]) -> bool:
    try:
        return Path(path).resolve().is_relative_to(Path(root).resolve())
    except (OSError, ValueError):
        return False


def not_ours(loc: Loc | None) -> Loc | None:
    """``loc`` unless it is a file of dyn-inspect itself: a run recorded before the engine
    skipped its own frames holds "created at …/engine/tracehook.py:164"; no line is better
    than that one."""
    return None if loc is None or is_ours(loc.file) else loc


def nearest_user_frame(stack: list[Loc], root: str | os.PathLike[str] | None = None) -> Loc | None:
    """The innermost frame that is the user's: inside ``root`` when given, else the
    innermost frame that is not library code. A break inside transformers is thereby
    attributed to the user line that called into it."""
    if root is None:
        return _nearest_non_library(stack)
    return next((f for f in reversed(stack) if inside(f.file, root) and not is_library(f.file)), None)


class _HasFile(Protocol):
    @property
    def file(self) -> str: ...


F = TypeVar("F", bound=_HasFile)


def from_user(stack: list[F]) -> list[F]:
    """A user stack from its outermost user frame on: a notebook cell's stack starts in the
    kernel's event loop (runpy, tornado, asyncio, ipykernel, IPython), twenty frames before
    the first cell; a script's starts at the script, and is kept whole."""
    for i, f in enumerate(stack):
        if cell_label(f.file) is not None or not (is_library(f.file) or f.file.startswith("<")):
            return stack[i:]
    return stack


def run_cwd(model: RunModel) -> str | None:
    """The directory the run was started in (what paths are shown and compared relative to)."""
    if model.run_start is not None and model.run_start.cwd:
        return model.run_start.cwd
    return next((p.start.cwd for p in model.processes.values() if p.start and p.start.cwd), None)


def relative(path: str, base: str | None) -> str:
    """``path`` relative to ``base`` when inside it, else unchanged (so runs from two
    checkouts compare)."""
    if base:
        try:
            p = Path(path)
            if p.is_relative_to(base):
                return str(p.relative_to(base))
        except ValueError:
            pass
    return path


def short_path(path: str, cwd: str | None = None) -> str:
    """``path`` as people read it: a library file from its package
    (``torch/optim/optimizer.py``), a file under ``cwd`` (default: this process's)
    relative to it, a notebook cell as ``cell [N]``, anything else as recorded."""
    cell = cell_label(path)
    if cell is not None:
        return cell
    pkg = package_path(path)
    if pkg is not None:
        return pkg
    if not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path, cwd or os.getcwd())
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def file_line(path: str, line: int | str | None, cwd: str | None = None) -> str:
    """``FILE:LINE`` as ``short_loc`` writes it, from a path and a line."""
    cell = cell_label(path)
    if cell is not None:
        return f"{cell}, line {line}"
    return f"{short_path(path, cwd)}:{line}"


def short_loc(loc: Loc | None, cwd: str | None = None) -> str:
    """``FILE:LINE`` with ``FILE`` as ``short_path`` writes it (``cell [N], line L`` in a
    notebook); ``?`` for no location."""
    if loc is None:
        return "?"
    cell = cell_label(loc.file)
    if cell is not None:
        return f"{cell}, line {loc.line}"
    return f"{short_path(loc.file, cwd)}:{loc.line}"


_FILE_LINE_RE = re.compile(r"^(?P<file>.*):(?P<line>\d+)$")


def split_file_line(text: str) -> tuple[str, int] | None:
    """``"train.py:27"`` → ``("train.py", 27)``; ``":27"`` → ``("", 27)`` (any file); None
    when ``text`` is not ``FILE:LINE`` with a 1-based line."""
    m = _FILE_LINE_RE.match(text.strip())
    if m is None or int(m["line"]) < 1:
        return None
    return m["file"], int(m["line"])


def parse_file_line(text: str, option: str = "--at") -> tuple[str, int]:
    """A command-line ``FILE:LINE`` (``--at``); a one-line InspectorError otherwise."""
    parsed = split_file_line(text)
    if parsed is None or not parsed[0]:
        raise InspectorError(f"{option} wants FILE:LINE (a source file and a 1-based line, e.g. train.py:27), got {text!r}")
    return parsed


def same_file(recorded: str, wanted: str, cwd: str | None = None) -> bool:
    """Is ``recorded`` (a path in the run) the file a user named as ``wanted``?

    ``wanted`` may be absolute, relative to this process's directory or to the run's ``cwd``
    (``./train.py``, ``../train.py``, ``examples/train.py``), a path suffix (``train.py``,
    ``torch/nn/functional.py`` for a library file), or the same file in another checkout
    (an absolute path under this directory names the recorded file under the run's cwd).
    A suffix never starts with ``..``: ``../train.py`` names one file, not every train.py.
    """
    if not recorded or not wanted:
        return False
    if recorded == wanted:
        return True
    rec = os.path.normpath(recorded)
    want = os.path.normpath(wanted)
    here = os.getcwd()
    if os.path.isabs(want):
        if want == rec or os.path.realpath(want) == os.path.realpath(rec):
            return True
        # Another checkout: the same path below this directory as below the run's.
        return bool(cwd) and inside(want, here) and relative(rec, cwd) == os.path.relpath(want, here) != rec
    for base in dict.fromkeys(filter(None, (here, cwd))):
        joined = os.path.normpath(os.path.join(base, want))
        if joined == rec or os.path.realpath(joined) == os.path.realpath(rec):
            return True
    if want.startswith(".."):
        return False
    return rec.endswith(os.sep + want) or rec == want


@functools.lru_cache(maxsize=64)
def _parsed(path: str, mtime_ns: int, size: int) -> ast.Module | None:
    text = read_source(path)
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def file_version(path: str) -> tuple[int, int] | None:
    """(mtime_ns, size) of a source file, None when it cannot be read (or may not be: the
    one reader's rules, ``inspector/source_files.py``): what caches of its contents are keyed by."""
    return source_version(path)


def parsed_source(path: str) -> ast.Module | None:
    """The file's syntax tree, parsed once per version (keyed by mtime and size: a
    long-lived reader, the language server, must not read the text before an edit)."""
    version = file_version(path)
    return None if version is None else _parsed(path, *version)


Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@functools.lru_cache(maxsize=64)
def _functions(path: str, mtime_ns: int, size: int) -> tuple[Function, ...]:
    tree = _parsed(path, mtime_ns, size)
    if tree is None:
        return ()
    return tuple(node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def functions_in(path: str) -> tuple[Function, ...]:
    """Every ``def``, ``async def`` and ``lambda`` of a file, walked once per version: the
    def lines, ``**kwargs`` names and enclosing functions the analyses ask for all read it
    (three parses and walks per file made a 100k-event run's first causes take 1.6 s)."""
    version = file_version(path)
    return () if version is None else _functions(path, *version)


@functools.lru_cache(maxsize=256)
def _def_lines(path: str, mtime_ns: int, size: int) -> dict[int, int]:
    """first line of a decorated function (co_firstlineno) -> line of its ``def``."""
    out: dict[int, int] = {}
    for node in _functions(path, mtime_ns, size):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            out[first] = node.lineno
            out[node.lineno] = node.lineno
    return out


def _lines(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    return source_lines(path)


def def_file_line(path: str, co_firstlineno: int, cwd: str | None = None) -> str:
    """A function's ``FILE:LINE`` at its ``def`` line (``def_line``), written as ``file_line``
    writes it (``cell [N], line L`` in a notebook)."""
    return file_line(path, def_line(path, co_firstlineno), cwd)


def def_line(path: str, co_firstlineno: int) -> int:
    """The ``def`` line of the function whose code object starts at ``co_firstlineno``
    (Python reports the first decorator's line for decorated functions)."""
    version = file_version(path)
    if version is None:
        return co_firstlineno
    # Only a decorator's line maps to another line: any other (a plain def's, a resume
    # function's) is the answer without parsing the file (parsing the files of the
    # overview's "most recompiled" was a tenth of the time to its first frame).
    lines = _lines(path, *version)
    if 0 < co_firstlineno <= len(lines) and not lines[co_firstlineno - 1].lstrip().startswith("@"):
        return co_firstlineno
    return _def_lines(path, *version).get(co_firstlineno, co_firstlineno)
