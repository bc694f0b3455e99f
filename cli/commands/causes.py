"""``dyn-inspect causes [RUN]``: findings grouped by root cause, most expensive first, each
with the one fix that removes it where one is known (see ``analysis/causes.py``).

``--fix``: under each cause, every fix plan the inspector makes for it on the files as they
are now (``inspector/reports/fix_plans.py``'s ``site_plans``: the quick fixes the editor
offers, each of a kind the fix corpus verifies), as a unified diff to apply with ``git
apply`` / ``patch -p1`` in the run's directory; ``--fix --json`` prints those plans."""

from __future__ import annotations

import argparse
from pathlib import Path

from dyn_inspect.cli.common import add_run_arguments, printed_json, read_run
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports.causes import causes_of

HELP = "group recompiles and graph breaks by root cause, with one fix per cause"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, json=True, rank=True)
    parser.add_argument("--fix", action="store_true", help="under each cause, every fix plan for it as a diff (with --json: the plans)")


def run(args: argparse.Namespace) -> int:
    r = read_run(args)
    plans: list[typed.SitePlan] = []
    if args.fix:
        from dyn_inspect.inspector.reports.fix_plans import site_plans

        planned = site_plans(r)
        if printed_json(args, planned):
            return 0
        plans = planned.plans
    report = causes_of(r)
    if printed_json(args, report):
        return 0
    found = report.causes
    console = make_console()
    n_re = sum(c.recompiles for c in found)
    console.print(
        f"causes: {len(found)} ({n_re} recompiles, {sum(1 for c in found if c.kind == 'graph_break')} break sites) — {r.path}",
        markup=False,
        highlight=False,
    )
    for i, c in enumerate(found, 1):
        console.print(f"\n{i}. {c.title}", markup=False, highlight=False, style="bold")
        console.print(f"   {c.detail}", markup=False, highlight=False)
        if c.step_cost is not None:
            console.print(f"   at run time: {c.step_cost}", markup=False, highlight=False)
        if c.kind == "recompile" and c.compile_time_s:
            console.print(f"   compile time spent on them: {c.compile_time_s:.2f}s", markup=False, highlight=False)
        if c.fix is not None:
            what = (
                f"at {Path(c.fix.file).name}:{c.fix.after_line}, `{c.fix.replaces}` →  {c.fix.replacement}"
                if c.fix.replaces is not None
                else f"insert after {Path(c.fix.file).name}:{c.fix.after_line}:  {c.fix.one_line}"
            )
            console.print(
                f"   fix: {what}",
                markup=False,
                highlight=False,
                style="green",
            )
        elif c.no_fix is not None and not any(p.cause == i for p in plans):
            console.print(f"   ({c.no_fix})", markup=False, highlight=False, style="dim")
        for plan in (p for p in plans if p.cause == i):
            console.print(
                f"   plan ({plan.fix_kind}{', preferred' if plan.preferred else ''}): {plan.title}",
                markup=False,
                highlight=False,
                style="green" if plan.keeps_behaviour else "yellow",
            )
            for line in plan.diff.splitlines():
                console.print(f"     {line}", markup=False, highlight=False)
    if args.fix and not plans:
        console.print(
            "\nno fix plans for these causes (none known to be right, or the files changed since the run)", markup=False, highlight=False
        )
    return 0
