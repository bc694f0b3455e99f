"""What the TUI's screens show, computed from the run model: the run's state (compiling
<frame> · <stage> / running / finished / crashed / killed), the header's command and
environment, the overview's counts and top offenders, the compile-time series for the
sparkline, and the rank scope the views select by.

The TUI renders these and computes none of them (issue 30: one answer per question, in
the inspector); they are plain and typed, testable on a recorded run without a widget.
"""

from __future__ import annotations

import os
import shlex

import msgspec

from dyn_inspect.inspector.analysis.breaks import attributed_loc
from dyn_inspect.inspector.analysis.causes import Cause, causes
from dyn_inspect.inspector.analysis.ddp_splits import ddp_splits
from dyn_inspect.inspector.analysis.failures import CompileFailure, compile_failures, failure_sites
from dyn_inspect.inspector.analysis.messages import headline, label
from dyn_inspect.inspector.analysis.no_graph import no_graph
from dyn_inspect.inspector.analysis.recompiles import frames_with_recompiles
from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.model import BreakGroup, CompileInfo, FrameInfo, KernelInfo, RunModel
from dyn_inspect.inspector.outputs.reports import CauseFix, CompileShapes
from dyn_inspect.inspector.reports.causes import fix_output
from dyn_inspect.inspector.reports.shapes import run_shapes
from dyn_inspect.inspector.run import Run


class Scope(msgspec.Struct, frozen=True):
    """Which processes the views show: every one (``logs is None``) or one rank's."""

    logs: frozenset[str] | None = None
    rank: int | None = None

    def has(self, log: str) -> bool:
        return self.logs is None or log in self.logs


ALL = Scope()


def scope_for_rank(model: RunModel, rank: int | None) -> Scope:
    if rank is None:
        return ALL
    logs = frozenset(log for log, p in model.processes.items() if p.rank == rank)
    return Scope(logs, rank)


# -- state -------------------------------------------------------------------------------


class RunState(msgspec.Struct, frozen=True):
    kind: str  # starting, compiling, running, finished, crashed, killed
    label: str
    exit_code: int | None = None
    signal: int | None = None


def compile_stage(c: CompileInfo) -> str:
    """The pipeline stage an unfinished compile is in, judged by what it has logged so far
    (torch logs each stage's graph when that stage ends)."""
    if c.output_codes:
        return "loading kernels"
    stages = {g.stage for g in c.graphs}
    if any(s.startswith("post_grad") for s in stages):
        return "inductor codegen"
    if any(s.startswith("aot") or s.startswith("joint") or s.startswith("pre_grad") for s in stages):
        return "inductor"
    if "dynamo" in stages:
        return "aot autograd"
    return "dynamo"


def compiling_now(model: RunModel, scope: Scope = ALL) -> list[CompileInfo]:
    """Compiles that started (``compile_start``) and have no ``capture`` yet, in processes
    that are still alive."""
    out = []
    for (log, _cid), c in list(model.compiles.items()):
        if c.start is None or c.capture is not None or not scope.has(log):
            continue
        process = model.processes.get(log)
        if process is not None and process.end is not None:
            continue
        out.append(c)
    return out


def frame_name(c: CompileInfo) -> str:
    if c.capture is not None and c.capture.co_name:
        return c.capture.co_name
    if c.start is not None and c.start.stack:
        return c.start.stack[-1].name or "?"
    return "?"


def run_state(model: RunModel, scope: Scope = ALL, child_exit: int | None = None, child_alive: bool = False) -> RunState:
    """The run's state as the header says it. ``child_exit``/``child_alive``: what the TUI
    knows of the program it started (a live run) before the run's end is read: a program that
    ended is finished or crashed by its exit code, and one that has not imported torch yet
    is running, not starting."""
    state = _recorded_state(model, scope)
    if child_exit is not None and state.kind in ("running", "compiling", "starting"):
        kind = "finished" if child_exit == 0 else "crashed"
        return RunState(kind, f"{kind} · exit {child_exit}", child_exit)
    if child_exit is None and child_alive and state.kind == "starting":
        return RunState("running", "running")
    return state


