"""Reports built from a run's model, as the typed outputs (``inspector/outputs``): what
`summary --json` prints and what the text summary renders, the cost report, and one
kernel (``kernels``/``kernel``). Stable keys; paths absolute; times in seconds."""

from __future__ import annotations

from typing import Any

import msgspec

from dyn_inspect.engine.torch_compat import degraded_notes
from dyn_inspect.inspector import ranks
from dyn_inspect.inspector.analysis.breaks import BreakSite, break_sites
from dyn_inspect.inspector.analysis.costs import kernel_cost
from dyn_inspect.inspector.analysis.failures import FailureSite, failure_sites, line_text
from dyn_inspect.inspector.analysis.kernel_compile import compile_output, launch_findings, launch_outputs
from dyn_inspect.inspector.analysis.kernels import Vectorization, effective_isa
from dyn_inspect.inspector.analysis.messages import headline, label
from dyn_inspect.inspector.analysis.no_graph import no_graph
from dyn_inspect.inspector.analysis.step_costs import BreakCost, break_costs, compare_eager, step_costs
from dyn_inspect.inspector.model import KernelInfo, RecompileInfo, RunModel
from dyn_inspect.inspector.outputs import Counts, Divergence, NodeStatus, RankGroup, environment, source_loc
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.run import Run


def break_site(site: BreakSite, on_ranks: list[int], per_step: BreakCost | None = None) -> typed.SummaryBreak:
    """A break for ``summary --json``: the user line first (``user_loc``: the nearest user
    frame, torch's own ``loc`` when that is user code), then what torch reported."""
    group = site.group
    b = group.first
    return typed.SummaryBreak(
        user_loc=source_loc(site.user_frame or site.loc),
        in_library=site.in_library,
        key=group.key,
        headline=headline(b),  # what the user wrote, said first ("`print(...)` can't be traced")
        type=b.gb_type,
        gb_id=b.gb_id,
        url=b.url,
        count=group.count,
        loc=source_loc(b.loc),
        reason=b.reason,
        explanation=b.explanation,
        context=site.context,
        hints=list(b.hints),
        compile_ids=sorted({e.cid or "" for _, e in group.hits}),
        user_stack=[source_loc(f) for f in b.user_stack],
        ranks=on_ranks,
        us_per_step=_us(per_step.us) if per_step is not None else None,
        step_cost=per_step.text if per_step is not None else None,
    )


def failure_site(site: FailureSite) -> typed.FailureSite:
    f = site.first
    user = source_loc(f.user_loc)
    return typed.FailureSite(
        type=f.fail_type,
        function=f.function,
        count=site.count,
        user_loc=msgspec.structs.replace(user, code=line_text(f.user_loc)) if user is not None else None,
        at_def=f.at_def,
        headline=f.headline,
        reason=f.reason,
        compile_ids=site.compile_ids,
    )


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


def divergence(d: ranks.Divergence) -> Divergence:
    return Divergence(kind=d.kind, compile_id=d.compile_id, message=d.message, ranks=list(d.ranks))


def rank_group(b: ranks.Behaviour) -> RankGroup:
    return RankGroup(ranks=list(b.ranks), reference=b.reference, differences=list(b.differences), text=b.describe())


def node_status(n: ranks.NodeStatus) -> NodeStatus:
    return NodeStatus(node=n.node, hosts=list(n.hosts), ranks=list(n.ranks), status=n.status)


STDERR_TAIL_LINES = 40


def _stderr_tail(run: Run) -> str | None:
    """The last lines of the uncaught exception's traceback, kept by a --no-tui run (else None)."""
    from dyn_inspect.engine.stderr_tail import read_tail

    text = read_tail(run.path)
    return "\n".join(text.splitlines()[-STDERR_TAIL_LINES:]) if text else None


