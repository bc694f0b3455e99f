"""``dyn-inspect code CID [RUN]``: Dynamo's code for one compile — original and transformed
bytecode side by side by user line, the resume functions its graph breaks created (and
where each resumes in the user's source), and its guards one per line grouped by what they
guard (``inspector.analysis.bytecode``)."""

from __future__ import annotations

import argparse
import itertools
import sys

from rich.table import Table

from dyn_inspect.cli.common import add_run_arguments, open_cli_run, print_read_warnings
from dyn_inspect.inspector.analysis.bytecode import ResumeFunction, compile_code, find
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import file_line
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reports.code import code_report
from dyn_inspect.inspector.source_files import source_line

HELP = "Dynamo's code for one compile: original vs transformed bytecode by source line, resume functions, guards"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("compile_id", metavar="CID", help="compile id as the other commands print it (0/1)")
    add_run_arguments(parser, json=True, rank=True)


def _resume_text(r: ResumeFunction) -> str:
    where = file_line(r.loc.file, r.line) if r.loc else f"line {r.line}"
    code = f": `{r.loc.code.split('  #')[0].strip()}`" if r.loc and r.loc.code else ""
    return f"{r.name} — resumes `{r.function}` after the graph break at {where}{code} (compiles {', '.join(r.compiles)})"


def run(args: argparse.Namespace) -> int:
    r = open_cli_run(args.run, args.runs_dir, args.rank)
    print_read_warnings(r)
    c = find(r, args.compile_id)
    if c is None:
        known = ", ".join(c.cid for c in r.model.compiles_in_order()[:12])
        raise InspectorError(f"no compile {args.compile_id} in {r.path.name} (compiles: {known or 'none'})")
    cc = compile_code(r, c)
    if args.json:
        sys.stdout.write(to_json(code_report(cc)) + "\n")
        return 0
    console = make_console()

    def say(text: str = "") -> None:
        console.print(text, markup=False, highlight=False)

    cap = c.capture
    where = file_line(cap.co_filename, cap.co_firstlineno) if cap and cap.co_filename else "?"
    say(f"compile {c.cid}  {cc.function}  ({where})")
    if cc.resume:
        say(f"  a resume function: {_resume_text(cc.resume)}")
    for res in cc.creates:
        say(f"  its graph break created {_resume_text(res)}")
    say()
    if not cc.original and not cc.modified:
        say("no bytecode recorded: torch logs the original and transformed bytecode of resume functions only;")
        say(f"this frame's original is its source at {where}")
    else:
        source = cap.co_filename if cap else None
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
        table.add_column("line", justify="right", no_wrap=True)
        table.add_column("original bytecode", no_wrap=True)
        table.add_column("transformed by Dynamo", no_wrap=True)
        for b in cc.blocks:
            text = source_line(source, b.line).strip() if source and b.line else ""
            table.add_row(str(b.line or "-"), text, "", style="bold")
            for o, m in itertools.zip_longest(b.original, b.modified):
                table.add_row("", o.text() if o else "", m.text() if m else "")
        console.print(table)
    groups = cc.guards_by_source()
    say()
    say(f"guards ({len(cc.guards)}), by what they guard:")
    for src, gs in groups:
        say(f"  {src or '(global state)'}")
        for g in gs:
            say(f"    {g.expr}")
    return 0
