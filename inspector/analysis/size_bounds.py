"""Which sizes a compile accepts, read off its guard tree: for each input tensor with a
dynamic dim, every dim's bounds (``x.shape[0]`` from 2 to 4096, ``x.shape[1]`` = 3).

The Shapes view listed the guards torch *logged*; the tree torch checks at call time holds
bounds that were never logged as a guard (``2 <=`` from 0/1 specialization) and says a
logged ``y.shape[0] > 8`` as ``9 <= L['y'].size()[0] <= 4096``. This answers "which sizes
reuse this compile" from the tree alone: a tensor's ``TENSOR_MATCH`` gives each dim as
static (``size=[None, 3]``: dim 1 is 3) or dynamic (``None``), and each ``LAMBDA_GUARD`` that
compares one size with an integer (``2 <= L['x'].size()[0] <= 4096``) narrows that dim.
Relations between sizes (``L['a'].size()[1] <= L['b'].size()[1]``) are not bounds of one
dim and are left to the shape guards.

``accepted_sizes(tree)`` returns one ``DimBounds`` per dim of each tensor that has a dynamic
dim, in tree order; an empty list for a static compile or no recorded tree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dyn_inspect.inspector.analysis.guards import GuardLine

_TENSOR_RE = re.compile(r"^check_tensor\((?P<src>.+?), .*?\bsize=\[(?P<sizes>[^\]]*)\]")
_SIZE_SOURCE = r"[LG]\[[^\s]*?\]\.size\(\)\[\d+\]"
_SIZE_RE = re.compile(rf"^{_SIZE_SOURCE}$")
_INT_RE = re.compile(r"^-?\d{1,30}$")
_RELATION = re.compile(r"\s(<=|>=|==|<|>)\s")


@dataclass(frozen=True)
class DimBounds:
    """One dim of one input tensor, as the guard tree accepts it."""

    source: str  # torch's size source: "L['x'].size()[0]"
    low: int  # smallest size accepted
    high: int | None  # largest, None: no upper bound
    dynamic: bool  # False: TENSOR_MATCH fixes it (low == high)

    @property
    def text(self) -> str:
        """``= 3``, ``2..4096`` or ``>= 2``."""
        if self.high is not None and self.low == self.high:
            return f"= {self.low}"
        return f"{self.low}..{self.high}" if self.high is not None else f">= {self.low}"


def tensor_sizes(expr: str) -> tuple[str, list[int | None]] | None:
    """A ``TENSOR_MATCH``'s tensor source and its size per dim (None: dynamic) from
    ``check_tensor(L['x'], …, size=[None, 3], …)``; None when the line says no sizes."""
    m = _TENSOR_RE.match(expr)
    if m is None:
        return None
    texts = [s.strip() for s in m["sizes"].split(",") if s.strip()]
    if not all(s == "None" or _INT_RE.match(s) for s in texts):
        return None
    return m["src"], [None if s == "None" else int(s) for s in texts]


def accepted_sizes(tree: Sequence[GuardLine]) -> list[DimBounds]:
    """Every dim of every tensor with a dynamic dim, with the bounds the tree checks."""
    dims: dict[str, list[int | None]] = {}  # tensor source -> static size per dim, None: dynamic
    for line in tree:
        found = tensor_sizes(line.expr) if line.kind == "TENSOR_MATCH" else None
        if found is not None and None in found[1]:
            dims[found[0]] = found[1]
    bounds: dict[str, list[int | None]] = {}  # size source -> [low, high]
    for tensor, sizes in dims.items():
        for i, size in enumerate(sizes):
            bounds[f"{tensor}.size()[{i}]"] = [0, None] if size is None else [size, size]
    for line in tree:
        if line.kind == "LAMBDA_GUARD":
            for source, op, value in _comparisons(line.expr):
                if source in bounds and not _static(dims, source):
                    _narrow(bounds[source], op, value)
    out = []
    for tensor, sizes in dims.items():
        for i, size in enumerate(sizes):
            source = f"{tensor}.size()[{i}]"
            low, high = bounds[source]
            out.append(DimBounds(source, low or 0, high, dynamic=size is None))
    return out


def _static(dims: dict[str, list[int | None]], source: str) -> bool:
    tensor, _, index = source.rpartition(".size()[")
    return dims[tensor][int(index.rstrip("]"))] is not None


def _comparisons(expr: str) -> list[tuple[str, str, int]]:
    """(size source, op, integer) for each link of a chain that compares one size with an
    integer, with the size on the left: ``2 <= S <= 4096`` -> (S, >=, 2), (S, <=, 4096)."""
    parts = [p.strip() for p in _RELATION.split(expr)]
    out = []
    for i in range(1, len(parts) - 1, 2):
        left, op, right = parts[i - 1], parts[i], parts[i + 1]
        if _SIZE_RE.match(left) and _INT_RE.match(right):
            out.append((left, op, int(right)))
        elif _INT_RE.match(left) and _SIZE_RE.match(right):
            out.append((right, {"<=": ">=", ">=": "<=", "<": ">", ">": "<"}.get(op, op), int(left)))
    return out


def _narrow(bound: list[int | None], op: str, value: int) -> None:
    low, high = bound
    if op in (">=", ">", "=="):
        low = max(low or 0, value + (op == ">"))
    if op in ("<=", "<", "=="):
        top = value - (op == "<")
        high = top if high is None else min(high, top)
    bound[0], bound[1] = low, high
