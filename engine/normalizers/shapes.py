"""Dynamic shapes: symbols created, specializations and shape-env guards."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dyn_inspect.engine.normalizers import Context, TraceOut, TraceRecord, emits, handles
from dyn_inspect.engine.normalizers.locations import is_library_file, is_ours, loc_from_interned
from dyn_inspect.engine.schema import Event, Loc, ShapeGuard, Specialization, Symbol


def _user_loc(body: dict[str, Any], ctx: Context) -> Loc | None:
    stack = body.get("user_stack") or []
    if not stack:
        return None
    # The innermost frame is often torch's own (nn/modules/linear.py while tracing a Linear):
    # the line to show is the user's that led there.
    locs = [loc for frame in stack if (loc := loc_from_interned(frame, ctx.filename(frame.get("filename")))) is not None]
    # No user frame: torch's innermost one, never ours (the recorder's hook is on the stack).
    theirs = [loc for loc in locs if not is_ours(loc.file)]
    return next((loc for loc in reversed(locs) if not is_library_file(loc.file)), theirs[-1] if theirs else None)


@handles("create_symbol", "create_unbacked_symbol")
def symbol(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    b = record.body
    yield Symbol(
        symbol=str(b.get("symbol")),
        value=None if b.get("val") is None else str(b.get("val")),
        range=b.get("vr"),
        source=b.get("source"),
        loc=_user_loc(b, ctx),
    )


@handles("symbolic_shape_specialization")
def specialization(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    b = record.body
    yield Specialization(
        symbol=str(b.get("symbol")),
        value=None if b.get("value") is None else str(b.get("value")),
        reason=b.get("reason"),
        source=b.get("sources") and ", ".join(map(str, b["sources"])) or b.get("source"),
        loc=_user_loc(b, ctx),
    )


@handles("guard_added_fast", "guard_added")
def shape_guard(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    b = record.body
    yield ShapeGuard(expr=str(b.get("expr")), loc=_user_loc(b, ctx))


# -- back to TORCH_TRACE -----------------------------------------------------------------


def _user_stack(event: Symbol | Specialization | ShapeGuard, out: TraceOut) -> list[dict[str, Any]]:
    return out.stack(event.t, [event.loc] if event.loc else [])


@emits(Symbol)
def emit_symbol(event: Symbol, out: TraceOut) -> None:
    body = {
        "symbol": event.symbol,
        "val": event.value,
        "vr": event.range,
        "source": event.source,
        "user_stack": _user_stack(event, out),
        "stack": [],
    }
    out.emit(event.t, out.envelope("create_symbol", body, event.cid))


@emits(Specialization)
def emit_specialization(event: Specialization, out: TraceOut) -> None:
    body = {
        "symbol": event.symbol,
        "sources": [event.source] if event.source else [],
        "value": event.value,
        "reason": event.reason,
        "user_stack": _user_stack(event, out),
        "stack": [],
    }
    out.emit(event.t, out.envelope("symbolic_shape_specialization", body, event.cid))


@emits(ShapeGuard)
def emit_shape_guard(event: ShapeGuard, out: TraceOut) -> None:
    body = {"expr": event.expr, "user_stack": _user_stack(event, out), "stack": []}
    out.emit(event.t, out.envelope("guard_added_fast", body, event.cid))
