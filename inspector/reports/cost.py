"""What the run costs: each profiled process's step broken down (compiled regions, device
time, eager code between them, guards, overhead), what each graph break costs per step and,
against an eager run of the same program, the speedup (``inspector/analysis/step_costs.py``;
the run needs ``--profile N``)."""

from __future__ import annotations

from collections.abc import Callable

from dyn_inspect.inspector.analysis import spread as stats
from dyn_inspect.inspector.analysis.breaks import break_sites
from dyn_inspect.inspector.analysis.messages import label
from dyn_inspect.inspector.analysis.step_costs import EagerComparison, NoiseNote, StepCosts, compare_eager, step_costs
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports.rounding import us
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.units import time_text


def _region_us(cid: str) -> Callable[[StepCosts], float]:
    return lambda c: sum(r.us for r in c.regions if r.region.cid == cid)


def _backward_us(graph: str | None) -> Callable[[StepCosts], float]:
    return lambda c: sum(b.us for b in c.backward if b.time.graph == graph)


OLD_RECORDING = "the recording has no eager steps (made before dyn-inspect interleaved them)"
NOT_PROFILED = "no profiled steps in this run: record it with `dyn-inspect run --profile N script.py`"


def spread_out(s: stats.Spread | None) -> typed.Spread | None:
    if s is None:
        return None
    return typed.Spread(
        n=s.n,
        median_us=us(s.median),
        min_us=us(s.min),
        q1_us=us(s.q1),
        q3_us=us(s.q3),
        max_us=us(s.max),
        low_us=us(s.low),
        high_us=us(s.high),
        confidence=round(s.confidence, 4),
        text=s.text,
    )


def verdict_out(v: stats.Verdict | None) -> typed.Verdict | None:
    if v is None:
        return None
    return typed.Verdict(
        resolved=v.resolved,
        value=round(v.value, 4),
        low=round(v.low, 4),
        high=round(v.high, 4),
        confidence=round(v.confidence, 4),
        noise=round(v.noise, 4),
        steps_to_resolve=v.steps_to_resolve,
        text=v.text,
    )


def _figure(what: str, value: float, s: stats.Spread | None) -> typed.Figure:
    text = f"{what}: {time_text(value)}/step" + (f", {s.text}" if s is not None else " (no per-step samples)")
    return typed.Figure(what=what, us_per_step=us(value), spread=spread_out(s), text=text)


def _figures(sc: StepCosts) -> list[typed.Figure]:
    out = [_figure("step (profiled)", sc.step_us, sc.step_spread)]
    if sc.plain_step_us is not None:
        out.append(_figure("step without the profiler", sc.plain_step_us, sc.plain_spread))
    rows = [
        ("compiled graphs", lambda c: c.compiled_us),
        ("eager in compiled code", lambda c: c.eager_in_regions_us),
        ("guard checks", lambda c: c.guards_us),
        ("wrappers", lambda c: c.overhead_us),
        ("outside compiled code", lambda c: c.outside_us),
    ]
    if sc.device_wait_us:
        rows.insert(2, ("waiting for the GPU", lambda c: c.device_wait_us))
    out += [_figure(what, f(sc), sc.spread_of(f)) for what, f in rows]
    return out


def _noise(sc: StepCosts) -> typed.NoiseReport | None:
    if sc.noise is None:
        return None
    note, n = NoiseNote(sc.noise), sc.noise
    return typed.NoiseReport(
        cpus=n.cpus,
        threads=n.threads,
        omp_num_threads=n.omp_num_threads,
        compile_threads=n.compile_threads,
        load_avg=n.load_avg,
        others_busy_cpus=n.others_busy_cpus,
        steal_share=n.steal_share,
        busy=note.busy,
        oversubscribed=note.oversubscribed,
        text=note.text,
        fix=note.fix,
    )


