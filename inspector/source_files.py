"""Reading the source files a run names, for the inspector and the faces: the engine's one
bounded, regular-file-only reader (``dyn_inspect.engine.source_files``, whose docstring
says what may be opened), plus the roots a run brings.

A run's recorded directory (``run_start.cwd``) is a root while the run is open, so that a
run read from another directory still shows its files; a crafted one naming ``/`` or
``/home`` adds nothing. The language server adds its workspace folders.

A notebook cell's file (``/tmp/ipykernel_<pid>/<hash>.py``, ``<ipython-input-N-…>``) is
never written: its text is the source the run recorded (``notebook_cell``), which every
reader here answers with — only for a name of that form that is no file on disk, so a
crafted run cannot put other text in place of a real file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from dyn_inspect.engine import source_files as _files
from dyn_inspect.engine.source_files import MAX_SOURCE_BYTES, allow_root, allowed_path

if TYPE_CHECKING:
    from dyn_inspect.inspector.model import RunModel

__all__ = [
    "MAX_SOURCE_BYTES",
    "allow_model_roots",
    "allow_root",
    "allowed_path",
    "read_source",
    "source_line",
    "source_lines",
    "source_version",
]


def allow_model_roots(model: RunModel) -> None:
    """Let the run's recorded directories (the launcher's and each process's cwd) be roots,
    and its notebook cells' recorded sources answer for their files."""
    if model.run_start is not None:
        allow_root(model.run_start.cwd)
    for p in model.processes.values():
        if p.start is not None:
            allow_root(p.start.cwd)
    for file, cell in model.cells.items():
        if _CELL_FILE.match(file) and len(cell.source) <= MAX_SOURCE_BYTES and not os.path.lexists(file):
            _CELL_SOURCES[file] = cell.source


_CELL_FILE = re.compile(r"^(?:<ipython-input-\d+-[0-9a-f]+>|/.*/ipykernel_\d+/[0-9A-Za-z_]+\.py)$")
# cell file -> the source a run recorded for it (file names hash the cell: unique per kernel)
_CELL_SOURCES: dict[str, str] = {}


def read_source(path: str, roots: Iterable[str] = ()) -> str | None:
    """The file's text (``engine.source_files.read_source``), or a recorded cell's source."""
    cell = _CELL_SOURCES.get(path)
    return cell if cell is not None else _files.read_source(path, roots)


def source_version(path: str, roots: Iterable[str] = ()) -> tuple[int, int] | None:
    """What caches of the text are keyed by; for a recorded cell (0, its length)."""
    cell = _CELL_SOURCES.get(path)
    return (0, len(cell)) if cell is not None else _files.source_version(path, roots)


def source_lines(path: str, roots: Iterable[str] = ()) -> tuple[str, ...]:
    cell = _CELL_SOURCES.get(path)
    return tuple(cell.split("\n")) if cell is not None else _files.source_lines(path, roots)


def source_line(path: str, line: int, roots: Iterable[str] = ()) -> str:
    """Line ``line`` (1-based) with its newline, "" when absent (as ``linecache.getline``)."""
    if path not in _CELL_SOURCES:
        return _files.source_line(path, line, roots)
    lines = source_lines(path)
    return lines[line - 1] + "\n" if 1 <= line <= len(lines) else ""