def _recorded_state(model: RunModel, scope: Scope) -> RunState:
    status = model.status
    end = model.run_end
    if status == "killed" and end is not None:
        return RunState("killed", f"killed by signal {end.signal}", end.exit_code, end.signal)
    if status == "exited":
        code = end.exit_code if end is not None else None
        return RunState(status, f"exited with {code}" if code is not None else "exited", code)
    if status in ("finished", "crashed"):
        code = end.exit_code if end is not None else None
        return RunState(status, status + (f" · exit {code}" if code is not None else ""), code)
    if model.run_end is None and not model.processes:
        return RunState("starting", "starting")
    active = compiling_now(model, scope) if model.run_end is None else []
    if active:
        c = active[-1]
        return RunState("compiling", f"compiling {frame_name(c)} · {compile_stage(c)}")
    return RunState("running", "running")


def environment_text(model: RunModel) -> str:
    start = next((p.start for p in model.processes.values() if p.start is not None), None)
    imported = any(p.header is not None and p.header.source == "import" for p in model.processes.values())
    if start is None or (imported and not start.torch):
        return "imported from TORCH_TRACE (environment not recorded)" if imported else ""
    parts = [f"torch {start.torch}" if start.torch else "torch ?"]
    if start.triton:
        parts.append(f"triton {start.triton}")
    if start.devices:
        parts.append(", ".join(dict.fromkeys(start.devices)))
    elif start.cpu_isa:
        parts.append(f"cpu ({start.cpu_isa.lower()})")
    if start.world_size and start.world_size > 1:
        parts.append(f"world {start.world_size}")
    from dyn_inspect.inspector.events import degraded_notes

    parts += [f"degraded: {note}" for note in degraded_notes(model.processes.values())]
    return " · ".join(parts)


def command_text(command: list[str], cwd: str | None = None) -> str:
    """The user's command as they would type it: the interpreter's path shortened, paths
    under the working directory relative to it."""
    if not command:
        return "?"
    first = os.path.basename(command[0]) if "/" in command[0] else command[0]
    rest = [_under(arg, cwd) for arg in command[1:]]
    return shlex.join([first, *rest])


def _under(arg: str, cwd: str | None) -> str:
    if not cwd or not arg.startswith("/"):
        return arg
    rel = os.path.relpath(arg, cwd)
    return arg if rel.startswith("..") else rel


def command_line(model: RunModel, fallback: str) -> str:
    """The run's command as the header shows it (``fallback``: the run's name, for a run
    that recorded none)."""
    if model.run_start is not None:
        return command_text(model.run_start.command, model.run_start.cwd)
    start = next((p.start for p in model.processes.values() if p.start), None)
    return command_text(["python", *start.argv]) if start else fallback


def start_time(model: RunModel) -> float | None:
    """When the program started (for an imported trace: its first process, not the import)."""
    if model.run_start is not None and model.run_start.t and model.run_start.mode != "import":
        return model.run_start.t
    times = [p.start.t for p in model.processes.values() if p.start is not None and p.start.t]
    return min(times) if times else None


def elapsed(model: RunModel, now: float) -> float | None:
    """Run time: the recorded duration once finished, else the time since it started."""
    if model.run_start is not None and model.run_start.mode == "import":
        # The import's own duration says nothing; the trace's span does.
        t0 = min((p.start.t for p in model.processes.values() if p.start is not None and p.start.t), default=None)
        ends = [c.capture.t for c in list(model.compiles.values()) if c.capture is not None and c.capture.t]
        ends += [p.end.t for p in model.processes.values() if p.end is not None and p.end.t]
        return max(0.0, max(ends) - t0) if t0 is not None and ends else None
    if model.run_end is not None:
        return model.run_end.duration_s
    proc_ends = [p.end for p in model.processes.values()]
    if proc_ends and all(e is not None for e in proc_ends) and model.run_start is None:
        return max(e.duration_s for e in proc_ends if e is not None)
    t0 = start_time(model)
    return max(0.0, now - t0) if t0 is not None else None


# -- scoped selections -------------------------------------------------------------------


def break_count(group: BreakGroup, scope: Scope) -> int:
    if scope.logs is None:
        return group.count
    return sum(1 for log, _ in group.hits if log in scope.logs)


def break_groups(model: RunModel, scope: Scope = ALL) -> list[tuple[BreakGroup, int]]:
    """Unique breaks visible in the scope with their hit counts, most hit first."""
    rows = [(g, break_count(g, scope)) for g in list(model.breaks.values())]
    rows = [(g, n) for g, n in rows if n]
    rows.sort(key=lambda r: (-r[1], r[0].loc.file, r[0].loc.line))
    return rows


