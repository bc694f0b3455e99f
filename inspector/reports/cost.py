"""What the run costs: each profiled process's step broken down (compiled regions, device
time, eager code between them, guards, overhead), what each graph break costs per step and,
against an eager run of the same program, the speedup (``inspector/analysis/step_costs.py``;
the run needs ``--profile N``)."""

from __future__ import annotations

from dyn_inspect.inspector.analysis.breaks import break_sites
from dyn_inspect.inspector.analysis.messages import label
from dyn_inspect.inspector.analysis.step_costs import compare_eager, step_costs
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports.rounding import us
from dyn_inspect.inspector.run import Run

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
                    us_per_step=us(b.us),
                    eager_us=us(b.eager_us),
                    resume_us=us(b.resume_us),
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
            compiled_us=us(cmp.compiled_us),
            eager_us=us(cmp.eager_us),
            measured=cmp.measured,
            speedup=round(cmp.speedup, 3),
            saved_us=us(cmp.saved_us),
            compile_time_s=round(cmp.compile_time_s, 3),
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
        )
    return typed.CostReport(run=str(run.path), processes=out, message=None if out else NOT_PROFILED, eager=versus)
