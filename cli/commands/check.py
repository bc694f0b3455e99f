"""``dyn-inspect check [RUN] --max-graph-breaks N --max-recompiles N [--baseline RUN]``: a
CI gate. Exit 0 within limits; 1 with the offending items when a limit is exceeded or a
break/recompile appears that the baseline run did not have; 2 when a run cannot be read.

Graph breaks count unique break sites (what you would fix), recompiles count recompile
events (each one a compile beyond a frame's first, including a recompile-limit hit).
Compile failures (a ``fullgraph=True`` error, a backend exception) fail the check by
default, even when the program caught them: ``--max-failures N`` allows N."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import msgspec

from dyn_inspect.cli.common import add_run_arguments, open_cli_run, print_read_warnings
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.locations import file_line, short_path
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.ranks import format_ranks
from dyn_inspect.inspector.reports.check import check_report

HELP = "CI gate: exit 1 when graph breaks/recompiles exceed limits or are new vs a baseline run"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, json=True, rank=True)
    parser.add_argument("--max-graph-breaks", type=int, metavar="N", help="most unique graph-break sites allowed")
    parser.add_argument("--max-recompiles", type=int, metavar="N", help="most recompiles allowed")
    parser.add_argument("--max-causes", type=int, metavar="N", help="most recompile root causes allowed (dyn-inspect causes)")
    parser.add_argument("--baseline", metavar="RUN", help="fail on any break or recompile cause this run did not have")
    parser.add_argument(
        "--max-failures",
        type=int,
        metavar="N",
        default=0,
        help="most failed compiles allowed (default 0: any compile failure fails the check)",
    )
    parser.add_argument(
        "--max-divergences", type=int, metavar="N", help="most rank divergences allowed (distributed runs; always reported)"
    )


_Line = Callable[[dict[str, Any]], str]

# check → its FAIL line (from the failed check's JSON) and the line of each of its items;
# max_divergences lists none (the divergences are the notes above it)
_FAIL_LINES: dict[str, tuple[_Line, _Line | None]] = {
    "max_graph_breaks": (
        lambda f: f"FAIL graph breaks: {f['actual']} unique sites > {f['limit']} allowed",
        lambda b: f"  {file_line(b['file'], b['line'])}  {b['type']}  ×{b['count']}",
    ),
    "max_recompiles": (
        lambda f: f"FAIL recompiles: {f['actual']} > {f['limit']} allowed",
        lambda x: f"  [{x['compile_id']}] {x['function']} ({short_path(x['file'] or '?')}): {x['reasons'][0] if x['reasons'] else '?'}",
    ),
    "max_causes": (
        lambda f: f"FAIL recompile causes: {f['actual']} > {f['limit']} allowed",
        lambda x: f"  {x['title']}" + (f"  — fix: {x['fix']}" if x["fix"] else ""),
    ),
    "new_graph_breaks": (
        lambda f: f"FAIL {f['actual']} graph break site(s) not in baseline {short_path(f['baseline'])}",
        lambda b: f"  {b['file']}:{b['line']}  {b['type']}  ×{b['count']}",
    ),
    "max_failures": (
        lambda f: f"FAIL compile failures: {f['actual']} > {f['limit']} allowed",
        lambda x: (
            f"  [{x['compile_id']}] {file_line(x['file'], x['line']) if x['file'] else '?'}  {x['function']}: {x['type']}: {x['message']}"
        ),
    ),
    "max_divergences": (lambda f: f"FAIL rank divergences: {f['actual']} > {f['limit']} allowed (listed above)", None),
    "new_recompiles": (
        lambda f: f"FAIL {f['actual']} recompile cause(s) not in baseline {short_path(f['baseline'])}",
        lambda x: f"  {x['function']} ({x['file']}): {x['reason']}",
    ),
}


def run(args: argparse.Namespace) -> int:
    r = open_cli_run(args.run, args.runs_dir, args.rank)
    print_read_warnings(r)
    base = open_cli_run(args.baseline, args.runs_dir, args.rank) if args.baseline else None
    if base is not None:
        print_read_warnings(base)
    limits = typed.CheckLimits(
        max_graph_breaks=args.max_graph_breaks,
        max_recompiles=args.max_recompiles,
        max_failures=args.max_failures,
        max_causes=args.max_causes,
    )
    report = check_report(r, limits, base, args.max_divergences, all_ranks=args.rank is None)
    ok = report.ok
    if args.json:
        sys.stdout.write(to_json(report) + "\n")
        return 0 if ok else 1
    failures: list[dict[str, Any]] = msgspec.to_builtins(report.failures)
    console = make_console()
    say = lambda s: console.print(s, markup=False, highlight=False)  # noqa: E731
    for d in report.divergence:
        say(f"note: ranks diverge — {d.message} ({format_ranks(d.ranks)})")
    if ok:
        base_note = f", nothing new vs {base.path.name}" if base else ""
        fails = f", {report.compile_failures} compile failure(s) allowed" if report.compile_failures else ""
        say(f"check passed: {report.graph_breaks} graph-break site(s), {report.recompiles} recompile(s){fails}{base_note}")
        return 0
    for f in failures:
        lines = _FAIL_LINES.get(f["check"])
        if lines is None:
            continue
        headline, item = lines
        say(headline(f))
        if item is not None:
            for x in f["items"]:
                say(item(x))
    return 1
