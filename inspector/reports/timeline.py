"""The compile timeline: every compile in the order it happened with what happened to it,
where one compile's time went as torch's nested spans, and the whole as a Chrome trace
(``inspector/analysis/timeline.py``)."""

from __future__ import annotations

from typing import NamedTuple

from dyn_inspect.inspector.analysis.timeline import SpanNode, chrome_trace, compile_breakdowns, encode, timeline_entries
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.run import Run


def compile_timeline(run: Run) -> list[typed.CompileTimelineRow]:
    """Every finished or running compile in order of its start."""
    out = []
    for e in timeline_entries(run):
        c, cap = e.compile, e.compile.capture
        out.append(
            typed.CompileTimelineRow(
                log=c.log,
                compile_id=c.cid,
                function=e.function,
                file=cap.co_filename if cap is not None and cap.co_filename else None,
                line=cap.co_firstlineno if cap is not None else None,
                t=e.t,
                what=e.what,
                why=e.why,
                is_recompile=c.recompile is not None,
                cache=e.cache,
                seconds=e.seconds,
            )
        )
    return out


def _spans(roots: list[SpanNode]) -> list[typed.TimeSpan]:
    total = sum(r.dur for r in roots) or 1.0
    out = []
    for root in roots:
        for depth, node in root.walk():
            state = node.args.get("cache_state")
            out.append(
                typed.TimeSpan(
                    name=node.name,
                    depth=depth,
                    seconds=node.seconds,
                    share=node.dur / total,
                    cache_state=state if isinstance(state, str) else None,
                    unfinished=node.unfinished,
                )
            )
    return out


def compile_spans(run: Run) -> dict[tuple[str, str], list[typed.TimeSpan]]:
    """Every compile's spans, keyed by (log, compile id): one pass over the logs (the
    model keeps no timing spans: they are most of a run)."""
    return {key: _spans(roots) for key, roots in compile_breakdowns(run).items()}


class TraceFile(NamedTuple):
    """What ``dyn-inspect trace`` writes (``data``, the encoded Chrome trace) and says of it."""

    data: bytes
    spans: int  # torch's stage timings ("X" events)
    markers: int  # our instants: breaks, recompiles, failures


def trace_file(run: Run) -> TraceFile:
    trace = chrome_trace(run)
    spans = sum(1 for e in trace.traceEvents if e.ph == "X")
    markers = sum(1 for e in trace.traceEvents if e.ph == "i" and e.cat == "dyn-inspect")
    return TraceFile(encode(trace), spans, markers)
