"""Why the run recompiled: the recompiles in order, and per frame the timeline of its
compiles — which guard failed on what value, the suggestion, where the recompile limit was
hit (``inspector/analysis/recompiles.py``, ``inspector/analysis/guard_failures.py``)."""

from __future__ import annotations

from dataclasses import asdict

import msgspec

from dyn_inspect.inspector import ranks
from dyn_inspect.inspector.analysis.causes import describe_fix, one_line, recompile_causes
from dyn_inspect.inspector.analysis.guard_failures import GuardFailure
from dyn_inspect.inspector.analysis.guards import guard_diff
from dyn_inspect.inspector.analysis.recompiles import (
    TimelineEntry,
    frames_with_recompiles,
    reasons_of,
    recompile_limit_of,
    recompile_timeline,
)
from dyn_inspect.inspector.locations import def_line
from dyn_inspect.inspector.model import CompileInfo, FrameInfo, RecompileInfo, RunModel
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


def timeline_entry(e: TimelineEntry, diff: typed.GuardDiffBrief | None = None) -> typed.TimelineEntry:
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
        is_recompile=e.is_recompile,
        guard_diff=diff,
    )


def guard_diff_brief(run: Run, before: CompileInfo, after: CompileInfo) -> typed.GuardDiffBrief:
    """What changed in the guards from ``before``'s cache entry to ``after``'s: a changed
    tensor check by its fields ("size: [16, 8] → [32, 8]"), else the two checks."""
    d = guard_diff(run, before, after)
    lines: list[typed.GuardDiffLine] = []
    for ch in d.changed:
        where = f"{ch.after.path} " if ch.after.path else ""
        if ch.fields:
            fields = "; ".join(f"{k}: {a} → {b}" for k, (a, b) in ch.fields.items())
            lines.append(typed.GuardDiffLine(sign="~", text=f"{ch.after.kind} {where}{fields}"))
        else:
            lines.append(typed.GuardDiffLine(sign="~", text=f"{ch.before.expr}  →  {ch.after.expr}"))
    lines += [typed.GuardDiffLine(sign="+", text=str(g)) for g in d.added]
    lines += [typed.GuardDiffLine(sign="-", text=str(g)) for g in d.removed]
    return typed.GuardDiffBrief(before=d.a, after=d.b, problem=d.problem, unchanged=d.unchanged, lines=lines)


def frame_timeline(run: Run, frame: FrameInfo) -> typed.RecompiledFrame:
    """One frame's compiles in order, each recompile with its guard diff against the
    previous compile (the TUI's Recompiles detail)."""
    entries = recompile_timeline(run.model, frame)
    out = [
        timeline_entry(e, guard_diff_brief(run, entries[e.index - 1].compile, e.compile) if e.is_recompile and e.index > 0 else None)
        for e in entries
    ]
    frame_out = recompiled_frame(frame, entries, recompile_limit_of(run.model, frame))
    frame_out.timeline = out
    return frame_out


def recompile_reasons(frame: FrameInfo) -> list[str]:
    """The guard-failure reasons of the frame's recompiles, in order (what search matches)."""
    return [r for c in frame.compiles for r in reasons_of(c)]


