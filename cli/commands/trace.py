"""``dyn-inspect trace [RUN] -o trace.json``: the run's compile timeline as a Chrome trace
(open it in https://ui.perfetto.dev or chrome://tracing)."""

from __future__ import annotations

import argparse
import os
import sys

from dyn_inspect.cli.common import add_run_arguments, open_cli_run, print_read_warnings
from dyn_inspect.inspector.analysis.timeline import chrome_trace, encode
from dyn_inspect.inspector.errors import InspectorError

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
    trace = chrome_trace(r)
    data = encode(trace)
    if args.output == "-":
        sys.stdout.buffer.write(data + b"\n")
        return 0
    if os.path.exists(args.output) and not args.force:
        raise InspectorError(f"{args.output} exists (use --force to overwrite)")
    # The trace names the user's files and functions: private like the run itself.
    fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    spans = sum(1 for e in trace.traceEvents if e.ph == "X")
    markers = sum(1 for e in trace.traceEvents if e.ph == "i" and e.cat == "dyn-inspect")
    print(f"wrote {args.output}: {spans} spans, {markers} markers — open it in https://ui.perfetto.dev")
    return 0
