"""Frame compilations: ``dynamo_start`` (the stack that triggered it) and
``compilation_metrics`` / ``bwd_compilation_metrics`` (outcome, counts, stage times)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

import msgspec

from dyn_inspect.engine.normalizers import NOT_EMITTED, Context, TraceOut, TraceRecord, emits, handles, json_dict
from dyn_inspect.engine.normalizers.locations import is_library_file, loc_from_interned
from dyn_inspect.engine.schema import (
    BackwardCapture,
    Capture,
    CompileStart,
    Event,
    Loc,
    RecompileLimit,
    StageTimes,
)


@handles("str")
def intern_string(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    text, idx = record.body
    ctx.strings[int(idx)] = text
    return ()


@handles("dynamo_start")
def compile_start(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    stack = [loc_from_interned(f, ctx.filename(f.get("filename"))) for f in record.body.get("stack", [])]
    ctx.source_files.update(loc.file for loc in stack)
    user = next((loc for loc in reversed(stack) if not is_library_file(loc.file)), None)
    if user is not None and record.compile_id:
        ctx.call_sites[record.compile_id] = user
    yield CompileStart(
        frame_id=record.metadata.get("frame_id"),
        attempt=int(record.metadata.get("attempt") or 0),
        stack=stack,
        recompile_limit=record.recompile_limit,
    )
    if stack and ctx.pending_restarts:
        from dyn_inspect.engine.normalizers.graph_breaks import resumed_restart_breaks

        yield from resumed_restart_breaks(ctx, stack[-1])


def _sub(a: float | None, b: float | None) -> float | None:
    if a is None:
        return None
    return max(a - (b or 0.0), 0.0)


def _seconds(m: dict[str, Any], seconds_key: str, us_key: str) -> float | None:
    """A timer in seconds; some older torch logs (late 2024 nightlies) carry only the ``*_us`` twin."""
    value = m.get(seconds_key)
    if value is None and isinstance(m.get(us_key), (int, float)):
        return m[us_key] / 1e6
    return value


def stage_times(m: dict[str, Any]) -> StageTimes:
    """Split torch's nested cumulative timers into exclusive per-stage times.

    entire_frame ⊃ backend (AOTAutograd + Inductor) ⊃ inductor ⊃ codegen.
    """
    total = _seconds(m, "entire_frame_compile_time_s", "dynamo_cumulative_compile_time_us")
    backend = _seconds(m, "backend_compile_time_s", "aot_autograd_cumulative_compile_time_us")
    inductor = _seconds(m, "inductor_compile_time_s", "inductor_cumulative_compile_time_us")
    codegen = _seconds(m, "code_gen_time_s", "inductor_code_gen_cumulative_compile_time_us")
    return StageTimes(
        total_s=total,
        dynamo_s=_sub(total, backend),
        aot_s=_sub(backend, inductor),
        inductor_s=_sub(inductor, codegen),
        codegen_s=codegen,
    )


def _is_recompile_limit(fail_type: str | None, fail_reason: str | None) -> bool:
    text = f"{fail_type or ''} {fail_reason or ''}".lower()
    return "recompile limit" in text or "recompilelimitexceeded" in text or "cache_size_limit" in text


def _outcome(m: dict[str, Any], breaks: int) -> str:
    fail_type, fail_reason = m.get("fail_type"), m.get("fail_reason")
    if _is_recompile_limit(fail_type, fail_reason):
        return "recompile_limit"
    # A fail_type means an exception left Dynamo's compile (torch 2.13 catches its own
    # SkipFrame inside the compile and leaves fail_type unset): that is a failure, whatever
    # words its message or the user's code happen to contain ("marked as skipped",
    # ``allow_is_causal_skip``) — unless torch logged it as a graph break of this compile
    # (a break in a loop: torch gives up on the frame, it runs eagerly, nothing is raised),
    # which is how torch's own logs tell the two apart (tests/differential/truth.py).
    if fail_type:
        return "skipped" if breaks else "failed"
    if m.get("has_guarded_code") is False:
        return "skipped"
    # num_graph_breaks in the metrics is not per compile on every version: count our own.
    if breaks:
        return "graph_break"
    if not m.get("graph_op_count"):
        return "empty"
    return "graph"


@handles("compilation_metrics")
def capture(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    m: dict[str, Any] = record.body
    cid = ctx.qualify(m.get("compile_id")) or record.compile_id
    ctx.captured.add(str(cid))
    warned = ctx.pending_warning.pop(str(cid), None)
    if warned is not None and not m.get("fail_type") and not ctx.breaks_in_compile.get(str(cid), 0):
        # torch warned of a break (GB0219) and logged none after it: the warning is the break
        ctx.breaks_in_compile[str(cid)] += 1
        yield msgspec.structs.replace(warned, cid=cid, t=record.t)
    breaks = ctx.breaks_in_compile.get(str(cid), 0)
    if m.get("restart_reasons") and not breaks:
        from dyn_inspect.engine.normalizers.graph_breaks import hold_restart_breaks

        frame = (m.get("co_name"), m.get("co_filename"), m.get("co_firstlineno"))
        hold_restart_breaks(ctx, str(cid), record.t, [str(r) for r in m["restart_reasons"]], frame)
    fail_loc = None
    if m.get("fail_user_frame_filename") and m.get("fail_user_frame_lineno"):
        fail_loc = Loc(file=m["fail_user_frame_filename"], line=int(m["fail_user_frame_lineno"]))
    caches: Counter[str] = ctx.cache_counts.get(str(cid), Counter())
    outcome = _outcome(m, breaks)
    # A compile refused by the recompile limit carries no code object: it is the same
    # frame (frame_id) as the compiles before it.
    frame_id = (ctx.epoch, record.metadata.get("frame_id"))  # frame ids restart after a reset
    if m.get("co_name") is not None:
        ctx.frames[frame_id] = (m.get("co_name"), m.get("co_filename"), m.get("co_firstlineno"))
    co_name, co_filename, co_firstlineno = (
        (m.get("co_name"), m.get("co_filename"), m.get("co_firstlineno"))
        if m.get("co_name") is not None
        else ctx.frames.get(frame_id, (None, None, None))
    )
    yield Capture(
        cid=cid,
        co_name=co_name,
        co_filename=co_filename,
        co_firstlineno=co_firstlineno,
        outcome=outcome,  # type: ignore[arg-type]
        graph_op_count=m.get("graph_op_count"),
        graph_node_count=m.get("graph_node_count"),
        graph_input_count=m.get("graph_input_count"),
        guard_count=m.get("guard_count"),
        shape_env_guard_count=m.get("shape_env_guard_count"),
        cache_size=m.get("cache_size"),
        accumulated_cache_size=m.get("accumulated_cache_size"),
        times=stage_times(m),
        fail_type=m.get("fail_type"),
        fail_reason=m.get("fail_reason"),
        fail_loc=fail_loc,
        restart_reasons=list(m.get("restart_reasons") or []),
        recompile_reason=m.get("recompile_reason"),
        graph_breaks=breaks,
        fx_cache_hits=int(m.get("inductor_fx_local_cache_hit_count") or caches.get("fx_graph:hit", 0)),
        fx_cache_misses=int(m.get("inductor_fx_local_cache_miss_count") or caches.get("fx_graph:miss", 0)),
        aot_cache_hits=int(m.get("aotautograd_local_cache_hit_count") or caches.get("aotautograd:hit", 0)),
        aot_cache_misses=int(m.get("aotautograd_local_cache_miss_count") or caches.get("aotautograd:miss", 0)),
        metrics=ctx.blobs.put(json.dumps(m, default=str)),
    )
    if outcome == "recompile_limit":
        yield RecompileLimit(
            cid=cid,
            co_name=co_name,
            co_filename=co_filename,
            co_firstlineno=co_firstlineno,
            reason=str(m.get("fail_reason") or m.get("fail_type") or ""),
        )


@handles("bwd_compilation_metrics")
def backward_capture(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    m: dict[str, Any] = record.body
    yield BackwardCapture(
        cid=ctx.qualify(m.get("compile_id")) or record.compile_id,
        times=StageTimes(
            total_s=m.get("inductor_compile_time_s"),
            inductor_s=_sub(m.get("inductor_compile_time_s"), m.get("code_gen_time_s")),
            codegen_s=m.get("code_gen_time_s"),
        ),
        metrics=ctx.blobs.put(json.dumps(m, default=str)),
    )


# -- back to TORCH_TRACE -----------------------------------------------------------------


@emits(CompileStart)
def emit_compile_start(event: CompileStart, out: TraceOut) -> None:
    if event.cid is not None:
        out.attempts[event.cid] = event.attempt
    out.emit(event.t, out.envelope("dynamo_start", {"stack": out.stack(event.t, event.stack)}, event.cid))


@emits(Capture)
def emit_capture(event: Capture, out: TraceOut) -> None:
    """torch's whole record when the metrics blob is there, else the fields we parsed."""
    body = json_dict(out.text(event, "metrics", f"compilation metrics of {event.cid}")) or {
        "compile_id": event.cid,
        "co_name": event.co_name,
        "co_filename": event.co_filename,
        "co_firstlineno": event.co_firstlineno,
        "fail_type": event.fail_type,
        "fail_reason": event.fail_reason,
        "restart_reasons": event.restart_reasons,
        "graph_op_count": event.graph_op_count,
        "entire_frame_compile_time_s": event.times.total_s,
    }
    out.emit(event.t, out.envelope("compilation_metrics", body, event.cid))


@emits(BackwardCapture)
def emit_backward_capture(event: BackwardCapture, out: TraceOut) -> None:
    body = json_dict(out.text(event, "metrics", f"backward metrics of {event.cid}")) or {
        "inductor_compile_time_s": event.times.total_s,
        "code_gen_time_s": event.times.codegen_s,
    }
    out.emit(event.t, out.envelope("bwd_compilation_metrics", body, event.cid))


NOT_EMITTED.add(RecompileLimit)  # derived from the metrics, which are written whole
