"""Why the run recompiled: the recompiles in order, and per frame the timeline of its
compiles — which guard failed on what value, the suggestion, where the recompile limit was
hit (``inspector/analysis/recompiles.py``, ``inspector/analysis/guard_failures.py``)."""

from __future__ import annotations

from dataclasses import asdict

from dyn_inspect.inspector.analysis.guard_failures import GuardFailure
from dyn_inspect.inspector.analysis.recompiles import TimelineEntry, frames_with_recompiles, recompile_limit_of, recompile_timeline
from dyn_inspect.inspector.locations import def_line
from dyn_inspect.inspector.model import FrameInfo, RecompileInfo, RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.run import Run


def recompile_row(r: RecompileInfo) -> typed.RecompileRow:
    c = r.compile
    cap = c.capture
    return typed.RecompileRow(
        compile_id=c.cid,
        function=cap.co_name if cap else None,
        file=cap.co_filename if cap else None,
        line=cap.co_firstlineno if cap else None,
        reasons=list(r.event.reasons),
        cache_size=cap.cache_size if cap else None,
    )


def guard_failure(f: GuardFailure) -> typed.GuardFailure:
    return typed.GuardFailure(**asdict(f))


def timeline_entry(e: TimelineEntry) -> typed.TimelineEntry:
    c = e.compile
    return typed.TimelineEntry(
        index=e.index,
        compile_id=e.cid,
        t=e.t,
        outcome=c.outcome,
        compile_time_s=round(c.compile_time_s, 4),
        failures=[guard_failure(f) for f in e.failures],
        suggestion=typed.Suggestion(**asdict(e.suggestion)) if e.suggestion else None,
        limit_reached=e.limit_reached,
    )


def recompiled_frame(frame: FrameInfo, timeline: list[TimelineEntry], limit: int | None) -> typed.RecompiledFrame:
    return typed.RecompiledFrame(
        function=frame.name,
        file=frame.filename,
        line=frame.firstlineno,
        def_line=def_line(frame.filename, frame.firstlineno),
        log=frame.log,
        compiles=len(frame.compiles),
        recompiles=sum(1 for e in timeline if e.is_recompile),
        recompile_limit=limit,
        limit_reached=any(e.limit_reached for e in timeline),
        timeline=[timeline_entry(e) for e in timeline],
    )


def frame_timelines(model: RunModel, every_frame: bool = False) -> list[tuple[FrameInfo, list[TimelineEntry], int | None]]:
    """Each frame that recompiled (``every_frame``: each frame) with its timeline and its
    recompile limit."""
    frames = model.frames_in_order() if every_frame else frames_with_recompiles(model)
    return [(f, recompile_timeline(model, f), recompile_limit_of(model, f)) for f in frames]


def recompiles_report(run: Run, rows: list[tuple[FrameInfo, list[TimelineEntry], int | None]]) -> typed.RecompilesReport:
    """What ``recompiles --json`` prints: ``rows`` (``frame_timelines``)."""
    m = run.model
    return typed.RecompilesReport(
        run=str(run.path),
        recompiles=len(m.recompiles),
        limit_hits=len(m.recompile_limits),
        recompile_limit_hits=len(m.recompile_limits),
        frames=[recompiled_frame(f, t, lim) for f, t, lim in rows],
    )
