"""The compile timeline: every compile in the order it happened with what happened to it,
and where one compile's time went as torch's nested spans (``inspector/analysis/timeline.py``)."""

from __future__ import annotations

from dyn_inspect.inspector.analysis.timeline import SpanNode, compile_breakdowns, timeline_entries
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
