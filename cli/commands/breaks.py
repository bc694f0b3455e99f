"""``dyn-inspect breaks [RUN] [--root DIR]``: graph breaks, deduplicated, most hit first,
each with the user line it is attributed to (the nearest frame inside the workspace)."""

from __future__ import annotations

import argparse
import sys

from rich.table import Table

from dyn_inspect.cli.common import add_run_arguments, open_cli_run, print_read_warnings
from dyn_inspect.inspector.analysis.breaks import break_sites
from dyn_inspect.inspector.analysis.messages import headline, label
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.locations import file_line, short_path
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reports.breaks import breaks_report

HELP = "list graph breaks (deduplicated) with hit counts and the user line they come from"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, json=True, rank=True)
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="workspace root: attribute each break to the nearest frame inside it (default: the innermost non-library frame)",
    )
    parser.add_argument("--stacks", action="store_true", help="print each break's full stack and torch's hints")


def run(args: argparse.Namespace) -> int:
    r = open_cli_run(args.run, args.runs_dir, args.rank)
    print_read_warnings(r)
    sites = break_sites(r.model, args.root)
    report = breaks_report(r, sites, args.root)
    if args.json:
        sys.stdout.write(to_json(report) + "\n")
        return 0
    console = make_console()
    console.print(f"graph breaks: {report.unique} unique / {report.total} total — {short_path(str(r.path))}", markup=False, highlight=False)
    if not sites:
        return 0
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
    # The user's line first (what they can change); torch's own location when it differs.
    for col in ("hits", "your line", "type", "torch reports"):
        table.add_column(col, overflow="fold")
    for s in sites:
        loc = file_line(s.loc.file, s.loc.line)
        gb = f" ({s.first.gb_id})" if s.first.gb_id else ""
        user = ", ".join(file_line(f.file, f.line) for f in s.user_frames) or "-"
        if s.user_frame is not None and (s.user_frame.file, s.user_frame.line) == (s.loc.file, s.loc.line) and len(s.user_frames) == 1:
            user, loc = loc, "(same)"
        table.add_row(f"×{s.count}", user, f"{headline(s.first)}{gb}", loc)
    console.print(table)
    if args.stacks:
        for s in sites:
            console.print()
            console.print(
                f"{file_line(s.loc.file, s.loc.line)}  {label(s.first)} — torch: {s.first.gb_type}", markup=False, highlight=False
            )
            for f in s.stack:
                console.print(f"    {file_line(f.file, f.line)} in {f.name or '?'}: {f.code or ''}", markup=False, highlight=False)
            if s.context:
                console.print(f"    torch's debug context: {s.context}", markup=False, highlight=False)
            for h in s.first.hints:
                console.print(f"    hint: {h}", markup=False, highlight=False)
            if s.first.url:
                console.print(f"    {s.first.url}", markup=False, highlight=False)
    return 0