class BreakSiteRow(msgspec.Struct, frozen=True):
    """One break site as the Graph breaks view lists and details it: the line it is
    attributed to (``analysis.breaks.attributed_loc``, as every face shows it), the
    inspector's headline, its hits in the scope, and what torch reported."""

    key: str
    count: int  # hits in the scope
    loc: Loc  # where it is shown
    torch_loc: Loc  # torch's innermost location (the same line, or a library's)
    headline: str
    gb_type: str
    gb_id: str | None
    url: str | None
    reason: str
    explanation: str
    context: str
    hints: list[str]
    compile_ids: list[str]
    stack: list[Loc]  # the first hit's user stack, outermost first (torch's location without one)


def break_site_row(group: BreakGroup, count: int) -> BreakSiteRow:
    """One break site as the view shows it; ``count``: its hits in the view's scope."""
    b = group.first
    return BreakSiteRow(
        key=group.key,
        count=count,
        loc=attributed_loc(group),
        torch_loc=b.loc,
        headline=headline(b),
        gb_type=b.gb_type,
        gb_id=b.gb_id,
        url=b.url,
        reason=b.reason,
        explanation=b.explanation,
        context=b.context,
        hints=list(b.hints),
        compile_ids=sorted({e.cid or "?" for _, e in group.hits}),
        stack=list(b.user_stack) or [b.loc],
    )


def break_site_rows(model: RunModel, scope: Scope = ALL) -> list[BreakSiteRow]:
    """``break_groups`` as the Graph breaks view shows them, most hit first."""
    return [break_site_row(group, count) for group, count in break_groups(model, scope)]


class FailureSiteRow(msgspec.Struct, frozen=True):
    """Failed compiles with one cause at one user line, as the Failures view lists them
    (``analysis.failures.failure_sites``, only the scope's processes' failures)."""

    key: str
    count: int
    user_loc: Loc | None
    at_def: bool  # torch named no line: ``user_loc`` is the function's def
    function: str
    fail_type: str
    headline: str
    reason: str
    compile_ids: list[str]


def failure_site_rows(model: RunModel, scope: Scope = ALL) -> list[FailureSiteRow]:
    """The failure sites of the processes in ``scope``, most hit first (each site keeps
    only their failures)."""
    rows = []
    for site in failure_sites(model):
        kept = [f for f in site.failures if scope.has(f.compile.log)]
        if not kept:
            continue
        f = kept[0]
        rows.append(
            FailureSiteRow(
                key=f"{f.cid}|{f.compile.log}",
                count=len(kept),
                user_loc=f.user_loc,
                at_def=f.at_def,
                function=f.function,
                fail_type=f.fail_type,
                headline=f.headline,
                reason=f.reason,
                compile_ids=[x.cid for x in kept],
            )
        )
    return rows


def compile_breaks(c: CompileInfo) -> list[tuple[Loc, str]]:
    """Each break a compile hit: torch's location and the label lists show (headline, gb id)."""
    return [(b.loc, label(b)) for b in c.breaks]


class CauseRow(msgspec.Struct, frozen=True):
    """One root cause as the Causes view lists and details it (``analysis.causes``)."""

    key: str
    kind: str
    title: str
    detail: str
    cost: tuple[int, float, float, int]  # what the list sorts by (recompiles, compile s, µs/step, fragments)
    cost_label: str  # "3 recompiles", "110 µs/step", "2 hits"
    where: Loc | None  # where the fix goes (the line that makes the variable), else the first site
    sites: list[Loc]
    fix: CauseFix | None  # as ``causes --json`` gives it (``one_line``: its code on one line)
    run_time: str | None  # its time per profiled step, as every face says it
    no_fix: str | None  # the sentence every face shows for a cause without a fix


def _cause_row(c: Cause) -> CauseRow:
    site = c.sites[0] if c.sites else None
    fix = c.fix
    return CauseRow(
        key=f"{c.kind}|{c.title}|{site.file if site else ''}:{site.line if site else 0}",
        kind=c.kind,
        title=c.title,
        detail=c.detail,
        cost=c.cost,
        cost_label=c.cost_label,
        where=Loc(file=fix.file, line=fix.site_line) if fix is not None else site,
        sites=list(c.sites),
        fix=fix_output(fix) if fix is not None else None,
        run_time=c.run_time,
        no_fix=c.no_fix,
    )


