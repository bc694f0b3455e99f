"""Notebooks as jupyterlab-lsp sends them: one virtual document per notebook, found in the
recorded cells' lines.

jupyterlab-lsp does not speak LSP 3.17 notebook documents. It opens
``<root>/.virtual_documents/<notebook>.ipynb`` (the server's root is that folder) holding
every code cell of the notebook, joined by two blank lines, with IPython's syntax rewritten
as Python (``%magic`` -> ``get_ipython().run_line_magic(…)``, a cell magic's body into a
triple-quoted string argument of ``get_ipython().run_cell_magic(…)``). It maps a position
in that document back to the cell by line: the n-th line of a cell's block is the cell's
n-th line (a cell magic's block is one line shorter, the magic's line holding the body's
first line).

So a recorded cell is found as a block of lines (compared as ``notebook_cells`` compares
a cell: magic lines left out), taken as its editor holds them, and its findings are placed
on those lines and published at the block's first line plus their line in the cell.
``blocks(recorded, text)`` returns the ``Block`` of each recorded cell found; once found, a
block is followed through edits (``carried``), as VS Code's open cells keep their match;
``block_keys(text)`` names the document's candidate cells by ``cell_key`` so the run shown
can be chosen by them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from dyn_inspect.lsp.notebook_cells import comparable, comparable_line, key_of

VIRTUAL_DIR = ".virtual_documents"  # jupyter-lsp's default (``virtual_documents_dir``)
# the line a cell magic becomes; its body's first line follows the quotes
_CELL_MAGIC = re.compile(r'^get_ipython\(\)\.run_cell_magic\("(?:[^"\\]|\\.)*", "(?:[^"\\]|\\.)*", """')
_CELL_MAGIC_END = '""")'
_MAX_CHUNKS = 8  # a cell with up to 7 double blank lines in it is still found when choosing the run


def is_virtual(path: str) -> bool:
    """A document jupyterlab-lsp made up (under ``.virtual_documents/``)."""
    return VIRTUAL_DIR in Path(path).parts


def real_root(root: Path) -> Path:
    """The folder a client means: jupyterlab-lsp gives the virtual documents' folder as the
    root; the runs and the notebooks are in the folder above it."""
    return root.parent if root.name == VIRTUAL_DIR else root


class Block(NamedTuple):
    """A recorded file's lines in a virtual document: ``lines`` as its editor holds them
    (a cell magic's body split from the magic's line), line n of them at the document's
    ``start + n``."""

    path: str
    start: int
    lines: list[str]

    @property
    def end(self) -> int:
        return self.start + len(self.lines)


def _lines(text: str) -> list[tuple[str, str, int]]:
    """The document's lines as its cells' editors hold them: (comparable text, text, the
    document line a position on it is sent on). A cell magic's line is two lines of its
    cell, the magic and its body's first line (jupyterlab-lsp sends the body's n-th line on
    the n-th line of the cell's block, whatever line of the document holds its text)."""
    out: list[tuple[str, str, int]] = []
    in_magic = False
    for number, line in enumerate(text.splitlines()):
        head = _CELL_MAGIC.match(line)
        if head is not None:
            out.append(("", line[: head.end()], number))
            line, in_magic = line[head.end() :], True
        if in_magic and line.rstrip().endswith(_CELL_MAGIC_END):
            line, in_magic = line.rstrip()[: -len(_CELL_MAGIC_END)], False
        out.append((comparable_line(line), line, number))
    return out


def blocks(recorded: Mapping[str, str], text: str) -> list[Block]:
    """The blocks of the recorded cells (file -> source) whose lines the document holds, in
    its order (the first place a text is, when it is there twice); each block's first line
    is where its cell's first line is sent, and it holds the cell's lines."""
    lines = _lines(text)
    seq = [t for t, _, _ in lines]
    starts: dict[str, list[int]] = {}
    for i, t in enumerate(seq):
        starts.setdefault(t, []).append(i)
    out = []
    for file, source in recorded.items():
        want = list(comparable(source))
        if not any(want):
            continue
        for i in starts.get(want[0], []):
            if seq[i : i + len(want)] == want:
                # (a block starting on a cell magic's body: its cell's line 1, sent one line down)
                start = lines[i][2] + (1 if i > 0 and lines[i - 1][2] == lines[i][2] else 0)
                out.append(Block(file, start, [t for _, t, _ in lines[i : i + len(want)]]))
                break
    return sorted(out, key=lambda b: b.start)


def carried(moved: Sequence[Block], before: str, text: str) -> list[Block]:
    """``moved``, blocks of the document's earlier text ``before``, followed into ``text``:
    the lines that did not change take a block's first and last lines to where they are now
    (an edit in or around a cell moves its findings with its text, as in a file; the
    findings are then placed on the block's new lines, and one whose line is gone is not
    shown)."""
    old, new = before.splitlines(), text.splitlines()
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()

    def where(line: int, last: bool) -> int:
        for tag, i1, i2, j1, j2 in ops:
            if i1 <= line < i2:
                if tag == "equal":
                    return j1 + line - i1
                return max(j1, j2 - 1) if last else j1
        return len(new)

    lines = _lines(text)
    out = []
    for b in moved:
        first, last = where(b.start, False), where(b.end - 1, True)
        held = [t for _, t, n in lines if first <= n <= last]
        if held:
            out.append(Block(b.path, first, held))
    return out


def block_keys(text: str) -> set[str]:
    """``cell_key`` of each run of lines that may be a cell: cells are joined by two blank
    lines, so a cell starts after two blank lines and ends before them; a cell with double
    blank lines of its own is several such chunks in a row."""
    raw = text.splitlines()
    lines = _lines(text)
    blank = [not raw[n].strip() for _, _, n in lines]
    starts = [i for i in range(len(lines)) if not blank[i] and (i < 2 or (blank[i - 1] and blank[i - 2]))]
    ends = [i for i in range(len(lines)) if not blank[i] and (i + 2 >= len(lines) or (blank[i + 1] and blank[i + 2]))]
    out: set[str] = set()
    for s in starts:
        for e in [e for e in ends if e >= s][:_MAX_CHUNKS]:
            key = key_of([t for t, _, _ in lines[s : e + 1]])
            if key is not None:
                out.add(key)
    return out
