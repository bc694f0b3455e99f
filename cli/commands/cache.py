"""``dyn-inspect cache [RUN]``: per compile, what the FX graph, AOTAutograd and Triton caches
did (hit, miss, bypass) with torch's reason, and why a warm run still compiled
(``inspector.analysis.cache``)."""

from __future__ import annotations

import argparse
import sys

from rich.table import Table

from dyn_inspect.cli.common import add_rank_argument, open_cli_run, print_read_warnings
from dyn_inspect.inspector.analysis.cache import CacheLookup, CompileCache, cache_report, component_words, miss_diff
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.locations import short_path
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.run import Run

HELP = "compile caches per compile: FX graph / AOTAutograd / Triton hit, miss or bypass with torch's reason"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?", help="run directory or id (default: latest)")
    parser.add_argument("--runs-dir", metavar="DIR")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_rank_argument(parser)


def lookup_dict(lk: CacheLookup) -> typed.CacheLookup:
    return typed.CacheLookup(
        cache=lk.cache,
        state=lk.state,
        key=lk.key,
        reason=lk.reason,
        time_saved_s=lk.time_saved_s,
        time_taken_s=lk.time_taken_s,
        triton_kernels=list(lk.triton_kernels),
    )


def compile_dict(run: Run, cc: CompileCache) -> typed.CompileCache:
    diff = miss_diff(run, cc)
    return typed.CompileCache(
        compile_id=cc.compile.cid,
        log=cc.compile.log,
        function=cc.function,
        verdict=cc.verdict,
        why_compiled=cc.why_compiled(),
        lookups=[lookup_dict(lk) for lk in cc.lookups],
        miss_differs_from=typed.MissDiffers(compile_id=diff.other_cid, components=list(diff.differs)) if diff else None,
    )


def _cell(cc: CompileCache, cache: str) -> str:
    found = cc.lookup(cache)
    return ", ".join(lk.state + (f" ({lk.time_saved_s:.1f}s saved)" if lk.time_saved_s else "") for lk in found) or "-"


def run(args: argparse.Namespace) -> int:
    r = open_cli_run(args.run, args.runs_dir, args.rank)
    print_read_warnings(r)
    report = cache_report(r)
    dynamo_s = sum(c.capture.times.dynamo_s or 0.0 for c in r.model.compiles.values() if c.capture)
    if args.json:
        data = typed.CacheReport(
            run=str(r.path),
            warm=report.warm,
            time_saved_s=report.time_saved_s,
            story=report.story(dynamo_s),
            cold=report.cold(),
            compiles=[compile_dict(r, cc) for cc in report.compiles],
        )
        sys.stdout.write(to_json(data) + "\n")
        return 0
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