def _in_scope(c: Cause, scope: Scope) -> bool:
    if c.break_group is not None:
        return any(scope.has(log) for log, _ in c.break_group.hits)
    return any(scope.has(r.log) for r in c.recompiles)


def cause_rows(model: RunModel, scope: Scope = ALL) -> list[CauseRow]:
    """The root causes of the processes in ``scope``, most expensive first."""
    return [_cause_row(c) for c in causes(model) if _in_scope(c, scope)]


def shapes(model: RunModel, scope: Scope = ALL, cwd: str | None = None, run: Run | None = None) -> list[CompileShapes]:
    """The compiles in ``scope`` that created a symbol, specialized one or added a shape
    guard, as ``shapes --json`` gives them (``run``: mark which guards torch installed)."""
    return [cs for cs in run_shapes(model, cwd, run) if scope.has(cs.log)]


def shapes_signature(model: RunModel, scope: Scope = ALL) -> tuple[int, ...]:
    """What ``shapes`` is built from, counted (a live run's only grow): the Shapes view
    builds its rows again only when this changes, not at every live update."""
    return tuple(
        n
        for c in model.compiles_in_order()
        if scope.has(c.log) and (c.symbols or c.specializations or c.shape_guards)
        for n in (len(c.symbols), len(c.specializations), len(c.shape_guards))
    )


def frames(model: RunModel, scope: Scope = ALL) -> list[FrameInfo]:
    return [f for f in list(model.frames.values()) if scope.has(f.log)]


def recompiled_frames(model: RunModel, scope: Scope = ALL) -> list[FrameInfo]:
    """Frames compiled more than once or that hit the recompile limit, first compiled first
    (``analysis.recompiles.frames_with_recompiles``, in the scope)."""
    return [f for f in frames_with_recompiles(model) if scope.has(f.log)]


def failures(model: RunModel, scope: Scope = ALL) -> list[CompileFailure]:
    """Failed compiles (fullgraph=True errors, backend exceptions) in the scope."""
    return [f for f in compile_failures(model) if scope.has(f.compile.log)]


def kernels(model: RunModel, scope: Scope = ALL) -> list[KernelInfo]:
    if scope.logs is None:
        return list(model.kernels)
    return [k for k in model.kernels if k.compile.log in scope.logs]


def compiles(model: RunModel, scope: Scope = ALL) -> list[CompileInfo]:
    return [c for (log, _), c in list(model.compiles.items()) if scope.has(log)]


def compile_count(model: RunModel, scope: Scope = ALL) -> int:
    """The compiles torch made in ``scope`` (the tab's count): a call the recompile limit
    refused is listed, as a limit hit, but is not a compile."""
    return model.compile_count(compiles(model, scope))


# -- overview ------------------------------------------------------------------------------


class FailureRow(msgspec.Struct, frozen=True):
    cid: str
    user_loc: Loc | None
    fail_type: str
    headline: str


class BreakRow(msgspec.Struct, frozen=True):
    count: int
    loc: Loc  # where the break is attributed (``analysis.breaks.attributed_loc``)
    headline: str  # the inspector's words for it, with torch's gb id (as every face shows it)


class RecompiledRow(msgspec.Struct, frozen=True):
    compiles: int
    name: str
    filename: str
    firstlineno: int
    limit_hit: bool


class SlowRow(msgspec.Struct, frozen=True):
    seconds: float
    cid: str
    name: str


class Overview(msgspec.Struct):
    """What the overview shows, as plain data (no model objects): computed from the model,
    or read back from a finished run's saved first screen (``tui/first_screen.py``)."""

    frames: int = 0
    compiles: int = 0
    graphs: int = 0
    breaks_unique: int = 0
    breaks_total: int = 0
    recompiles: int = 0
    limits_hit: int = 0
    failures: int = 0
    kernels: int = 0
    compile_time: float = 0.0
    by_stage: dict[str, float] = msgspec.field(default_factory=dict)
    cache: dict[str, int] = msgspec.field(default_factory=dict)
    top_failures: list[FailureRow] = msgspec.field(default_factory=list)
    top_breaks: list[BreakRow] = msgspec.field(default_factory=list)
    top_recompiled: list[RecompiledRow] = msgspec.field(default_factory=list)
    slowest: list[SlowRow] = msgspec.field(default_factory=list)
    spark: list[float] = msgspec.field(default_factory=list)
    span: float | None = None  # seconds the spark's x axis covers (the whole run's)
    no_graph: str | None = None  # the inspector's "no graph was compiled: ..." (said first)
    ddp_splits: list[str] = msgspec.field(default_factory=list)  # the frames DDP split, headlines


