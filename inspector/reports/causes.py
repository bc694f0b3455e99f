"""Which root causes the findings come from, most expensive first, each with the one fix
that removes it where one is known (``inspector/analysis/causes.py``)."""

from __future__ import annotations

from dyn_inspect.inspector.analysis.causes import Cause, Fix, causes
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.run import Run


def fix_output(fix: Fix) -> typed.CauseFix:
    """A fix as ``causes --json`` gives it (the Causes view shows the same)."""
    return typed.CauseFix(
        code=fix.code,
        one_line=fix.one_line,
        file=fix.file,
        after_line=fix.after_line,
        insert="" if fix.replaces is not None else fix.text,
        why=fix.why,
        keeps_behaviour=fix.keeps_behaviour,
        replaces=fix.replaces,
        replacement=fix.replacement,
    )


def cause_output(c: Cause) -> typed.Cause:
    fix = c.fix
    return typed.Cause(
        kind=c.kind,
        title=c.title,
        detail=c.detail,
        recompiles=c.recompile_count,
        compile_time_s=round(c.compile_time_s, 4),
        graph_fragments=c.fragments,
        compile_ids=[x.cid for x in c.recompiles],
        frames=[f.name for f in c.frames],
        values=list(c.values),
        sites=[typed.CauseSite(file=s.file, line=s.line, name=s.name) for s in c.sites],
        fix=fix_output(fix) if fix is not None else None,
        no_fix=c.no_fix,
        us_per_step=round(c.step_us, 3) if c.run_time is not None else None,
        step_cost=c.run_time,
    )


def causes_report(run: Run, found: list[Cause]) -> typed.CausesReport:
    """What ``causes --json`` prints: ``found`` (``causes(model)``)."""
    return typed.CausesReport(run=str(run.path), causes=[cause_output(c) for c in found])


def causes_of(run: Run) -> typed.CausesReport:
    """What ``causes`` prints: the run's root causes, most expensive first."""
    return causes_report(run, causes(run.model))


def run_causes(model: RunModel) -> list[typed.Cause]:
    """Every root cause of the run, most expensive first (the bundle's pages)."""
    return [cause_output(c) for c in causes(model)]
