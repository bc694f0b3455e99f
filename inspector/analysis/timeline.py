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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dyn_inspect.engine.schema import Capture, Chromium, GraphBreak, ProcessStart, Recompile, RecompileLimit
from dyn_inspect.inspector.model import CompileInfo
from dyn_inspect.inspector.reader import map_strings
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
    try:
        return msgspec.json.encode(trace)
    except UnicodeEncodeError:  # a name from the run that is no UTF-8 (a log file's bytes)
        return msgspec.json.encode(map_strings(msgspec.to_builtins(trace), _escaped))


def _escaped(text: str) -> str:
    """``text`` with lone surrogates (bytes that were no UTF-8) as ``\\udcff`` escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


# --- the compile timeline the TUI shows: one entry per compile, each with its nested
# breakdown (torch's spans: entire frame → backend → AOTAutograd / Inductor → codegen) ---


@dataclass
class SpanNode:
    """One of torch's timing spans of a compile, with the spans inside it."""

    name: str
    ts: float  # µs since the epoch
    dur: float  # µs
    args: dict[str, Any] = field(default_factory=dict)
    children: list[SpanNode] = field(default_factory=list)
    unfinished: bool = False

    @property
    def seconds(self) -> float:
        return self.dur / 1e6

    def walk(self, depth: int = 0) -> list[tuple[int, SpanNode]]:
        out = [(depth, self)]
        for child in self.children:
            out.extend(child.walk(depth + 1))
        return out


def _nest(spans: list[SpanNode]) -> list[SpanNode]:
    """Spans (one compile, one thread) as a forest: each inside the one that contains it."""
    roots: list[SpanNode] = []
    stack: list[SpanNode] = []
    for span in sorted(spans, key=lambda s: (s.ts, -s.dur)):
        while stack and stack[-1].ts + stack[-1].dur < span.ts + span.dur - 1e-3:
            stack.pop()
        (stack[-1].children if stack else roots).append(span)
        stack.append(span)
    return roots


def compile_breakdowns(run: Run) -> dict[tuple[str, str], list[SpanNode]]:
    """Every compile's span forest, keyed by (log, compile id), from one pass over the logs
    (the model keeps no chromium events: they are most of a run)."""
    open_spans: dict[tuple[str, str, str], list[SpanNode]] = defaultdict(list)
    flat: dict[tuple[str, str], list[SpanNode]] = defaultdict(list)
    last: dict[str, float] = {}
    wanted = set(run.model.processes)
    for log, event in run.events():
        if log not in wanted or not isinstance(event, Chromium) or not event.cid:
            continue
        last[log] = max(last.get(log, 0.0), event.ts)
        key = (log, event.cid, event.name)
        if event.ph == "B":
            open_spans[key].append(SpanNode(event.name, event.ts, 0.0, dict(event.args)))
        elif event.ph == "E" and open_spans.get(key):
            span = open_spans[key].pop()
            span.dur = max(event.ts - span.ts, 0.0)
            span.args.update(event.args)
            flat[(log, event.cid)].append(span)
        elif event.ph == "X":
            flat[(log, event.cid)].append(SpanNode(event.name, event.ts, event.dur or 0.0, dict(event.args)))
    for (log, cid, _), stack in open_spans.items():
        for span in stack:  # began, never ended: the process died (or is still) mid-compile
            span.dur, span.unfinished = max(last.get(log, span.ts) - span.ts, 0.0), True
            flat[(log, cid)].append(span)
    return {key: _nest(spans) for key, spans in flat.items()}


@dataclass(frozen=True)
class TimelineEntry:
    """One compile as the timeline tells it."""

    compile: CompileInfo
    t: float  # seconds since the run started
    what: str  # "compiled", "recompiled", "graph break", "fell back to eager", ...
    why: str  # the recompile's failed guard, the failure, the cache verdict
    cache: str  # "hit", "miss", "bypass", "none"
    seconds: float

    @property
    def function(self) -> str:
        cap = self.compile.capture
        return cap.co_name if cap and cap.co_name else "?"


def _what(c: CompileInfo) -> tuple[str, str]:
    cap = c.capture
    outcome = c.outcome
    why = "; ".join(r.split(": ", 1)[-1] for r in c.recompile.reasons) if c.recompile else ""
    if outcome == "failed":
        return "failed → runs eagerly", ((cap.fail_type or "") + (f": {cap.fail_reason}" if cap.fail_reason else "")) if cap else ""
    if outcome == "recompile_limit":
        return "recompile limit → eager", why
    if outcome in ("skipped", "empty"):
        return "nothing to compile → eager", (cap.fail_reason or "") if cap else ""
    what = "recompiled" if c.recompile else "compiled"
    if outcome == "graph_break":
        what += " (graph break)"
    return what, why


def _verdict(c: CompileInfo) -> str:
    """The cache verdict from the lookups' flags alone (no payload read: the timeline is
    rebuilt while a run grows): as ``analysis.cache.CompileCache.verdict``."""
    states = {"bypass" if e.bypass else "hit" if e.hit else "miss" for e in c.caches}
    if not states:
        return "none"
    if states == {"hit"}:
        return "hit"
    return "bypass" if "bypass" in states else "miss"


def timeline_entries(run: Run) -> list[TimelineEntry]:
    """Every finished or running compile in order of its start, with what happened."""
    m = run.model
    t0 = m.run_start.t if m.run_start and m.run_start.t else None
    out = []
    for c in m.compiles_in_order():
        start = c.start.t if c.start else (c.capture.t if c.capture else 0.0)
        if t0 is None:
            t0 = start
        what, why = _what(c)
        verdict = _verdict(c)
        if verdict == "hit":
            what += ", cache hit"
        out.append(TimelineEntry(c, max(start - (t0 or start), 0.0), what, why, verdict, c.compile_time_s))
    return sorted(out, key=lambda e: e.t)


def trace_for_bundle(run: Run, compile_ids: set[str] | None = None, scrub: Callable[[str], str] | None = None) -> str:
    """``chrome_trace`` as an export bundle stores it: only the selected compiles' spans and
    markers (``compile_ids``; None for the whole run) and, for a redacted bundle, every
    string passed through the bundle's redactor (paths, function names, messages)."""
    trace = chrome_trace(run)
    if compile_ids is not None:
        trace.traceEvents = [
            e for e in trace.traceEvents if e.ph == "M" or e.args.get("compile_id") is None or e.args.get("compile_id") in compile_ids
        ]
    data: Any = msgspec.to_builtins(trace)
    if scrub is not None:
        data = map_strings(data, scrub)
    try:
        return msgspec.json.encode(data).decode()
    except UnicodeEncodeError:  # a name from the run that is no UTF-8 (a log file's bytes)
        return msgspec.json.encode(map_strings(data, _escaped)).decode()
