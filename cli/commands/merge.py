"""``dyn-inspect merge RUN_DIR... -o RUN``: the per-node runs of one multi-node job (each
node recorded on its own disk) → one run, ranks keyed by (node, global rank), clocks
aligned per node, each node's launcher status kept (``inspector/merge.py``).

Prints what each node brought and the clock offset applied, then the merged run's summary
(its divergence report names the differing ranks); ``--json`` prints both as one object.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dyn_inspect.inspector.locations import short_path
from dyn_inspect.inspector.merge import merge_runs
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.ranks import format_ranks
from dyn_inspect.inspector.reports.merge import merge_report
from dyn_inspect.inspector.run import Run

HELP = "merge the per-node runs of one multi-node job into one run"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="a run of each node (a run directory, runs root or run id)")
    parser.add_argument("-o", "--output", metavar="RUN", help="write the merged run here (default: a new run under the runs dir)")
    parser.add_argument("--runs-dir", metavar="DIR", help="runs root when -o is not given (default ./.dyn-inspect/runs)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace) -> int:
    result = merge_runs(args.runs, out=Path(args.output) if args.output else None, runs_dir=args.runs_dir)
    merged = Run(result.run_dir)
    if args.json:
        sys.stdout.write(to_json(merge_report(result, merged)) + "\n")
        return 0
    print(
        f"dyn-inspect: merged {len(result.inputs)} runs into {short_path(str(result.run_dir))} "
        f"({result.events} events, {result.duration_s:.2f}s)"
    )
    for node in result.nodes:
        ranks = sorted({m.rank for m in result.logs if m.node == node and m.rank is not None})
        offset = result.offsets.get(node, 0.0)
        print(f"  node {node}: {format_ranks(ranks)}, clock {offset:+.3f}s")
    for note in result.notes:
        print(f"  note: {note}")
    from dyn_inspect.cli.commands.summary import print_summary

    print_summary(merged)
    return 0
