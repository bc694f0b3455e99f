"""Small kinds: bytecode dumps, cache hit/miss artifacts, chromium timing events, and the
fallback for named artifacts without a dedicated event (fx_graph_runnable, configs...)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable

from dyn_inspect.engine.normalizers import Context, TraceOut, TraceRecord, emits, handles, handles_artifact
from dyn_inspect.engine.schema import Artifact, Bytecode, CacheEvent, Chromium, Event

_BYTECODE_RE = re.compile(r"^(?P<fn>.+)_(?P<which>ORIGINAL|MODIFIED)_BYTECODE$")
_CACHE_RE = re.compile(r"^(?P<cache>\w+?)_cache_(?P<state>hit|miss|bypass)$")


@handles_artifact(pattern=r".+_(ORIGINAL|MODIFIED)_BYTECODE$")
def bytecode(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    m = _BYTECODE_RE.match(record.body["name"])
    assert m is not None
    yield Bytecode(function=m["fn"], which=m["which"].lower(), code=ctx.blobs.put(record.payload or ""))  # type: ignore[arg-type]


@handles_artifact(pattern=r"^\w+_cache_(hit|miss|bypass)$")
def cache(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    m = _CACHE_RE.match(record.body["name"])
    assert m is not None
    key = None
    try:
        detail = json.loads(record.payload or "{}")
        key = detail.get("key") if isinstance(detail, dict) else None
    except json.JSONDecodeError:
        pass
    hit = m["state"] == "hit"
    cid = record.compile_id or ""
    ctx.cache_counts.setdefault(cid, Counter())[f"{m['cache']}:{m['state']}"] += 1
    yield CacheEvent(
        cache=m["cache"],
        hit=hit,
        bypass=m["state"] == "bypass",
        key=key,
        detail=ctx.blobs.put(record.payload) if record.payload else None,
    )


@handles("chromium_event")
def chromium(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    e = json.loads(record.payload or "{}")
    args = e.get("args") or {}
    cid = args.get("compile_id")
    if e.get("name") == "dynamo" and e.get("ph") == "B":  # the first record of a frame compile
        ctx.note_begin(cid or record.torch_compile_id, "dynamo_span")
    yield Chromium(
        cid=ctx.qualify(cid) or record.compile_id,
        name=str(e.get("name")),
        ph=str(e.get("ph")),
        ts=float(e.get("ts") or 0.0),
        cat=e.get("cat"),
        args=args,
        dur=float(e["dur"]) if isinstance(e.get("dur"), (int, float)) else None,
    )


@handles("artifact")
def artifact(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    body = record.body or {}
    yield Artifact(
        name=str(body.get("name")),
        encoding=body.get("encoding"),
        payload=ctx.blobs.put(record.payload) if record.payload is not None else None,
    )


# -- back to TORCH_TRACE -----------------------------------------------------------------


@emits(Bytecode)
def emit_bytecode(event: Bytecode, out: TraceOut) -> None:
    text = out.text(event, "code", f"bytecode of {event.cid}")
    if text is not None:
        name = f"{event.function}_{event.which.upper()}_BYTECODE"
        out.emit(event.t, out.envelope("artifact", {"name": name, "encoding": "string"}, event.cid), text)


@emits(CacheEvent)
def emit_cache(event: CacheEvent, out: TraceOut) -> None:
    detail = out.text(event, "detail", f"{event.cache} cache record of {event.cid}") if event.detail else None
    name = f"{event.cache}_cache_{'hit' if event.hit else 'miss'}"
    out.emit(event.t, out.envelope("artifact", {"name": name, "encoding": "json"}, event.cid), detail or json.dumps({"key": event.key}))


@emits(Artifact)
def emit_artifact(event: Artifact, out: TraceOut) -> None:
    text = out.text(event, "payload", f"artifact {event.name} of {event.cid}")
    if event.payload is not None and text is None:
        return
    out.emit(event.t, out.envelope("artifact", {"name": event.name, "encoding": event.encoding or "string"}, event.cid), text)


@emits(Chromium)
def emit_chromium(event: Chromium, out: TraceOut) -> None:
    body = {"name": event.name, "ph": event.ph, "ts": event.ts, "cat": event.cat, "args": event.args, "pid": out.pid, "tid": 0}
    out.emit(event.t, out.envelope("chromium_event", {}, event.cid), json.dumps(body, default=str))
