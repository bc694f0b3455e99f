"""Source-location questions every face asks: is this library code, which frame of a
stack is the user's (inside a workspace root), where is a function's ``def`` line."""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

from dyn_inspect.engine.schema import Loc

_LIBRARY_MARKERS = ("site-packages", "dist-packages", "<frozen", "<string>")


def is_library(path: str) -> bool:
    if path.startswith("<"):
        return True
    if any(m in path for m in _LIBRARY_MARKERS):
        return True
    # The standard library (…/lib/python3.11/…) without site-packages.
    return "/lib/python3" in path


def inside(path: str, root: str | os.PathLike[str]) -> bool:
    try:
        return Path(path).resolve().is_relative_to(Path(root).resolve())
    except (OSError, ValueError):
        return False


def nearest_user_frame(stack: list[Loc], root: str | os.PathLike[str] | None = None) -> Loc | None:
    """The innermost frame that is the user's: inside ``root`` when given, else the
    innermost frame that is not library code. A break inside transformers is thereby
    attributed to the user line that called into it."""
    for frame in reversed(stack):
        if root is not None:
            if inside(frame.file, root) and not is_library(frame.file):
                return frame
        elif not is_library(frame.file):
            return frame
    return None


@functools.lru_cache(maxsize=256)
def _def_lines(path: str, mtime: float) -> dict[int, int]:
    """first line of a decorated function (co_firstlineno) -> line of its ``def``."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return {}
    out: dict[int, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            out[first] = node.lineno
            out[node.lineno] = node.lineno
    return out


def def_line(path: str, co_firstlineno: int) -> int:
    """The ``def`` line of the function whose code object starts at ``co_firstlineno``
    (Python reports the first decorator's line for decorated functions)."""
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return co_firstlineno
    return _def_lines(path, mtime).get(co_firstlineno, co_firstlineno)
