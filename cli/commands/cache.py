"""``dyn-inspect cache [RUN]``: per compile, what the FX graph, AOTAutograd and Triton caches
did (hit, miss, bypass) with torch's reason, and why a warm run still compiled
(``inspector.analysis.cache``)."""

from __future__ import annotations

import argparse
import sys

from rich.table import Table

from dyn_inspect.cli.common import add_run_arguments, open_cli_run, print_read_warnings
from dyn_inspect.inspector.analysis.cache import CompileCache, cache_report, component_words, miss_diff
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.locations import short_path
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reports.cache import caches_report, dynamo_seconds

HELP = "compile caches per compile: FX graph / AOTAutograd / Triton hit, miss or bypass with torch's reason"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, json=True, rank=True)


def _cell(cc: CompileCache, cache: str) -> str:
    found = cc.lookup(cache)
    return ", ".join(lk.state + (f" ({lk.time_saved_s:.1f}s saved)" if lk.time_saved_s else "") for lk in found) or "-"


def run(args: argparse.Namespace) -> int:
    r = open_cli_run(args.run, args.runs_dir, args.rank)
    print_read_warnings(r)
    report = cache_report(r)
    if args.json:
        sys.stdout.write(to_json(caches_report(r, report)) + "\n")
        return 0
    dynamo_s = dynamo_seconds(r.model)
    console = make_console()

    def say(text: str = "") -> None:
        console.print(text, markup=False, highlight=False)

    with_lookups = [cc for cc in report.compiles if cc.lookups]
    say(f"compile caches: {len(with_lookups)} compiles looked the caches up — {short_path(str(r.path))}")
    cold = report.cold()
    for line in report.story(dynamo_s) or ([cold] if cold else []):
        say(f"  {line}")
    if with_lookups:
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
        for col in ("compile", "function", "FX graph", "AOTAutograd", "verdict"):
            table.add_column(col, no_wrap=True)
        for cc in with_lookups:
            verdict = "served from the cache" if cc.verdict == "hit" else f"compiled ({cc.verdict})"
            table.add_row(cc.compile.cid, cc.function, _cell(cc, "fx_graph"), _cell(cc, "aotautograd"), verdict)
        say()
        console.print(table)
    # Reasons on lines of their own: torch's bypass reasons are long, a table column would fold them.
    for cc in with_lookups:
        diff = miss_diff(r, cc)
        if diff is not None and diff.differs:
            words = ", ".join(component_words(n) for n in diff.differs[:6])
            say(f"  {cc.function} ({cc.compile.cid}): its FX graph key differs from {diff.other_cid}'s in: {words}")
    triton = [(cc, lk) for cc in report.compiles for lk in cc.lookups if lk.triton_kernels]
    for cc, lk in triton:
        say(f"  {cc.compile.cid}: Triton bundle {', '.join(lk.triton_kernels)}")
    return 0
