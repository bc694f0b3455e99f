"""Guards of each cache entry: ``dynamo_cpp_guards_str`` (the guard tree as text)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dyn_inspect.engine.normalizers import Context, TraceOut, TraceRecord, emits, handles
from dyn_inspect.engine.schema import Event, Guards

_LATENCY_RE = re.compile(r"Guard latency = ([\d.]+) us")
# Leaf guards look like "| +- TENSOR_MATCH: ..."; managers ("GuardManager:") are structure.
_LEAF_RE = re.compile(r"^[| ]*\+- (?!GuardManager|RootGuardManager|DictGuardManager)[A-Z_]+:", re.M)


def count_guards(text: str) -> int:
    return len(_LEAF_RE.findall(text))


@handles("dynamo_cpp_guards_str")
def guards(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    text = record.payload or ""
    m = _LATENCY_RE.search(text)
    yield Guards(count=count_guards(text), text=ctx.blobs.put(text), latency_us=float(m[1]) if m else None)


# -- back to TORCH_TRACE -----------------------------------------------------------------


@emits(Guards)
def emit_guards(event: Guards, out: TraceOut) -> None:
    text = out.text(event, "text", f"guards of {event.cid}")
    if text is not None:
        out.emit(event.t, out.envelope("dynamo_cpp_guards_str", {}, event.cid), text)
