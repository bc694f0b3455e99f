"""Notebook cells as people name them: ``cell [N]`` for the file IPython compiled cell N under.

ipykernel compiles each cell as ``/tmp/ipykernel_<pid>/<hash>.py`` (a file that is never
written) and plain IPython as ``<ipython-input-N-<hash>>``. A recorded run says which file is
which cell (``notebook_cell`` events, registered here as the run is read); the plain-IPython
form carries its number. ``locations.short_path`` and ``short_loc`` ask here first, so every
face shows the same "cell [3], line 2".
"""

from __future__ import annotations

import re

_IPYTHON_INPUT = re.compile(r"^<ipython-input-(\d+)-[0-9a-f]+>$")
# Filled while runs are read; file names are unique per kernel process (a hash of the cell).
_CELLS: dict[str, int] = {}


def register(file: str, cell: int) -> None:
    _CELLS[file] = cell


def cell_number(file: str) -> int | None:
    """The execution count of the cell compiled as ``file``; None for other files."""
    n = _CELLS.get(file)
    if n is not None:
        return n
    m = _IPYTHON_INPUT.match(file)
    return int(m.group(1)) if m else None


def cell_label(file: str) -> str | None:
    n = cell_number(file)
    return None if n is None else f"cell [{n}]"
