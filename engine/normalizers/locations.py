"""Source locations from the three shapes torch gives them in.

- interned stack frames in structured metadata: ``{"line", "name", "filename": idx, "loc"}``;
- Python traceback text ("  File "f", line N, in fn\n    code\n    ^^^^"), as in graph-break
  and provenance payloads — carets give the column range;
- ``traceback.FrameSummary`` objects (live hook; ``colno`` exists on torch 2.13+).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import sys
from typing import Any

from dyn_inspect.engine.schema import Loc
from dyn_inspect.engine.source_files import source_line

_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>.+)$')


def loc_from_interned(frame: dict[str, Any], filename: str) -> Loc:
    code = frame.get("loc") or None
    return Loc(file=filename, line=int(frame.get("line") or 0), name=frame.get("name"), code=code)


def _indent_of(file: str, line: int) -> int | None:
    text = source_line(file, line)
    if not text:
        return None
    return len(text) - len(text.lstrip())


def parse_traceback(text: str) -> list[Loc]:
    """Frames of a formatted traceback, outermost first, with caret columns when present."""
    lines = text.splitlines()
    frames: list[Loc] = []
    i = 0
    while i < len(lines):
        m = _FRAME_RE.match(lines[i])
        if not m:
            i += 1
            continue
        file, lineno, name = m["file"], int(m["line"]), m["name"]
        code = None
        col = end_col = None
        if i + 1 < len(lines) and lines[i + 1].startswith("    ") and not _FRAME_RE.match(lines[i + 1]):
            raw_code = lines[i + 1]
            code = raw_code.strip()
            i += 1
            if i + 1 < len(lines) and set(lines[i + 1].strip()) <= set("^~") and lines[i + 1].strip():
                carets = lines[i + 1]
                start = len(carets) - len(carets.lstrip())
                end = len(carets.rstrip())
                # Carets are relative to the printed (dedented, 4-space prefixed) code line.
                printed_indent = len(raw_code) - len(raw_code.lstrip())
                indent = _indent_of(file, lineno)
                if indent is not None:
                    col = start - printed_indent + indent
                    end_col = end - printed_indent + indent
                i += 1
        frames.append(Loc(file=file, line=lineno, name=name, col=col, end_col=end_col, code=code))
        i += 1
    return frames


def loc_from_frame_summary(fs: Any) -> Loc:
    col = getattr(fs, "colno", None)
    end_col = getattr(fs, "end_colno", None)
    if getattr(fs, "end_lineno", None) not in (None, fs.lineno):
        end_col = None  # a multi-line expression: underline to the end of the first line
    code = (fs.line or "").strip() or None
    return Loc(file=fs.filename, line=int(fs.lineno or 0), name=fs.name, col=col, end_col=end_col, code=code)


# The one definition of "library code" (the inspector's locations module re-exports it):
# the engine needs it while recording and must not import the inspector.
_PACKAGE_DIRS = ("site-packages/", "dist-packages/")


def is_library_file(path: str) -> bool:
    """Installed code (site-packages, the standard library, frozen/synthetic modules), and
    the recorder's own files (``is_ours``): never the user's line."""
    path = path.replace("\\", "/")
    return "site-packages" in path or "dist-packages" in path or "/lib/python3" in path or path.startswith("<") or is_ours(path)


_OUR_PACKAGES = ("engine", "inspector", "cli", "lsp", "tui")


@functools.cache
def _our_dirs() -> tuple[str, ...]:
    """The folders of dyn-inspect's own packages, each ending in "/". An editable install
    keeps them in the checkout (engine/, inspector/, ... beside tests/ and examples/, which
    are not ours), so they are found one by one, not as their common parent."""
    dirs: list[str] = []
    top = sys.modules.get("dyn_inspect")
    dirs += list(getattr(top, "__path__", None) or [])  # the top package (notebook/)
    for name in _OUR_PACKAGES:
        try:
            spec = importlib.util.find_spec(f"dyn_inspect.{name}")
        except (ImportError, ValueError):
            continue
        dirs += list(spec.submodule_search_locations or []) if spec else []
    out: set[str] = set()
    for d in dirs:
        for form in (d, os.path.realpath(d)):
            out.add(form.replace("\\", "/").rstrip("/") + "/")
    return tuple(sorted(out))


@functools.lru_cache(maxsize=4096)
def is_ours(path: str) -> bool:
    """A file of the recorder itself (its hook on torch's ``trace_structured`` is on the
    stack of every structured log torch writes): "created at …/engine/tracehook.py:164" was
    shown as the user's line for the unbacked symbols of ``torch.map``."""
    path = path.replace("\\", "/")
    return path.startswith(_our_dirs())


def package_path(path: str) -> str | None:
    """An installed file's path inside its package folder (``torch/optim/optimizer.py``),
    from the innermost ``site-packages/``; None for a file that is not installed."""
    path = path.replace("\\", "/")
    cut = max(path.rfind(marker) + len(marker) if marker in path else -1 for marker in _PACKAGE_DIRS)
    return path[cut:] if cut > 0 else None


def nearest_user_frame(stack: list[Loc]) -> Loc | None:
    """The innermost frame that is not library code (a break inside transformers is
    thereby attributed to the user line that called into it)."""
    return next((f for f in reversed(stack) if not is_library_file(f.file)), None)