def summary(run: Run) -> typed.Summary:
    """What ``summary --json`` prints."""
    m = run.model
    procs = list(m.processes.values())
    start = next((p.start for p in procs if p.start), None)
    compiles = m.compiles_in_order()
    profiles = ranks.rank_profiles(m) if len(m.ranks()) > 1 else {}
    per_step = break_costs(m)
    return typed.Summary(
        run=str(run.path),
        status=m.status,
        exit_code=m.exit_code,
        no_graph=nothing.headline if (nothing := no_graph(m)) is not None else None,
        command=list(m.run_start.command if m.run_start else (start.argv if start else [])),
        duration_s=m.run_end.duration_s if m.run_end else None,
        environment=environment(start, next((p.end for p in procs if p.end and p.end.devices), None)),
        processes=len(procs),
        ranks=m.ranks(),
        nodes=[node_status(n) for n in ranks.node_statuses(m)],  # multi-node runs: each node's end
        frames=len(m.frames),
        compiles=len(compiles),
        graphs=sum(1 for c in compiles if c.made_graph),
        kernels=len(m.kernels),
        graph_breaks=Counts(unique=len(m.breaks), total=m.total_break_hits()),
        recompiles=len(m.recompiles),
        recompile_limit_hit=[
            typed.LimitHit(function=e.co_name, file=e.co_filename, line=e.co_firstlineno, reason=e.reason) for _, e in m.recompile_limits
        ],
        compile_time_s=round(m.total_compile_time(), 4),
        compile_time_by_stage_s={k: round(v, 4) for k, v in m.compile_time_by_stage().items()},
        cache=m.cache_counts(),
        breaks=[break_site(site, ranks.break_ranks(m, site.group), per_step.get(site.group.key)) for site in break_sites(m)],
        step_us=_us(m.step_profiles[0][1].step_us) if m.step_profiles else None,
        plain_step_us=_us(p) if m.step_profiles and (p := m.step_profiles[0][1].plain_step_us) is not None else None,
        compile_failures=[failure_site(site) for site in failure_sites(m)],
        stderr_tail=_stderr_tail(run),
        recompile_list=[recompile_row(r) for r in m.recompiles],
        problems=[str(p) for p in run.problems],
        compile_disabled=bool(start and start.compile_disabled),
        degraded=degraded_notes(procs),  # hooks the recorder could not use in this torch
        divergence=[divergence(d) for d in ranks.divergence_report(m, profiles)],
        # The ranks grouped by what they compiled: the reference group, then how each other differs.
        rank_groups=[rank_group(b) for b in ranks.rank_behaviours(m, profiles)],
    )


def summary_dict(run: Run) -> dict[str, Any]:
    """``summary(run)`` as plain data (what the text summary renders)."""
    data: dict[str, Any] = msgspec.to_builtins(summary(run))
    return data


NOT_PROFILED = "no profiled steps in this run: record it with `dyn-inspect run --profile N script.py`"


def cost(run: Run, eager: Run | None = None) -> typed.CostReport:
    """What ``cost --json`` prints: each profiled process's step breakdown and break costs;
    with ``eager`` (the same program's ``--disable-compile --profile N`` run), the speedup."""
    m = run.model
    sites = {s.group.key: s for s in break_sites(m)}
    out: list[typed.StepBreakdown] = []
    for sc in step_costs(m):
        breaks = []
        for b in sc.breaks:
            site = sites.get(b.group.key)
            loc = (site.user_frame or site.loc) if site is not None else b.group.loc
            breaks.append(
                typed.BreakCost(
                    type=b.group.first.gb_type,
                    reason=label(b.group.first),
                    file=loc.file,
                    line=loc.line,
                    us_per_step=_us(b.us),
                    eager_us=_us(b.eager_us),
                    resume_us=_us(b.resume_us),
                    share_of_step=round(b.share, 4) if b.share is not None else None,
                    between=[[a, z] for a, z in b.between],
                    text=b.text,
                )
            )
        out.append(
            typed.StepBreakdown(
                log=sc.log,
                rank=proc.rank if (proc := m.process_for(sc.log)) is not None else None,
                steps=sc.steps,
                step_us=_us(sc.step_us),
                plain_step_us=_us(sc.plain_step_us) if sc.plain_step_us is not None else None,
                plain_steps=sc.profile.plain_steps,
                profiler_slowdown=round(sc.step_us / sc.plain_step_us, 3) if sc.plain_step_us else None,
                device=sc.profile.device,
                compiled_us=_us(sc.compiled_us),
                device_us=_us(sc.device_us),
                eager_in_regions_us=_us(sc.eager_in_regions_us),
                guards_us=_us(sc.guards_us),
                overhead_us=_us(sc.overhead_us),
                outside_us=_us(sc.outside_us),
                regions=[
                    typed.RegionCost(
                        compile_id=r.compile.cid if r.compile is not None else r.region.cid,
                        function=r.function,
                        resume=r.is_resume,
                        calls_per_step=round(r.calls_per_step, 3),
                        us_per_step=_us(r.us),
                        compiled_us=_us(r.compiled_us),
                        eager_us=_us(r.eager_us),
                        guards_us=_us(r.lookup_us),
                        overhead_us=_us(r.overhead_us),
                        nested=list(r.region.nested),
                        device_us=_us(r.device_us),
                    )
                    for r in sc.regions
                ],
                backward=[
                    typed.BackwardCost(
                        compile_id=b.compile.cid if b.compile is not None else None,
                        function=b.compile.capture.co_name if b.compile is not None and b.compile.capture is not None else None,
                        us_per_step=_us(b.us),
                        compiled_us=_us(b.compiled_us),
                        device_us=_us(b.device_us),
                    )
                    for b in sc.backward
                ],
                breaks=breaks,
            )
        )
    versus = None
    if eager is not None and (cmp := compare_eager(m, eager.model)) is not None:
        versus = typed.EagerComparison(
            eager_run=str(eager.path),
            compiled_us=_us(cmp.compiled_us),
            eager_us=_us(cmp.eager_us),
            measured=cmp.measured,
            speedup=round(cmp.speedup, 3),
            saved_us=_us(cmp.saved_us),
            compile_time_s=round(cmp.compile_time_s, 3),
            pays_back_after_steps=cmp.pays_back_after,
            text=cmp.text,
            functions=[
                typed.FunctionSpeed(
                    function=f.function,
                    compiled_us=_us(f.compiled_us),
                    eager_us=_us(f.eager_us),
                    slower_compiled=f.slower_compiled,
                    text=f.text,
                )
                for f in cmp.functions
            ],
        )
    return typed.CostReport(run=str(run.path), processes=out, message=None if out else NOT_PROFILED, eager=versus)


