"""Where the run graph-breaks: each deduplicated break site with the user line it is
attributed to, its headline and what torch reported (``inspector/analysis/breaks.py``;
headlines from ``inspector/analysis/messages.py``)."""

from __future__ import annotations

from dyn_inspect.inspector import ranks
from dyn_inspect.inspector.analysis.breaks import BreakSite, break_sites
from dyn_inspect.inspector.analysis.ddp_splits import MIB, ddp_splits
from dyn_inspect.inspector.analysis.messages import headline
from dyn_inspect.inspector.analysis.step_costs import BreakCost, break_costs
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import source_loc
from dyn_inspect.inspector.reports.rounding import us
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
        us_per_step=us(per_step.us) if per_step is not None else None,
        step_cost=per_step.text if per_step is not None else None,
    )


def run_breaks(model: RunModel) -> list[typed.SummaryBreak]:
    """Every break site of the run, most hit first, with its ranks and its time per
    profiled step: the summary's and the bundle's pages'."""
    per_step = break_costs(model)
    return [break_site(site, ranks.break_ranks(model, site.group), per_step.get(site.group.key)) for site in break_sites(model)]


def site_output(site: BreakSite) -> typed.BreakSite:
    """One break site for ``breaks --json``: torch's location and the user frames it is
    attributed to, the headline, what torch reported and the stack."""
    b = site.first
    return typed.BreakSite(
        key=site.group.key,
        headline=headline(b),
        type=b.gb_type,
        gb_id=b.gb_id,
        url=b.url,
        count=site.count,
        loc=source_loc(site.loc),
        in_library=site.in_library,
        user_frame=source_loc(site.user_frame),
        user_frames=[source_loc(f) for f in site.user_frames],
        reason=b.reason,
        explanation=b.explanation,
        context=site.context,
        hints=list(b.hints),
        compile_ids=site.compile_ids,
        stack=[source_loc(f) for f in site.stack],
    )


def breaks_report(run: Run, root: str | None) -> typed.BreaksReport:
    """What ``breaks`` prints: the run's break sites, each attributed to its nearest frame
    under ``root`` (default: the innermost non-library frame), most hit first, counted."""
    sites = break_sites(run.model, root)
    return typed.BreaksReport(
        run=str(run.path),
        root=root,
        unique=len(sites),
        total=sum(s.count for s in sites),
        breaks=[site_output(s) for s in sites],
        ddp_splits=ddp_split_sites(run.model),
    )


def ddp_split_sites(model: RunModel) -> list[typed.DdpSplitSite]:
    """The frames DDPOptimizer split at bucket boundaries, as every face lists them: beside
    the graph breaks, never among them."""
    out = []
    for s in ddp_splits(model):
        out.append(
            typed.DdpSplitSite(
                headline=s.headline,
                function=s.function,
                file=s.file,
                line=s.line,
                called_at=source_loc(s.called_at),
                graphs=s.graphs,
                bucket_cap_mb=s.bucket_bytes_cap / MIB if s.bucket_bytes_cap is not None else None,
                first_bucket_mb=s.first_bucket_bytes / MIB if s.first_bucket_bytes is not None else None,
                buckets=[
                    typed.DdpBucketRow(graph=b.name, param_bytes=b.param_bytes, params=b.params, loc=source_loc(b.loc)) for b in s.buckets
                ],
                boundaries=[loc for b in s.boundaries if (loc := source_loc(b)) is not None],
                ranks=s.ranks,
                compile_ids=s.compile_ids,
            )
        )
    return out