def recompiled_frame(frame: FrameInfo, timeline: list[TimelineEntry], limit: int | None) -> typed.RecompiledFrame:
    return typed.RecompiledFrame(
        function=frame.name,
        file=frame.filename,
        line=frame.firstlineno,
        def_line=def_line(frame.filename, frame.firstlineno),
        log=frame.log,
        compiles=frame.compile_count,
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


def recompile_suggestions(model: RunModel) -> dict[tuple[str, str], typed.Suggestion]:
    """(log, compile id) -> the suggestion its frame's timeline makes for that recompile
    (what ``recompiles`` says; the bundle's pages list it beside each recompile)."""
    out: dict[tuple[str, str], typed.Suggestion] = {}
    for frame, timeline, _limit in frame_timelines(model):
        for e in timeline:
            if e.suggestion is not None:
                out[(frame.log, e.cid)] = typed.Suggestion(**asdict(e.suggestion))
    return out


def root_cause_lines(model: RunModel, gap: str = " ") -> list[typed.RootCauseLine]:
    """The recompile root causes that have a fix, each with its fix in one line (``gap``
    between the code and "after"): what ``recompiles`` says before the frames."""
    return [typed.RootCauseLine(title=c.title, fix=describe_fix(c.fix, gap=gap)) for c in recompile_causes(model) if c.fix is not None]


TOP_RECOMPILED = 5  # functions (and root causes) the text summary lists without --all


def _first_failure(entries: list[TimelineEntry]) -> TimelineEntry | None:
    return next((e for e in entries if e.is_recompile and e.failures), None)


def _function_key(frame: FrameInfo) -> tuple[str, int, str]:
    return (frame.filename, frame.firstlineno, frame.name)


def _with_sorted_ranks(row: typed.RecompiledFunction) -> typed.RecompiledFunction:
    row.ranks.sort()
    return row


def recompiled_functions(model: RunModel, show_all: bool = False) -> typed.RecompiledFunctions:
    """What the text summary says about recompiles. Without ``show_all`` only the top few
    functions (a run can recompile hundreds of times) and their processes' root causes."""
    recompiled = sorted(frames_with_recompiles(model), key=lambda f: -len(f.compiles))
    shown = recompiled if show_all else recompiled[:TOP_RECOMPILED]
    # Timelines only for the frames shown: a 256-rank run has a recompiling frame per rank.
    timelines = [(f, recompile_timeline(model, f)) for f in shown]
    # A root cause with a fix comes first, and the frames it explains get no per-frame "try":
    # that snippet names a resume function's local (`h`, `___stack0`), where one edit at the
    # line that makes the caller's tensor removes them all. The same cause on every rank of
    # an SPMD job is one line, not one per rank. Only the causes of the processes whose
    # functions are listed (a cause never spans processes): the whole run's took 1.2 s on a
    # 256-rank job to print one line.
    explained: set[int] = set()
    said: dict[tuple[str, str, str, int], int] = {}
    causes: list[typed.RootCauseLine] = []
    for cause in recompile_causes(model, {f.log for f in shown}) if recompiled else []:
        if cause.fix is None:
            continue
        explained.update(id(f) for f in cause.frames)
        key = (cause.title, cause.fix.code, cause.fix.file, cause.fix.after_line)
        said[key] = said.get(key, 0) + 1
        if said[key] == 1 and len(said) <= TOP_RECOMPILED:
            causes.append(typed.RootCauseLine(title=cause.title, fix=describe_fix(cause.fix, gap="  ")))
    functions = []
    for frame, entries in timelines:
        first = _first_failure(entries)
        guards = {x.failures[0].text for x in entries if x.is_recompile and x.failures}
        is_explained = id(frame) in explained
        suggestion = first.suggestion if first is not None else None
        steps = [
            typed.RecompileStep(
                compile_id=e.cid,
                reason=e.failures[0].text,
                try_code=one_line(e.suggestion.code) if e.suggestion is not None and e.suggestion.code and not is_explained else None,
            )
            for e in (entries if show_all else [])
            if e.is_recompile and e.failures
        ]
        functions.append(
            typed.RecompiledFunction(
                function=frame.name,
                file=frame.filename,
                def_line=def_line(frame.filename, frame.firstlineno),
                compiles=frame.compile_count,
                limit_hit=frame.recompile_limit is not None,
                reason=first.failures[0].text if first is not None else None,
                other_guards=max(0, len(guards) - 1),
                explained=is_explained,
                try_code=one_line(suggestion.code) if suggestion is not None and suggestion.code and not is_explained else None,
                steps=steps,
            )
        )
    hidden = recompiled[len(shown) :]
    # Every rank of an SPMD job recompiles the same function alike: one row with its ranks,
    # and the functions counted once (a row per rank read as that many functions).
    rows: dict[bytes, typed.RecompiledFunction] = {}
    for (frame, _), row in zip(timelines, functions, strict=True):
        rank = ranks.rank_of_log(model, frame.log)
        same = rows.setdefault(msgspec.msgpack.encode(row), row)
        if rank is not None and rank not in same.ranks:
            same.ranks.append(rank)
    distinct = {_function_key(f) for f in recompiled}
    hidden_functions = distinct - {_function_key(f) for f in shown}
    return typed.RecompiledFunctions(
        recompiles=len(model.recompiles),
        functions=len(distinct),
        causes=causes,
        more_causes=max(0, len(said) - TOP_RECOMPILED),
        shown=[_with_sorted_ranks(r) for r in rows.values()],
        hidden=len(hidden_functions),
        hidden_recompiles=sum(len(f.compiles) - 1 for f in hidden),
    )
