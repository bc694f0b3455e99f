"""Which line of a Triton kernel's source each IR line came from: the side-by-side view.

Triton writes debug locations into every stage it keeps as text, each in its own syntax:

- TTIR / TTGIR (MLIR): an operation ends in ``loc(#locN)`` (or an inline ``loc(...)``),
  defined at the top as ``#locN = loc("file.py":L:C)``, a named location
  ``loc("tmp0"(#locM))``, or an inlined call ``loc(callsite(#callee at #caller))``;
- LLIR: an instruction carries ``!dbg !N``, ``!N = !DILocation(line: L, ..., inlinedAt: !M)``;
- PTX: ``.loc F L C`` directives set the line of the instructions that follow, ``F`` a
  ``.file`` index.

A location inside a helper Triton inlined (``triton_helpers.py``, ``libdevice``) is mapped
to the kernel line that called it: the caller side of a callsite, the outermost
``inlinedAt``. Lines of the kernel file only; the kernel file is the one most locations
name (for MLIR, the file of the kernel function's own ``#loc``). SASS from ``cuobjdump -sass`` carries no line information: no map.

Public API: ``line_map(stage, text) -> list[(source line | None, [IR lines])]`` in IR order,
consecutive IR lines of one source line grouped; ``MAPPED_STAGES``.
"""

from __future__ import annotations

import re
from collections import Counter

MAPPED_STAGES = ("ttir", "ttgir", "llir", "ptx")

_MLIR_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_MLIR_USE = re.compile(r"loc\(((?:[^()]|\([^()]*\))*)\)\s*$")
_MLIR_FILE = re.compile(r'^"([^"]+)":(\d+):\d+$')
_MLIR_NAMED = re.compile(r'^"[^"]*"\((#loc\d*)\)$')
_MLIR_CALLSITE = re.compile(r"^callsite\((#loc\d*) at (#loc\d*)\)$")
_LL_DBG = re.compile(r"!dbg (!\d+)")
_LL_LOC = re.compile(r"^(!\d+) = !DILocation\(line: (\d+)(?:.*?inlinedAt: (!\d+))?")
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,?\s*"([^"]*)")?')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+")

Groups = list[tuple[int | None, list[str]]]


def line_map(stage: str, text: str) -> Groups:
    """The IR's lines grouped by the kernel source line they came from (None: no line)."""
    if stage in ("ttir", "ttgir"):
        pairs = _mlir(text)
    elif stage == "llir":
        pairs = _llir(text)
    elif stage == "ptx":
        pairs = _ptx(text)
    else:
        return [(None, text.splitlines())]
    out: Groups = []
    for line, ir in pairs:
        if out and out[-1][0] == line:
            out[-1][1].append(ir)
        else:
            out.append((line, [ir]))
    return out


def _mlir(text: str) -> list[tuple[int | None, str]]:
    defs: dict[str, str] = {}
    body: list[str] = []
    for raw in text.splitlines():
        m = _MLIR_DEF.match(raw)
        if m:
            defs[m[1]] = m[2]
        elif not raw.startswith("#"):
            body.append(raw)
    # The kernel's file: where its function is (``#loc``, the tt.func's own location),
    # else the file most locations name.
    files = Counter(m[1] for v in defs.values() if (m := _MLIR_FILE.match(v)))
    own = _MLIR_FILE.match(defs.get("#loc", ""))
    kernel = own[1] if own else (files.most_common(1)[0][0] if files else None)

    def resolve(expr: str, depth: int = 0) -> tuple[str, int] | None:
        if depth > 32:
            return None
        expr = expr.strip()
        if expr.startswith("#loc"):
            return resolve(defs.get(expr, "unknown"), depth + 1)
        if m := _MLIR_FILE.match(expr):
            return m[1], int(m[2])
        if m := _MLIR_NAMED.match(expr):
            return resolve(m[1], depth + 1)
        if m := _MLIR_CALLSITE.match(expr):
            callee = resolve(m[1], depth + 1)
            return callee if callee is not None and callee[0] == kernel else resolve(m[2], depth + 1)
        return None

    out: list[tuple[int | None, str]] = []
    current: int | None = None
    for raw in body:
        m = _MLIR_USE.search(raw)
        if m:
            where = resolve(m[1])
            current = where[1] if where is not None and where[0] == kernel else None
        out.append((current, raw))
    return out


def _llir(text: str) -> list[tuple[int | None, str]]:
    locs: dict[str, tuple[int, str | None]] = {}
    for raw in text.splitlines():
        m = _LL_LOC.match(raw)
        if m:
            locs[m[1]] = (int(m[2]), m[3])

    def outermost(ref: str) -> int | None:
        seen = 0
        while ref in locs and seen < 64:
            line, up = locs[ref]
            if up is None:
                return line
            ref, seen = up, seen + 1
        return None

    out: list[tuple[int | None, str]] = []
    current: int | None = None
    for raw in text.splitlines():
        if raw.startswith("!"):
            continue  # metadata definitions
        m = _LL_DBG.search(raw)
        if m:
            current = outermost(m[1])
        elif not raw.startswith(" "):
            current = None  # declarations, attributes, a function's braces
        out.append((current, raw))
    return out


def _ptx(text: str) -> list[tuple[int | None, str]]:
    lines = text.splitlines()
    uses: Counter[str] = Counter()
    for raw in lines:
        m = _PTX_LOC.match(raw)
        if m and m[2] != "0":
            uses[m[1]] += 1
    kernel = uses.most_common(1)[0][0] if uses else None
    out: list[tuple[int | None, str]] = []
    current: int | None = None
    for raw in lines:
        if _PTX_FILE.match(raw):
            continue
        m = _PTX_LOC.match(raw)
        if m:
            line = int(m[2])
            current = line if m[1] == kernel and line > 0 else None
            continue  # the directive itself: its line is the group's
        out.append((current, raw))
    return out
