"""``dyn-inspect trace [RUN] -o trace.json``: the run's compile timeline as a Chrome trace
(open it in https://ui.perfetto.dev or chrome://tracing)."""

from __future__ import annotations

import argparse
import os
import sys

from dyn_inspect.cli.common import add_run_arguments, open_cli_run, print_read_warnings
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.reports.timeline import trace_file

HELP = "write the compile timeline (torch's stage timings + breaks/recompiles) as a Chrome/Perfetto trace"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, rank=True)
    parser.add_argument(
        "-o", "--output", metavar="FILE", default="trace.json", help="where to write it (default: trace.json; - for stdout)"
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")


def run(args: argparse.Namespace) -> int:
    r = open_cli_run(args.run, args.runs_dir, args.rank)
    print_read_warnings(r)
    trace = trace_file(r)
    if args.output == "-":
        sys.stdout.buffer.write(trace.data + b"\n")
        return 0
    if os.path.exists(args.output) and not args.force:
        raise InspectorError(f"{args.output} exists (use --force to overwrite)")
    # The trace names the user's files and functions: private like the run itself.
    fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(trace.data)
    print(f"wrote {args.output}: {trace.spans} spans, {trace.markers} markers — open it in https://ui.perfetto.dev")
    return 0
