"""Which of a compile's logged shape guards torch installed.

torch logs a ``guard_added`` record each time a ShapeEnv adds a guard while compiling, but
only the guards of the frame's own ShapeEnv end up in the guard tree that is checked when
the compiled code is called. On a Hugging Face Llama, the backward's compile logged
``Eq(s27, 12)`` and five more equalities for a dim whose installed guard is ``2 <= … <=
2048``: shown as the compile's guards, they said a length of 13 would recompile, and it did
not. So a logged guard counts as installed only when an arithmetic check of the guard tree
(``LAMBDA_GUARD`` lines, in torch's sources: ``L['x'].size()[1] <= 2048``) says the same
relation once sources are turned back into the compile's symbols — compared with sympy
(torch's own symbolic library) after bringing both to ``expr <op> 0`` over the integers:
the coefficients' common factor divided out (``2*s27 <= 4096`` is ``s27 <= 2048``) and a
strict relation made inclusive (a logged ``s17 > 8`` is the tree's ``9 <= L['y'].size()[0]``).
A static dim of a ``TENSOR_MATCH`` (``size=[None, 3]``) checks the equality ``Eq(s27, 3)``.

``installed(tree, symbols, exprs)`` answers True/False per logged expression, or None for
all of them when it cannot say (no guard tree recorded, sympy missing): faces then show the
logged guards unlabelled, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from dyn_inspect.engine.schema import Symbol
from dyn_inspect.inspector.analysis.guards import GuardLine
from dyn_inspect.inspector.analysis.size_bounds import tensor_sizes

_RELATION = re.compile(r"(<=|>=|==|!=|<|>)")
# All a compared text may hold: integers, the compile's symbols, + - * / ( ) and small
# powers. A run is untrusted and sympify evaluates what it parses: nothing else (no name,
# no attribute, no call) ever reaches it, nor a power that would take forever to expand.
_SAFE = re.compile(r"(?:\s|\d{1,30}|[su]\d{1,9}|\*\*\s*[1-4](?![\d(])|\*(?!\*)|[-+/()])+")
_MAX_TEXT = 400
_FLIP = {">=": "<=", ">": "<"}


def installed(tree: Sequence[GuardLine], symbols: Iterable[Symbol], exprs: Sequence[str]) -> list[bool | None]:
    """For each logged guard expression (in symbols: ``Eq(s27, 12)``), whether the guard
    tree checks it; all None when there is no tree to compare with."""
    try:
        import sympy
    except ImportError:  # (sympy comes with torch; a reader without it cannot compare)
        return [None] * len(exprs)
    if not tree:
        return [None] * len(exprs)
    sources = {s.source: s.symbol for s in symbols if s.source and "," not in s.source}
    names = {sym: sympy.Symbol(sym, integer=True) for sym in set(sources.values())}
    checked: set[tuple[str, Any]] = set()
    for line in tree:
        if line.kind == "TENSOR_MATCH":
            for source, size in _static_sizes(line.expr):
                if source in sources:
                    rel = _relation(sympy, names, sources[source], "==", str(size))
                    if rel is not None:
                        checked.add(rel)
        if line.kind != "LAMBDA_GUARD":
            continue
        text = line.expr
        for source in sorted(sources, key=len, reverse=True):
            text = text.replace(source, sources[source])
        if "L[" in text or "G[" in text:
            continue  # not only sizes of this compile's symbols
        parts = _RELATION.split(text)
        for i in range(1, len(parts) - 1, 2):  # "2 <= s27 <= 2048": both relations
            rel = _relation(sympy, names, parts[i - 1], parts[i], parts[i + 1])
            if rel is not None:
                checked.add(rel)
    out: list[bool | None] = []
    for expr in exprs:
        rel = _logged(sympy, names, expr)
        if rel is None:  # (a Mod, a FloorDiv, an unbacked symbol: not comparable here)
            out.append(None)
        else:
            out.append(rel in checked or (rel[0] == "==" and ("==", -rel[1]) in checked))
    return out


def _logged(sympy: Any, names: dict[str, Any], expr: str) -> tuple[str, Any] | None:
    """``Eq(a, b)`` / ``Ne(a, b)`` / ``a <= b`` … as torch logs them, normalized."""
    m = re.fullmatch(r"(Eq|Ne)\((.+)\)", expr.strip())
    if m:
        args = _split_args(m[2])
        if len(args) != 2:
            return None
        return _relation(sympy, names, args[0], "==" if m[1] == "Eq" else "!=", args[1])
    parts = _RELATION.split(expr)
    if len(parts) != 3:
        return None
    return _relation(sympy, names, parts[0], parts[1], parts[2])


def _relation(sympy: Any, names: dict[str, Any], left: str, op: str, right: str) -> tuple[str, Any] | None:
    if not all(len(side) <= _MAX_TEXT and _SAFE.fullmatch(side) for side in (left, right)):
        return None
    if any(name not in names for name in re.findall(r"[su]\d+", f"{left} {right}")):
        return None  # a symbol of no input (an unbacked one): not comparable here
    try:
        diff = sympy.expand(sympy.sympify(left, locals=names) - sympy.sympify(right, locals=names))
    except (sympy.SympifyError, SyntaxError, TypeError, ValueError, AttributeError, RecursionError, MemoryError):
        return None
    if op in _FLIP:
        diff, op = -diff, _FLIP[op]
    if not diff.free_symbols:
        return op, diff
    try:
        poly = sympy.Poly(diff, *sorted(diff.free_symbols, key=str))
    except sympy.PolynomialError:
        return op, diff
    if not all(c.is_integer for c in poly.coeffs()):
        return op, diff
    # Over the integers: `d < 0` is `d + 1 <= 0`, and `g*p + c <= 0` is `p + ceil(c/g) <= 0`
    # (`2*s <= 7` is `s <= 3`); an equality keeps its constant whole.
    if op == "<":
        diff, op = diff + 1, "<="
    const, rest = sympy.expand(diff).as_coeff_Add()
    rest_coeffs = sympy.Poly(rest, *sorted(rest.free_symbols, key=str)).coeffs()
    factor = abs(sympy.gcd_list(rest_coeffs)) if len(rest_coeffs) > 1 else abs(rest_coeffs[0])
    if factor in (0, 1):
        return op, sympy.expand(diff)
    if op == "<=":
        return op, sympy.expand(rest / factor - ((-const) // factor))
    if const % factor == 0:
        return op, sympy.expand(diff / factor)
    return op, sympy.expand(diff)


def _static_sizes(expr: str) -> list[tuple[str, int]]:
    """(size source, size) for each static dim of a ``TENSOR_MATCH``'s ``size=[None, 3]``."""
    found = tensor_sizes(expr)
    if found is None:
        return []
    tensor, sizes = found
    return [(f"{tensor}.size()[{i}]", s) for i, s in enumerate(sizes) if s is not None]


def _split_args(text: str) -> list[str]:
    """``a, f(b, c)`` → ["a", "f(b, c)"]: commas at the top level only."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur.append(ch)
    out.append("".join(cur))
    return [a.strip() for a in out]
