"""``dyn-inspect cache [RUN]``: per compile, what the FX graph, AOTAutograd and Triton caches
did (hit, miss, bypass) with torch's reason, and why a warm run still compiled
(the report layer's ``CacheReport``, ``inspector/reports/cache.py``)."""

from __future__ import annotations

import argparse

from rich.table import Table

from dyn_inspect.cli.common import add_run_arguments, printed_json, read_run, text_console
from dyn_inspect.inspector.locations import short_path
from dyn_inspect.inspector.outputs.reports import CompileCache
from dyn_inspect.inspector.reports.cache import caches_report

HELP = "compile caches per compile: FX graph / AOTAutograd / Triton hit, miss or bypass with torch's reason"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, json=True, rank=True)


def _cell(cc: CompileCache, cache: str) -> str:
    found = [lk for lk in cc.lookups if lk.cache == cache]
    return ", ".join(lk.state + (f" ({lk.time_saved_s:.1f}s saved)" if lk.time_saved_s else "") for lk in found) or "-"


def run(args: argparse.Namespace) -> int:
    r = read_run(args)
    report = caches_report(r)
    if printed_json(args, report):
        return 0
    console, say = text_console()

    with_lookups = [cc for cc in report.compiles if cc.lookups]
    say(f"compile caches: {len(with_lookups)} compiles looked the caches up — {short_path(str(r.path))}")
    for line in report.story or ([report.cold] if report.cold else []):
        say(f"  {line}")
    if with_lookups:
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
        for col in ("compile", "function", "FX graph", "AOTAutograd", "verdict"):
            table.add_column(col, no_wrap=True)
        for cc in with_lookups:
            verdict = "served from the cache" if cc.verdict == "hit" else f"compiled ({cc.verdict})"
            table.add_row(cc.compile_id, cc.function, _cell(cc, "fx_graph"), _cell(cc, "aotautograd"), verdict)
        say()
        console.print(table)
    # Reasons on lines of their own: torch's bypass reasons are long, a table column would fold them.
    for cc in with_lookups:
        diff = cc.miss_differs_from
        if diff is not None and diff.components:
            words = ", ".join(diff.words[:6])
            say(f"  {cc.function} ({cc.compile_id}): its FX graph key differs from {diff.compile_id}'s in: {words}")
    for cc in report.compiles:
        for lk in cc.lookups:
            if lk.triton_kernels:
                say(f"  {cc.compile_id}: Triton bundle {', '.join(lk.triton_kernels)}")
    return 0
