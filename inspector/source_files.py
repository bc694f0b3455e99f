"""Reading the source files a run names, for the inspector and the faces: the engine's one
bounded, regular-file-only reader (``dyn_inspect.engine.source_files``, whose docstring
says what may be opened), plus the roots a run brings.

A run's recorded directory (``run_start.cwd``, each process's cwd) is a root while the run
is open, when the run is kept where recording there put it (``<cwd>/.dyn-inspect/runs/<id>``,
or ``<cwd>/<runs dir>/<id>``): a run that arrives from elsewhere (a repository, a bug report, a shared disk)
cannot make a folder of its choosing, a home directory say, readable by naming it as its
cwd. A run kept in a project's ``.dyn-inspect/runs`` that says it was recorded elsewhere
(the project was copied, cloned or moved, or recorded in a container) has its recorded
paths read from that project instead (``located``): ``<recorded cwd>/a/b.py`` is
``<project>/a/b.py`` here. The language server adds its workspace folders.

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
    "located",
    "read_source",
    "source_line",
    "source_lines",
    "source_version",
]


def _real(path: str) -> str | None:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):  # a crafted path (a NUL byte)
        return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def project_of(run_dir: str | os.PathLike[str]) -> str | None:
    """``<project>`` for a run kept at ``<project>/.dyn-inspect/runs/<id>``, else None."""
    runs = os.path.dirname(os.fspath(run_dir))
    store = os.path.dirname(runs)
    if os.path.basename(runs) == "runs" and os.path.basename(store) == ".dyn-inspect":
        return os.path.dirname(store)
    return None


def _kept_in(run: str, cwd: str, project: str | None) -> bool:
    """Whether the run sits where recording in ``cwd`` put it: ``<cwd>/.dyn-inspect/runs/<id>``,
    or ``<cwd>/<runs dir>/<id>`` (``--runs-dir runs``). Under it is not enough: a run in
    ``~/src/repo/.dyn-inspect/runs`` that says it was recorded in ``~`` is under ``~``."""
    if project is not None:
        return cwd == project
    return os.path.dirname(os.path.dirname(run)) == cwd


def allow_model_roots(model: RunModel, run_dir: str | os.PathLike[str]) -> None:
    """Let the run's recorded directories be roots when the run is kept under them, map
    them onto the project the run is kept in when it is not, and let its notebook cells'
    recorded sources answer for their files."""
    run = _real(os.fspath(run_dir))
    project = project_of(run) if run is not None else None
    if project is not None:
        allow_root(project)
    cwds = [model.run_start.cwd] if model.run_start is not None else []
    cwds += [p.start.cwd for p in model.processes.values() if p.start is not None]
    for cwd in dict.fromkeys(c for c in cwds if c and os.path.isabs(c)):
        real = _real(cwd)
        if real is None or run is None:
            continue
        if _kept_in(run, real, project):
            allow_root(cwd)
        elif project is not None and real != project:
            targets = _RELOCATED.setdefault(os.path.normpath(cwd), [])
            if project not in targets:
                targets.append(project)
    for file, cell in model.cells.items():
        if _CELL_FILE.match(file) and len(cell.source) <= MAX_SOURCE_BYTES and not os.path.lexists(file):
            _CELL_SOURCES[file] = cell.source


# a recorded directory -> the projects here holding a run recorded there (in the order
# they were opened; several only when one process opens two copies of the same project)
_RELOCATED: dict[str, list[str]] = {}


def located(path: str, roots: tuple[str, ...] = ()) -> str:
    """Where the reader takes ``path``'s text from: ``path`` itself when it may be read,
    else the same file in the project holding a run recorded in a folder above it (the
    first such file that may be read), else ``path`` (which then reads as no source)."""
    if not _RELOCATED or allowed_path(path, roots) is not None:
        return path
    for cwd, projects in _RELOCATED.items():
        if _inside(path, cwd) and path != cwd:
            rel = os.path.relpath(path, cwd)
            for project in projects:
                candidate = os.path.join(project, rel)
                if allowed_path(candidate, roots) is not None:
                    return candidate
    return path


_CELL_FILE = re.compile(r"^(?:<ipython-input-\d+-[0-9a-f]+>|/.*/ipykernel_\d+/[0-9A-Za-z_]+\.py)$")
# cell file -> the source a run recorded for it (file names hash the cell: unique per kernel)
_CELL_SOURCES: dict[str, str] = {}


def read_source(path: str, roots: Iterable[str] = ()) -> str | None:
    """The file's text (``engine.source_files.read_source``), or a recorded cell's source."""
    cell = _CELL_SOURCES.get(path)
    if cell is not None:
        return cell
    given = tuple(roots)
    return _files.read_source(located(path, given), given)


def source_version(path: str, roots: Iterable[str] = ()) -> tuple[int, int] | None:
    """What caches of the text are keyed by; for a recorded cell (0, its length)."""
    cell = _CELL_SOURCES.get(path)
    if cell is not None:
        return (0, len(cell))
    given = tuple(roots)
    return _files.source_version(located(path, given), given)


def source_lines(path: str, roots: Iterable[str] = ()) -> tuple[str, ...]:
    cell = _CELL_SOURCES.get(path)
    if cell is not None:
        return tuple(cell.split("\n"))
    given = tuple(roots)
    return _files.source_lines(located(path, given), given)


def source_line(path: str, line: int, roots: Iterable[str] = ()) -> str:
    """Line ``line`` (1-based) with its newline, "" when absent (as ``linecache.getline``)."""
    if path not in _CELL_SOURCES:
        given = tuple(roots)
        return _files.source_line(located(path, given), line, given)
    lines = source_lines(path)
    return lines[line - 1] + "\n" if 1 <= line <= len(lines) else ""
