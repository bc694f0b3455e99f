"""Whether the run passes the CI gate: its break sites, recompiles, recompile causes,
compile failures and rank divergences against the limits, and what is new against a
baseline run (``check``: exit 1 on any failure)."""

from __future__ import annotations

from dyn_inspect.inspector.analysis.breaks import BreakSite, break_sites
from dyn_inspect.inspector.analysis.diff import BreakItem, RecompileItem, break_items, compare, recompile_items
from dyn_inspect.inspector.analysis.failures import compile_failures, line_text
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.ranks import divergence_report
from dyn_inspect.inspector.reports.divergence import divergence
from dyn_inspect.inspector.run import Run


def check_break(site: BreakSite) -> typed.CheckBreak:
    return typed.CheckBreak(
        type=site.first.gb_type,
        file=site.loc.file,
        line=site.loc.line,
        count=site.count,
        user_file=site.user_frame.file if site.user_frame else None,
        user_line=site.user_frame.line if site.user_frame else None,
    )


def check_new_break(b: BreakItem, count: int) -> typed.CheckNewBreak:
    """A break site the baseline run did not have, hit ``count`` times."""
    return typed.CheckNewBreak(type=b.gb_type, file=b.file, line=b.line, function=b.function, count=count)


def check_new_recompile(x: RecompileItem, count: int) -> typed.CheckNewRecompile:
    """A recompile cause the baseline run did not have, ``count`` recompiles."""
    return typed.CheckNewRecompile(function=x.function, file=x.file, kind=x.kind, source=x.source, dim=x.dim, reason=x.example, count=count)


def check_report(
    run: Run, limits: typed.CheckLimits, baseline: Run | None = None, max_divergences: int | None = None, all_ranks: bool = True
) -> typed.CheckReport:
    """What ``check --json`` prints: each limit of ``limits`` the run exceeds (with the
    offending items), each break or recompile cause ``baseline`` did not have, and the rank
    divergences (``all_ranks``: the run is not narrowed to some ranks) — a failure only
    beyond ``max_divergences``. ``ok`` when nothing failed."""
    m = run.model
    sites = break_sites(m)
    recompiles = len(m.recompiles)
    found: list[typed.CheckFailure] = []
    if limits.max_graph_breaks is not None and len(sites) > limits.max_graph_breaks:
        found.append(typed.MaxGraphBreaks(limit=limits.max_graph_breaks, actual=len(sites), items=[check_break(s) for s in sites]))
    if limits.max_recompiles is not None and recompiles > limits.max_recompiles:
        recompile_items_ = [
            typed.CheckRecompile(
                compile_id=x.compile.cid,
                function=x.compile.capture.co_name if x.compile.capture else None,
                file=x.compile.capture.co_filename if x.compile.capture else None,
                reasons=list(x.event.reasons),
            )
            for x in m.recompiles
        ]
        found.append(typed.MaxRecompiles(limit=limits.max_recompiles, actual=recompiles, items=recompile_items_))
    if limits.max_causes is not None:
        from dyn_inspect.inspector.analysis.causes import recompile_causes

        causes = recompile_causes(m)
        if len(causes) > limits.max_causes:
            found.append(
                typed.MaxCauses(
                    limit=limits.max_causes,
                    actual=len(causes),
                    items=[
                        typed.CheckCause(title=c.title, recompiles=c.recompile_count, fix=c.fix.code if c.fix else None) for c in causes
                    ],
                )
            )
    compile_fails = compile_failures(m)
    if len(compile_fails) > limits.max_failures:
        fail_items = [
            typed.CheckCompileFailure(
                compile_id=f.cid,
                function=f.function,
                type=f.fail_type,
                message=f.headline,
                reason=f.reason,
                file=f.user_loc.file if f.user_loc else None,
                line=f.user_loc.line if f.user_loc else None,
                code=line_text(f.user_loc),
            )
            for f in compile_fails
        ]
        found.append(typed.MaxFailures(limit=limits.max_failures, actual=len(compile_fails), items=fail_items))
    if baseline is not None:
        new_breaks = [check_new_break(b, n) for b, n in compare(break_items(baseline.model), break_items(m)).added]
        if new_breaks:
            found.append(typed.NewGraphBreaks(baseline=str(baseline.path), actual=len(new_breaks), items=new_breaks))
        new_recompiles = [check_new_recompile(x, n) for x, n in compare(recompile_items(baseline.model), recompile_items(m)).added]
        if new_recompiles:
            found.append(typed.NewRecompiles(baseline=str(baseline.path), actual=len(new_recompiles), items=new_recompiles))
    # Ranks that compiled differently are a classic cause of collective hangs: always
    # reported, a failure only with a limit.
    divergences = [divergence(d) for d in divergence_report(m)] if all_ranks else []
    if max_divergences is not None and len(divergences) > max_divergences:
        found.append(typed.MaxDivergences(limit=max_divergences, actual=len(divergences), items=divergences))
    return typed.CheckReport(
        run=str(run.path),
        baseline=str(baseline.path) if baseline else None,
        ok=not found,
        graph_breaks=len(sites),
        recompiles=recompiles,
        compile_failures=len(compile_fails),
        limits=limits,
        failures=found,
        divergence=divergences,
    )
