"""``dyn-inspect summary [RUN]``: the run at a glance (also printed after a --no-tui run)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO

from dyn_inspect.inspector.analysis.recompiles import parse_reason, suggest
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.ranks import add_rank_argument, format_ranks, select_rank
from dyn_inspect.inspector.reports import short_path, summary_dict
from dyn_inspect.inspector.run import Run, open_run

HELP = "summarize a run: frames, graph breaks, recompiles, kernels, compile time, rank divergence"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?", help="run directory or id (default: latest)")
    parser.add_argument("--runs-dir", metavar="DIR")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_rank_argument(parser)


def print_summary(run: Run, as_json: bool = False, file: IO[str] | None = None) -> None:
    data = summary_dict(run)
    out = file or sys.stdout
    if as_json:
        out.write(json.dumps(data, indent=2) + "\n")
        return
    console = make_console(out)
    gb = data["graph_breaks"]
    stages = ", ".join(f"{k} {v:.2f}s" for k, v in data["compile_time_by_stage_s"].items())
    exit_text = f"exit {data['exit_code']}" if data["exit_code"] is not None else "no exit status"
    # sys.exit(3) is the program's own answer, not a crash: "exited with 3".
    outcome = f"exited with {data['exit_code']}" if data["status"] == "exited" else f"{data['status']} ({exit_text})"
    console.print(f"[bold]dyn-inspect[/]: {outcome} — log: {short_path(data['run'])}")
    if data["compile_disabled"]:
        console.print("  compile disabled (--disable-compile): the program ran eagerly")
    for note in data.get("degraded", []):
        console.print(f"  degraded: {note}", markup=False, highlight=False)
    console.print(
        f"  compiled frames: {data['frames']} ({data['compiles']} compiles, {data['graphs']} graphs), "
        f"kernels: {data['kernels']}, compile time: {data['compile_time_s']:.2f}s" + (f" ({stages})" if stages else "")
    )
    console.print(f"  graph breaks: {gb['unique']} unique / {gb['total']} total")
    for b in data["breaks"]:
        loc = b["loc"]
        gbid = f" {b['gb_id']}" if b["gb_id"] else ""
        on = f"  ({format_ranks(b['ranks'])})" if len(data["ranks"]) > 1 else ""
        console.print(f"    {short_path(loc['file'])}:{loc['line']}  {b['type']}{gbid}  ×{b['count']}{on}", markup=False, highlight=False)
    console.print(f"  recompiles: {data['recompiles']}")
    for r in data["recompile_list"]:
        # torch's reason text carries padding and the user-code comment: show the guard.
        failure = parse_reason(r["reasons"][0]) if r["reasons"] else None
        reason = failure.text if failure else "?"
        hint = (suggest(failure).code or "") if failure else ""  # the snippet; `recompiles` explains
        where = f"{short_path(r['file'])}:{r['line']}" if r["file"] else "?"
        console.print(f"    {r['function']} ({where}): {reason}", markup=False, highlight=False)
        if hint:
            console.print(f"      try: {hint}", markup=False, highlight=False)
    for lim in data["recompile_limit_hit"]:
        console.print(
            f"    {lim['function']} ({short_path(lim['file'] or '?')}:{lim['line']}): recompile limit reached — runs eagerly from then on",
            markup=False, highlight=False,
        )
    if len(data["ranks"]) > 1:
        divergences = data["divergence"]
        verdict = f"{len(divergences)} divergence{'s' if len(divergences) != 1 else ''}" if divergences else "all compiled the same"
        console.print(f"  ranks: {format_ranks(data['ranks']).removeprefix('ranks ')} — {verdict}")
        for d in divergences:
            console.print(f"    ! {d['message']}", markup=False, highlight=False)
    for p in data["problems"]:
        console.print(f"  skipped: {p}", markup=False, highlight=False)


def run(args: argparse.Namespace) -> int:
    run = open_run(args.run, args.runs_dir)
    print_summary(select_rank(run, getattr(args, "rank", None)), as_json=args.json)
    return 0
