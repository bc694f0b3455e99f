"""What failed to compile: each failure site (a ``fullgraph=True`` error, a backend
exception) with the user's line and torch's message (``inspector/analysis/failures.py``)."""

from __future__ import annotations

import msgspec

from dyn_inspect.inspector.analysis.failures import FailureSite, failure_sites, line_text
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import source_loc
from dyn_inspect.inspector.run import Run


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


def run_failures(model: RunModel) -> list[typed.FailureSite]:
    """Every failure site of the run: the summary's and the bundle's pages'."""
    return [failure_site(site) for site in failure_sites(model)]


def failures_report(run: Run) -> typed.FailuresReport:
    """Every failure site of ``run`` (the MCP server's ``failures``)."""
    return typed.FailuresReport(run=str(run.path), failures=run_failures(run.model))
