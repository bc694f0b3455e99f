"""Notebook cells open in the editor, matched to the cells a run recorded.

A recorded run names a cell by the file IPython compiled it under
(``/tmp/ipykernel_<pid>/<hash>.py``, never written to disk) and keeps its source
(``notebook_cell`` events). An editor names the same cell by a cell URI inside a notebook
document (LSP 3.17: ``vscode-notebook-cell:/…/nb.ipynb#W1sZmlsZQ==``). A cell is the one
recorded when its text is the recorded source, compared line by line with IPython's own
lines — ``%magic`` and ``!shell`` lines, which IPython's transformers rewrite or blank —
left out, and trailing blank lines ignored. Only a cell not matched yet is compared: the
server keeps a match while the cell stays open, so an edit moves the cell's findings
(placement on its current text, as for an edited file) instead of dropping them.

``match_cells(recorded, open_cells)`` (recorded file -> source) returns recorded file -> cell URI.
``cell_key(text)`` names a cell by that same comparable text: choosing the run to show
(lsp.run_source) counts a run that compiled code in a cell as one that compiled an open file
when an open notebook holds a cell with that text, whichever kernel ran it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence

CELL_KEY = "notebook-cell-text:"  # never a path: a touch's files and the open files mix both
# A magic or shell line, as typed or as rewritten: at the start of a line or assigned
# (IPython accepts them nowhere else), so no Python statement matches.
_MAGIC = re.compile(r"^\s*(?:\S+\s*=\s*)?(?:%|!|get_ipython\(\)\.)")


def comparable_line(line: str) -> str:
    """A line as cells are compared: a magic or shell line is blank, trailing spaces dropped."""
    return "" if _MAGIC.match(line) else line.rstrip()


def trimmed(lines: Sequence[str]) -> tuple[str, ...]:
    out = list(lines)
    while out and not out[-1]:
        out.pop()
    return tuple(out)


def comparable(source: str) -> tuple[str, ...]:
    return trimmed([comparable_line(line) for line in source.splitlines()])


def key_of(lines: Sequence[str]) -> str | None:
    """``cell_key`` of comparable lines (None for lines without code); leading blank lines
    do not count (a virtual document's cell is found by where its code starts)."""
    lines = trimmed(lines)
    while lines and not lines[0]:
        lines = lines[1:]
    if not any(lines):
        return None
    return CELL_KEY + hashlib.sha1("\n".join(lines).encode(), usedforsecurity=False).hexdigest()


def cell_key(source: str) -> str | None:
    """The name of a cell's text as ``match_cells`` compares it; None for a cell without code."""
    return key_of(comparable(source))


def match_cells(recorded: Mapping[str, str], open_cells: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Recorded cell file (-> its source) -> URI of the open cell (``(uri, text)`` pairs) with its text;
    a recorded cell that no open cell matches is left out (its findings stay unpublished:
    the file they name does not exist)."""
    by_text: dict[tuple[str, ...], str] = {}
    for uri, text in open_cells:
        by_text.setdefault(comparable(text), uri)
    out: dict[str, str] = {}
    for file, source in recorded.items():
        found = by_text.get(comparable(source))
        if found is not None and any(comparable(source)):
            out[file] = found
    return out
