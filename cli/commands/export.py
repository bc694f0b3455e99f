"""``dyn-inspect export [RUN] [-o FILE.zip] [--compile-id ID ...] [--at FILE:LINE]
[--redact-source] [--no-pictures] [--picture-budget S] [-v] [--force]``: one bug-report zip
(see docs/export.md)."""

from __future__ import annotations

import argparse
import math
import sys
import time

from dyn_inspect.cli.common import add_run_arguments, skipped_lines
from dyn_inspect.inspector.export import ExportPlan, PictureOptions, export_run
from dyn_inspect.inspector.export.pictures import BUDGET_S, MAX_NODES
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.run import open_run

HELP = "write a bug-report bundle (zip): graphs, runnable repros, kernels, report, TORCH_TRACE log"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser)
    parser.add_argument("-o", "--output", metavar="FILE.zip", help="where to write (default: ./dyn-inspect-<run-id>.zip)")
    parser.add_argument(
        "--compile-id",
        metavar="ID",
        nargs="+",
        action="extend",
        dest="compile_ids",
        help='only these compiles ("0/1", or "p123:0/1" for one process)',
    )
    parser.add_argument("--at", metavar="FILE:LINE", help="only the compiles that touched this source line")
    parser.add_argument(
        "--kernel",
        metavar="NAME",
        nargs="+",
        action="extend",
        dest="kernels",
        help="only the compiles that made these kernels (each Triton kernel's standalone repro is in the bundle)",
    )
    parser.add_argument(
        "--redact-source", action="store_true", help="leave out the model's source text and stack lines (keeps graphs, kernels, metrics)"
    )
    parser.add_argument(
        "--no-pictures", action="store_true", help="draw no SVG of the graphs (their DOT files are in the bundle either way)"
    )
    parser.add_argument(
        "--picture-budget",
        metavar="SECONDS",
        type=float,
        default=BUDGET_S,
        help=f"wall-clock seconds for all graph pictures together, drawn in parallel; graphs above {MAX_NODES} nodes "
        f"are not drawn (default {BUDGET_S:g})",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print the time each part of the export took")
    parser.add_argument("--force", action="store_true", help="overwrite the output file if it exists")
    parser.add_argument("--json", action="store_true", help="print the result as JSON (for editors)")


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def run(args: argparse.Namespace) -> int:
    if not math.isfinite(args.picture_budget) or args.picture_budget < 0:
        print("dyn-inspect: --picture-budget must be a number of seconds, 0 or more", file=sys.stderr)
        return 2
    started = time.perf_counter()
    the_run = open_run(args.run, args.runs_dir)
    # Progress goes to stderr so that --json leaves stdout to the result.
    err = sys.stderr

    planned = started

    def announce(plan: ExportPlan) -> None:
        nonlocal planned
        planned = time.perf_counter()
        what = "the whole run" if plan.selection.whole_run else f"{plan.compile_count} compile(s)"
        print(
            f"dyn-inspect: exporting {what} of {the_run.path.name} to {plan.out}: "
            f"{_size(plan.payload_bytes)} of payloads ({len(plan.blobs)} unique), "
            f"about {_size(plan.estimate_bytes)} before compression",
            file=err,
        )
        if not plan.redacted:
            print(
                "dyn-inspect: note: the bundle contains your model's source code (graph comments, guards, "
                "tracebacks); use --redact-source to leave it out",
                file=err,
            )

    result = export_run(
        the_run,
        args.output,
        compile_ids=args.compile_ids,
        at=args.at,
        kernels=args.kernels,
        redact_source=args.redact_source,
        force=args.force,
        on_plan=announce,
        command=["dyn-inspect", *sys.argv[1:]],
        pictures=PictureOptions(draw=not args.no_pictures, budget_s=args.picture_budget),
    )
    if args.verbose:
        parts = {"reading the run": planned - started, **result.timings}
        for part, seconds in parts.items():
            print(f"dyn-inspect: {seconds:7.2f}s  {part}", file=err)
        print(f"dyn-inspect: {time.perf_counter() - started:7.2f}s  in all", file=err)
    if args.json:
        print(to_json(result.output()))
    else:
        print(f"wrote {result.path} ({_size(result.size_bytes)}, {result.files} files, {result.compiles} compiles)")
        for line in skipped_lines([str(s) for s in result.skipped]):
            print(line)
        for i in result.incomplete:
            print(f"  incomplete: {i}")
    return 0
