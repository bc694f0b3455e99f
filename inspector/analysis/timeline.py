"""The run as a Chrome trace (the JSON Perfetto and chrome://tracing open).

Torch's own timing events (``chromium_event`` records: Dynamo, AOTAutograd, Inductor,
codegen, autotuning, cache lookups) are paired into complete ("X") spans, one process
track per recorded process (rank), plus dyn-inspect's markers on a track of their own:
graph breaks, recompiles with the guard that failed, the recompile limit, compile
failures. Both clocks are wall time (torch's ``ts`` is µs since the epoch, our events'
``t`` seconds since the epoch), so the markers sit where they happened.

Spans are nested per thread the way the trace format requires (a child inside its parent,
never partly overlapping): a span that would overlap its neighbour partially goes to an
extra lane of the same process rather than being dropped or drawn wrongly.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dyn_inspect.engine.schema import Capture, Chromium, GraphBreak, ProcessStart, Recompile, RecompileLimit
from dyn_inspect.inspector.run import Run

COMPILE_TID = 0
MARKER_TID = 1
EXTRA_LANE_TID = 2  # first tid for spans that overlap their neighbours partially


class TraceEvent(msgspec.Struct, omit_defaults=True):
    """One Chrome trace event (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU)."""

    name: str
    ph: str
    pid: int
    tid: int
    ts: float = 0.0
    dur: float | None = None
    cat: str | None = None
    s: str | None = None  # instant events: "t" (thread), "p" (process), "g" (global)
    args: dict[str, Any] = {}


class ChromeTrace(msgspec.Struct):
    traceEvents: list[TraceEvent]  # noqa: N815 - the format's key
    displayTimeUnit: str = "ms"  # noqa: N815
    otherData: dict[str, Any] = {}  # noqa: N815


@dataclass
class _Span:
    name: str
    ts: float
    cat: str | None
    args: dict[str, Any]
    dur: float = 0.0
    unfinished: bool = False


@dataclass
class _Process:
    pid: int
    label: str
    spans: list[_Span] = field(default_factory=list)
    open: dict[str, list[_Span]] = field(default_factory=lambda: defaultdict(list))
    instants: list[TraceEvent] = field(default_factory=list)
    last_ts: float = 0.0


def _us(t: float) -> float:
    return round(t * 1e6, 3)


def _label(start: ProcessStart | None, log: str) -> str:
    if start is None:
        return log
    rank = f"rank {start.rank} · " if start.rank is not None else ""
    argv = " ".join(start.argv[:2]) if start.argv else "python"
    return f"{rank}pid {start.pid} · {argv}"


def _lanes(spans: list[_Span]) -> list[list[_Span]]:
    """Spans split into lanes in which each span nests inside the one it starts in."""
    lanes: list[list[_Span]] = []
    stacks: list[list[_Span]] = []
    for span in sorted(spans, key=lambda s: (s.ts, -s.dur)):
        end = span.ts + span.dur
        for lane, stack in zip(lanes, stacks, strict=True):
            while stack and stack[-1].ts + stack[-1].dur <= span.ts:
                stack.pop()
            if not stack or end <= stack[-1].ts + stack[-1].dur:
                lane.append(span)
                stack.append(span)
                break
        else:
            lanes.append([span])
            stacks.append([span])
    return lanes


def chrome_trace(run: Run) -> ChromeTrace:
    """Every process's compile timeline and dyn-inspect's markers, as one trace."""
    procs: dict[str, _Process] = {}

    def proc(log: str) -> _Process:
        p = procs.get(log)
        if p is None:
            process = run.model.processes.get(log)
            start = process.start if process else None
            pid = start.pid if start else len(procs) + 1
            p = procs[log] = _Process(pid=pid, label=_label(start, log))
        return p

    frame_names = {(c.log, c.cid): (c.capture.co_name if c.capture else None) for c in run.model.compiles.values()}
    wanted = set(run.model.processes)  # --rank narrows the model to some processes' logs
    for log, event in run.events():
        if log not in wanted:
            continue
        if isinstance(event, Chromium):
            p = proc(log)
            p.last_ts = max(p.last_ts, event.ts)
            args = dict(event.args)
            if event.cid:
                args["compile_id"] = event.cid  # ours: unique across torch._dynamo.reset()
            if event.ph == "B":
                p.open[event.name].append(_Span(event.name, event.ts, event.cat, args))
            elif event.ph == "E":
                stack = p.open.get(event.name)
                if stack:
                    span = stack.pop()
                    span.dur = max(event.ts - span.ts, 0.0)
                    span.args.update({k: v for k, v in args.items() if k not in span.args})
                    p.spans.append(span)
            elif event.ph == "X":
                p.spans.append(_Span(event.name, event.ts, event.cat, args, event.dur or 0.0))
            else:  # "i" / "I" / counters: an instant on the compile track
                p.instants.append(TraceEvent(event.name, "i", p.pid, COMPILE_TID, ts=event.ts, cat=event.cat, s="t", args=args))
            continue
        marker = _marker(event, frame_names.get((log, event.cid or "")))
        if marker is not None:
            p = proc(log)
            name, args = marker
            p.instants.append(TraceEvent(name, "i", p.pid, MARKER_TID, ts=_us(event.t), cat="dyn-inspect", s="t", args=args))
            p.last_ts = max(p.last_ts, _us(event.t))

    out: list[TraceEvent] = []
    for p in procs.values():
        for stack in p.open.values():  # began, never ended: the process died mid-compile
            for span in stack:
                span.dur, span.unfinished = max(p.last_ts - span.ts, 0.0), True
                span.args["unfinished"] = True
                p.spans.append(span)
        out.append(TraceEvent("process_name", "M", p.pid, 0, args={"name": p.label}))
        out.append(TraceEvent("thread_name", "M", p.pid, COMPILE_TID, args={"name": "torch.compile"}))
        out.append(TraceEvent("thread_name", "M", p.pid, MARKER_TID, args={"name": "graph breaks · recompiles"}))
        for index, lane in enumerate(_lanes(p.spans)):
            tid = COMPILE_TID if index == 0 else EXTRA_LANE_TID + index - 1
            if index:
                out.append(TraceEvent("thread_name", "M", p.pid, tid, args={"name": f"torch.compile (overlapping, {index})"}))
            for span in lane:
                out.append(TraceEvent(span.name, "X", p.pid, tid, ts=span.ts, dur=round(span.dur, 3), cat=span.cat, args=span.args))
        out.extend(p.instants)
    return ChromeTrace(traceEvents=out, otherData={"run": str(run.path), "writer": "dyn-inspect"})


def _marker(event: object, frame: str | None) -> tuple[str, dict[str, Any]] | None:
    """Our own events worth a marker on the timeline: (name, args)."""
    if isinstance(event, GraphBreak):
        return (
            f"graph break: {event.gb_type}",
            {"compile_id": event.cid, "at": f"{event.loc.file}:{event.loc.line}", "gb_id": event.gb_id, "reason": event.reason},
        )
    if isinstance(event, Recompile):
        return (f"recompile: {frame or '?'}", {"compile_id": event.cid, "failed guards": list(event.reasons)})
    if isinstance(event, RecompileLimit):
        return (f"recompile limit: {event.co_name or '?'}", {"compile_id": event.cid, "reason": event.reason})
    if isinstance(event, Capture) and event.outcome == "failed":
        return (f"compile failed: {event.co_name or '?'}", {"compile_id": event.cid, "error": event.fail_type, "reason": event.fail_reason})
    return None


def encode(trace: ChromeTrace) -> bytes:
    return msgspec.json.encode(trace)
