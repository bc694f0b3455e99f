"""Dynamic shapes: symbols created, specializations and shape-env guards."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dyn_inspect.engine.normalizers import Context, TraceRecord, handles
from dyn_inspect.engine.normalizers.locations import loc_from_interned
from dyn_inspect.engine.schema import Event, Loc, ShapeGuard, Specialization, Symbol


def _user_loc(body: dict[str, Any], ctx: Context) -> Loc | None:
    stack = body.get("user_stack") or []
    if not stack:
        return None
    frame = stack[-1]
    return loc_from_interned(frame, ctx.filename(frame.get("filename")))


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
