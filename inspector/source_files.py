"""Reading the source files a run names, for the inspector and the faces: the engine's one
bounded, regular-file-only reader (``dyn_inspect.engine.source_files``, whose docstring
says what may be opened), plus the roots a run brings.

A run's recorded directory (``run_start.cwd``) is a root while the run is open, so that a
run read from another directory still shows its files; a crafted one naming ``/`` or
``/home`` adds nothing. The language server adds its workspace folders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dyn_inspect.engine.source_files import (
    MAX_SOURCE_BYTES,
    allow_root,
    allowed_path,
    read_source,
    source_line,
    source_lines,
    source_version,
)

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
    """Let the run's recorded directories (the launcher's and each process's cwd) be roots."""
    if model.run_start is not None:
        allow_root(model.run_start.cwd)
    for p in model.processes.values():
        if p.start is not None:
            allow_root(p.start.cwd)