def _us(value: float) -> float:
    return round(value, 3)


# -- shared by the report commands (breaks, recompiles, kernels, graph, check, diff) ------


def kernel(model: RunModel, k: KernelInfo, source: str | None = None) -> typed.Kernel:
    """One kernel for ``kernels --json``, ``kernel`` (text and JSON). ``source``: the kernel's source text, for the launch findings (read it only when
    the kernel has launches)."""
    e = k.event
    return typed.Kernel(
        name=k.name,
        compile_id=k.compile.cid,
        log=k.compile.log,
        backend=e.backend,
        backward=e.backward,
        fused_ops=list(e.fused_ops),
        source_nodes=list(e.source_nodes),
        vectorized=e.vectorized,
        isa=effective_isa(model, k),
        lines_of_code=e.lines,
        source_lines=[source_loc(loc) for loc in k.lines],
        profile=kernel_profile(k),
        compile=compile_output(k),
        launches=launch_outputs(k, source),
        launch_findings=launch_findings(k, source),
    )


def kernel_profile(k: KernelInfo) -> typed.KernelProfile | None:
    p, c = k.profile, kernel_cost(k)
    if p is None or c is None:
        return None
    return typed.KernelProfile(
        calls=p.calls,
        total_us=p.total_us,
        steps=p.steps,
        us_per_step=round(c.us_per_step, 3),
        calls_per_step=c.calls_per_step,
        share_of_step=round(c.share, 4) if c.share is not None else None,
        bandwidth_gbps=c.gbps,
        tflops=c.tflops,
        peak_gbps=c.peak_gbps,
        peak_tflops=c.peak_tflops,
    )


def vectorization_coverage(v: Vectorization) -> typed.Vectorization:
    return typed.Vectorization(
        cpp_kernels=v.cpp_kernels,
        vectorized=v.vectorized,
        share=round(v.share, 4) if v.share is not None else None,
        by_isa=dict(v.by_isa),
        cpu_isa=v.cpu_isa,
        scalar_kernels=list(v.scalar),
    )


def open_cli_run(arg: str | None, runs_dir: str | None, rank: int | None = None) -> Run:
    """``open_run`` for a command that must answer from events: an empty run is an error
    (one line, exit 2) rather than an empty report. ``rank`` narrows it to one rank's
    processes (``--rank R``)."""
    from dyn_inspect.inspector.errors import InspectorError
    from dyn_inspect.inspector.ranks import select_rank
    from dyn_inspect.inspector.run import open_run

    run = open_run(arg, runs_dir)
    if run.model.event_count == 0:
        raise InspectorError(f"{run.path} holds no events (an empty or unstarted run)")
    return select_rank(run, rank)


UNKNOWN_KINDS_NAMED = 5  # the unknown event kinds a warning names (then "and N more")


def read_warnings(run: Run) -> list[str]:
    """What could not be read, as at most two one-line notes (corrupted/truncated lines;
    events of kinds this version does not know)."""
    out: list[str] = []
    problems = run.problems
    if problems:
        where = ", ".join(f"{p.file}:{p.line}" for p in problems[:3]) + (", ..." if len(problems) > 3 else "")
        what = problems[0].message if len(problems) == 1 else f"{len(problems)} unreadable lines skipped"
        out.append(f"{run.path.name}: {what} ({where}); the rest was read")
    if run.unknown:
        kinds = sorted({u.kind for u in run.unknown})
        # Bounded: a crafted log with 200k distinct kinds made this one line 10 MB.
        named = ", ".join(repr(k[:60] + "…" if len(k) > 60 else k) for k in kinds[:UNKNOWN_KINDS_NAMED])
        more = f" and {len(kinds) - UNKNOWN_KINDS_NAMED} more" if len(kinds) > UNKNOWN_KINDS_NAMED else ""
        out.append(f"{run.path.name}: ignored {len(run.unknown)} event(s) of unknown kind {named}{more} (written by a newer dyn-inspect?)")
    return out


def print_read_warnings(run: Run) -> None:
    import sys

    for line in read_warnings(run):
        print(f"dyn-inspect: warning: {line}", file=sys.stderr)