def series_span(model: RunModel, scope: Scope = ALL) -> float | None:
    """The seconds the compile-time series covers (its x axis)."""
    done = [c for c in compiles(model, scope) if c.capture is not None and c.capture.t]
    t0 = start_time(model)
    if not done or t0 is None:
        return None
    t_end = max(c.capture.t for c in done if c.capture)
    if model.run_start is None or model.run_start.mode != "import":
        t_end = max(t_end, model.last_event_time)
    return max(t_end - t0, 1e-9)


def compile_time_series(model: RunModel, scope: Scope = ALL, buckets: int = 60) -> list[float]:
    """Compile seconds per time slice of the run: each compile's time spread over the
    slices between its ``compile_start`` and its ``capture``."""
    span = series_span(model, scope)  # a live run's axis grows with the run
    t0 = start_time(model)
    if span is None or t0 is None:
        return []
    done = [c for c in compiles(model, scope) if c.capture is not None and c.capture.t]
    series = [0.0] * buckets
    width = span / buckets

    def bucket(t: float) -> int:
        return min(buckets - 1, max(0, int((t - t0) / width)))

    for c in done:
        assert c.capture is not None
        end = c.capture.t
        begin = c.start.t if c.start is not None and c.start.t and c.start.t <= end else end
        first, last = bucket(begin), bucket(end)
        # Spread the compile's time over the slices it spanned (compile_start → capture).
        share = c.compile_time_s / (last - first + 1)
        for i in range(first, last + 1):
            series[i] += share
    return series


_CACHE_LABELS = (("fx hits", "fx_graph_hits"), ("fx misses", "fx_graph_misses"), ("aot hits", "aot_hits"), ("aot misses", "aot_misses"))


def overview(model: RunModel, scope: Scope = ALL, top: int = 5) -> Overview:
    cs = compiles(model, scope)
    fs = frames(model, scope)
    groups = break_groups(model, scope)
    o = Overview()
    nothing = no_graph(model) if model.compiles else None
    o.no_graph = nothing.headline if nothing is not None else None
    o.frames = len(fs)
    o.compiles = model.compile_count(cs)
    o.graphs = sum(1 for c in cs if c.made_graph)
    o.ddp_splits = [s.headline for s in ddp_splits(model, scope.has)]
    o.breaks_unique = len(groups)
    o.breaks_total = sum(n for _, n in groups)
    o.recompiles = sum(1 for r in list(model.recompiles) if scope.has(r.log))
    o.limits_hit = sum(1 for log, _ in list(model.recompile_limits) if scope.has(log))
    o.kernels = len(kernels(model, scope))
    failed = failures(model, scope)
    o.failures = len(failed)
    o.top_failures = [FailureRow(f.cid, f.user_loc, f.fail_type, f.headline) for f in failed[:top]]
    o.by_stage = model.compile_time_by_stage(cs)
    o.compile_time = model.total_compile_time(cs)
    # the model's count (the CLI summary's): cache artifacts, so a backward compiled lazily
    # after the capture counts too (the capture's counters alone missed it)
    counted = model.cache_counts(cs)
    o.cache = {label: counted.get(key, 0) for label, key in _CACHE_LABELS}
    o.top_breaks = [BreakRow(count, attributed_loc(group), label(group.first)) for group, count in groups[:top]]
    recompiled = recompiled_frames(model, scope)
    o.top_recompiled = [
        RecompiledRow(f.compile_count, f.name, f.filename, f.firstlineno, f.recompile_limit is not None)
        for f in sorted(recompiled, key=lambda f: -len(f.compiles))[:top]
    ]
    slowest = sorted((c for c in cs if c.compile_time_s), key=lambda c: -c.compile_time_s)[:top]
    o.slowest = [SlowRow(c.compile_time_s, c.cid, frame_name(c)) for c in slowest]
    o.spark = compile_time_series(model, scope)
    o.span = series_span(model)
    return o
