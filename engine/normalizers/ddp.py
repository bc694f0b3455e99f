"""DDPOptimizer's splits: ``optimize_ddp_split_graph`` (the split graph) and one
``optimize_ddp_split_child`` per bucket. Under ``torch.compile(DDP(model))`` Dynamo hands the
captured graph to DDPOptimizer, which cuts it where DDP's gradient buckets end so each
bucket's all-reduce can start while the backward goes on; these cuts are no graph break of
the user's code. Each bucket's parameter bytes and first source line are read here, once,
from the child graph torch printed."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from dyn_inspect.engine.normalizers import Context, TraceOut, TraceRecord, emits, handles
from dyn_inspect.engine.normalizers.graphs import node_lines
from dyn_inspect.engine.schema import DdpBucket, DdpSplit, Event, Loc

# `l_self_modules_fc_parameters_weight_: "f32[512, 512]"` in the child's forward signature.
_INPUT_RE = re.compile(r'(?P<name>\w+): "(?P<dtype>[a-z]+\d*(?:e\d+m\d+\w*)?)\[(?P<shape>[^\]]*)\]')
# Bytes per element of the dtypes' short names as FX prints them (torch/_subclasses, dtype_abbrs).
_ITEM_BYTES = {
    "f64": 8, "f32": 4, "f16": 2, "bf16": 2, "c128": 16, "c64": 8, "c32": 4,
    "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u64": 8, "u32": 4, "u16": 2, "u8": 1, "b8": 1,
}  # fmt: skip


def bucket_params(code: str) -> tuple[list[str], int | None]:
    """The parameter inputs of a child graph (Dynamo names a module's parameter
    ``…_parameters_<name>_``) and their bytes; None when a shape or dtype is not concrete."""
    signature = next((line for line in code.splitlines() if line.lstrip().startswith("def forward(")), "")
    names: list[str] = []
    total: int | None = 0
    for m in _INPUT_RE.finditer(signature):
        if "_parameters_" not in m["name"]:
            continue
        names.append(m["name"])
        dims = [d.strip() for d in m["shape"].split(",") if d.strip()]
        item = _ITEM_BYTES.get(m["dtype"]) or (1 if m["dtype"].startswith("f8") else None)
        if total is None or item is None or not all(d.isdigit() for d in dims):
            total = None
            continue
        total += item * math.prod(int(d) for d in dims)
    return names, total


def _first_line(code: str) -> Loc | None:
    lines = node_lines(code)
    return next(iter(lines.values()), None)


@handles("optimize_ddp_split_graph")
def split_graph(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    cap, first = record.ddp_caps or (None, None)
    yield DdpSplit(graph=ctx.blobs.put(record.payload) if record.payload else None, bucket_bytes_cap=cap, first_bucket_bytes=first)


@handles("optimize_ddp_split_child")
def split_child(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    code = record.payload or ""
    params, size = bucket_params(code)
    yield DdpBucket(
        name=str((record.body or {}).get("name") or "?"),
        graph=ctx.blobs.put(code) if code else None,
        param_bytes=size if params else 0,
        params=params,
        loc=_first_line(code),
    )


@emits(DdpSplit)
def emit_split(event: DdpSplit, out: TraceOut) -> None:
    text = out.text(event, "graph", f"DDP split graph of {event.cid}") if event.graph else None
    out.emit(event.t, out.envelope("optimize_ddp_split_graph", {}, event.cid), text)


@emits(DdpBucket)
def emit_bucket(event: DdpBucket, out: TraceOut) -> None:
    text = out.text(event, "graph", f"DDP bucket {event.name} of {event.cid}") if event.graph else None
    out.emit(event.t, out.envelope("optimize_ddp_split_child", {"name": event.name}, event.cid), text)
