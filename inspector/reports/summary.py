"""The run at a glance: what ``summary --json`` prints and the text summary renders — the
run's status, environment and counts, its break sites, compile failures and recompiles,
what the recorder could not hook, and how the ranks differ. Stable keys; paths absolute;
times in seconds."""

from __future__ import annotations

from typing import Any

import msgspec

from dyn_inspect.engine.torch_compat import degraded_notes
from dyn_inspect.inspector import ranks
from dyn_inspect.inspector.analysis.no_graph import no_graph
from dyn_inspect.inspector.outputs import Counts, environment
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports.breaks import ddp_split_sites, run_breaks
from dyn_inspect.inspector.reports.divergence import divergence, node_status, rank_group
from dyn_inspect.inspector.reports.failures import run_failures
from dyn_inspect.inspector.reports.recompiles import recompile_row
from dyn_inspect.inspector.reports.rounding import us
from dyn_inspect.inspector.run import Run

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
        compiles=m.compile_count(compiles),
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
        breaks=run_breaks(m),
        ddp_splits=ddp_split_sites(m),
        step_us=us(m.step_profiles[0][1].step_us) if m.step_profiles else None,
        plain_step_us=us(p) if m.step_profiles and (p := m.step_profiles[0][1].plain_step_us) is not None else None,
        compile_failures=run_failures(m),
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
