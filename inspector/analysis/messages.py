"""What a graph break is about, said first.

torch's messages lead with the least useful text: the reason is "Encountered graph break
when attempting to trace CALL: a function call, e.g. f(x, y):", the type "Failed to trace
builtin operator", and the operator (``print``) appears only in the explanation.
``headline(event)`` names the thing the user wrote — "`print(...)` can't be traced" —
from torch's own words (type, explanation, reason, debug context), and falls back to torch's type when
no rule knows the break. ``label(event)`` adds the gb id: "`print(...)` can't be traced
(GB0059)". Faces show the headline first and torch's text (reason, explanation, hints,
labelled as torch's) below it.
"""

from __future__ import annotations

import re

from dyn_inspect.engine.schema import GraphBreak

_BUILTIN_RE = re.compile(r"builtin operator `(?P<op>[^`]+)`")
_SKIPPED_RE = re.compile(
    r"(?:function|method|callable) `?(?P<fn>[\w.<>]+)`? (?:is|was) (?:marked as )?skipped|skipped function `?(?P<fn2>[\w.<>]+)`?", re.I
)
_TENSOR_METHOD_RE = re.compile(r"Tensor\.(?P<m>\w+)\(\)")
# GB0112's debug context: "TypeError <built-in method sin ...>: sin() takes 1 positional
# argument but 2 were given" (torch: f"TypeError {node.target}: {cause}")
_TYPE_ERROR_RE = re.compile(r"^TypeError (?:<[^>]*>|\S+): (?P<msg>.+)", re.S)


def headline(e: GraphBreak) -> str:
    kind = e.gb_type or ""
    text = f"{kind}\n{e.explanation}\n{e.reason}"
    m = _BUILTIN_RE.search(text)
    if m and ("builtin operator" in kind.lower() or "builtin" in e.explanation.lower()):
        return f"`{m['op']}(...)` can't be traced"
    low = kind.lower()
    error = _TYPE_ERROR_RE.match(e.context)
    if error and "typeerror" in low:
        # the call's own error is what the user must fix; torch's type only says where it surfaced
        return f"TypeError: {error['msg'].strip()}"
    if low.startswith("data-dependent branching"):
        return "`if`/`while` on a tensor's value (data-dependent branch)"
    if "graph_break()" in kind:
        return "an explicit `torch._dynamo.graph_break()`"
    if low.startswith("graph break in loop"):
        return "a graph break inside a loop: the whole frame falls back to eager"
    method = _TENSOR_METHOD_RE.search(kind)
    if method and ("item" in method["m"] or "tolist" in method["m"]):
        return f"`.{method['m']}()` leaves the graph (a Python value)"
    m2 = _SKIPPED_RE.search(text)
    if m2 and "skip" in low:
        return f"`{m2['fn'] or m2['fn2']}` is skipped by Dynamo"
    return kind or e.reason or "graph break"


def label(e: GraphBreak) -> str:
    """The headline with torch's gb id: what lists and squiggles show first."""
    return f"{headline(e)} ({e.gb_id})" if e.gb_id else headline(e)
