"""``dyn-inspect breaks [RUN] [--root DIR]``: graph breaks, deduplicated, most hit first,
each with the user line it is attributed to (the nearest frame inside the workspace)."""

from __future__ import annotations

import argparse

from rich.table import Table

from dyn_inspect.cli.common import add_run_arguments, print_ddp_splits, printed_json, read_run
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.locations import file_line, short_path
from dyn_inspect.inspector.outputs import SourceLoc
from dyn_inspect.inspector.outputs.reports import BreakSite
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
    r = read_run(args)
    report = breaks_report(r, args.root)
    if printed_json(args, report):
        return 0
    console = make_console()
    console.print(f"graph breaks: {report.unique} unique / {report.total} total — {short_path(str(r.path))}", markup=False, highlight=False)
    say = lambda text: console.print(text, markup=False, highlight=False)  # noqa: E731 - log text is not markup
    if not report.breaks:
        print_ddp_splits(report.ddp_splits, say, len(r.model.ranks()) > 1)
        return 0
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
    # The user's line first (what they can change); torch's own location when it differs.
    for col in ("hits", "your line", "type", "torch reports"):
        table.add_column(col, overflow="fold")
    for b in report.breaks:
        loc = _where(b.loc)
        user = ", ".join(_where(f) for f in b.user_frames) or "-"
        if b.user_frame is not None and b.loc is not None and (b.user_frame.file, b.user_frame.line) == (b.loc.file, b.loc.line):
            if len(b.user_frames) == 1:
                user, loc = loc, "(same)"
        table.add_row(f"×{b.count}", user, _label(b), loc)
    console.print(table)
    print_ddp_splits(report.ddp_splits, say, len(r.model.ranks()) > 1)
    if args.stacks:
        for b in report.breaks:
            console.print()
            console.print(f"{_where(b.loc)}  {_label(b)} — torch: {b.type}", markup=False, highlight=False)
            for f in b.stack:
                if f is not None:
                    console.print(f"    {_where(f)} in {f.name or '?'}: {f.code or ''}", markup=False, highlight=False)
            if b.context:
                console.print(f"    torch's debug context: {b.context}", markup=False, highlight=False)
            for h in b.hints:
                console.print(f"    hint: {h}", markup=False, highlight=False)
            if b.url:
                console.print(f"    {b.url}", markup=False, highlight=False)
    return 0


def _where(loc: SourceLoc | None) -> str:
    return file_line(loc.file, loc.line) if loc is not None else "?"


def _label(b: BreakSite) -> str:
    """The headline with torch's gb id, as lists show it."""
    return f"{b.headline} ({b.gb_id})" if b.gb_id else b.headline
