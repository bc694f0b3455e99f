"""Recompiles: the ``recompile_reasons`` artifact (a JSON list on 2.9, a bare string for a
single reason on 2.11+, a list otherwise)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from dyn_inspect.engine.normalizers import Context, TraceOut, TraceRecord, emits, handles_artifact
from dyn_inspect.engine.schema import Event, Recompile


def parse_reasons(payload: str) -> list[str]:
    text = payload.strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, list):
            return [str(v) for v in value]
    if text.startswith('"'):
        try:
            return [str(json.loads(text))]
        except json.JSONDecodeError:
            pass
    return [text] if text else []


@handles_artifact("recompile_reasons")
def recompile(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    payload = record.payload or ""
    # 2.11+ appends "User stack trace:" to each reason; the event keeps the first part,
    # the whole text stays in the blob.
    reasons = [r.split("\nUser stack trace:", 1)[0].strip() for r in parse_reasons(payload)]
    yield Recompile(reasons=reasons, text=ctx.blobs.put(payload) if payload else None)


# -- back to TORCH_TRACE -----------------------------------------------------------------


@emits(Recompile)
def emit_recompile(event: Recompile, out: TraceOut) -> None:
    text = out.text(event, "text", f"recompile reasons of {event.cid}")
    if text is None:
        text = json.dumps(event.reasons)
    out.emit(event.t, out.envelope("artifact", {"name": "recompile_reasons", "encoding": "string"}, event.cid), text)