def comparison_out(cmp: EagerComparison, eager_run: str) -> typed.EagerComparison:
    v = cmp.verdict
    return typed.EagerComparison(
        eager_run=eager_run,
        compiled_us=us(cmp.compiled_us),
        eager_us=us(cmp.eager_us),
        measured=cmp.measured,
        speedup=round(cmp.speedup, 3),  # of the means; the verdict's value is the medians' ratio
        saved_us=us(cmp.saved_us),
        compile_time_s=round(cmp.compile_time_s, 3),
        # only a resolved "faster" pays back; within noise it is not said
        pays_back_after_steps=cmp.pays_back_after,
        text=cmp.text,
        functions=[
            typed.FunctionSpeed(
                function=f.function,
                compiled_us=us(f.compiled_us),
                eager_us=us(f.eager_us),
                slower_compiled=f.slower_compiled,
                text=f.text,
            )
            for f in cmp.functions
        ],
        in_process=cmp.in_process,
        compiled_spread=spread_out(stats.spread(cmp.compiled_samples)),
        eager_spread=spread_out(stats.spread(cmp.eager_samples)),
        verdict=verdict_out(v),
    )


def cost(run: Run, eager: Run | None = None) -> typed.CostReport:
    """What ``cost --json`` prints: each profiled process's step breakdown and break costs;
    with ``eager`` (the same program's ``--disable-compile --profile N`` run), the speedup."""
    return model_cost(run.model, str(run.path), eager)


def model_cost(m: RunModel, path: str, eager: Run | None = None) -> typed.CostReport:
    """``cost`` of a run's model (the export's report builds from the model)."""
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
                    us_per_step=us(b.us),
                    eager_us=us(b.eager_us),
                    resume_us=us(b.resume_us),
                    share_of_step=round(b.share, 4) if b.share is not None else None,
                    between=[[a, z] for a, z in b.between],
                    text=b.text,
                    spread=spread_out(b.spread),
                    verdict=verdict_out(b.verdict),
                    device_wait_us=us(b.device_wait_us),
                )
            )
        compile_time = m.total_compile_time()
        ab = sc.in_process(compile_time)
        out.append(
            typed.StepBreakdown(
                log=sc.log,
                rank=proc.rank if (proc := m.process_for(sc.log)) is not None else None,
                steps=sc.steps,
                step_us=us(sc.step_us),
                plain_step_us=us(sc.plain_step_us) if sc.plain_step_us is not None else None,
                plain_steps=sc.profile.plain_steps,
                profiler_slowdown=round(sc.step_us / sc.plain_step_us, 3) if sc.plain_step_us else None,
                device=sc.profile.device,
                compiled_us=us(sc.compiled_us),
                device_us=us(sc.device_us),
                eager_in_regions_us=us(sc.eager_in_regions_us),
                guards_us=us(sc.guards_us),
                overhead_us=us(sc.overhead_us),
                outside_us=us(sc.outside_us),
                regions=[
                    typed.RegionCost(
                        compile_id=r.compile.cid if r.compile is not None else r.region.cid,
                        function=r.function,
                        resume=r.is_resume,
                        calls_per_step=round(r.calls_per_step, 3),
                        us_per_step=us(r.us),
                        compiled_us=us(r.compiled_us),
                        eager_us=us(r.eager_us),
                        guards_us=us(r.lookup_us),
                        overhead_us=us(r.overhead_us),
                        nested=list(r.region.nested),
                        device_us=us(r.device_us),
                        spread=spread_out(sc.spread_of(_region_us(r.region.cid))),
                        device_wait_us=us(r.device_wait_us),
                    )
                    for r in sc.regions
                ],
                backward=[
                    typed.BackwardCost(
                        compile_id=b.compile.cid if b.compile is not None else None,
                        function=b.compile.capture.co_name if b.compile is not None and b.compile.capture is not None else None,
                        us_per_step=us(b.us),
                        compiled_us=us(b.compiled_us),
                        device_us=us(b.device_us),
                        spread=spread_out(sc.spread_of(_backward_us(b.time.graph))),
                    )
                    for b in sc.backward
                ],
                breaks=breaks,
                figures=_figures(sc),
                ab=comparison_out(ab, path) if ab is not None else None,
                ab_note=(sc.profile.ab_note or OLD_RECORDING) if ab is None else None,
                noise=_noise(sc),
                device_wait_us=us(sc.device_wait_us),
            )
        )
    versus = None
    if eager is not None and (cmp := compare_eager(m, eager.model)) is not None:
        versus = comparison_out(cmp, str(eager.path))
    return typed.CostReport(run=path, processes=out, message=None if out else NOT_PROFILED, eager=versus)
