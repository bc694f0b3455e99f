"""``dyn-inspect code CID [RUN]``: Dynamo's code for one compile — original and transformed
bytecode side by side by user line, the resume functions its graph breaks created (and
where each resumes in the user's source), and its guards one per line grouped by what they
guard (the report layer's ``CodeReport``, ``inspector/reports/code.py``)."""

from __future__ import annotations

import argparse
import itertools

from rich.table import Table

from dyn_inspect.cli.common import add_run_arguments, printed_json, read_run, text_console
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import file_line
from dyn_inspect.inspector.outputs.reports import ResumeFunction
from dyn_inspect.inspector.reports.code import code_report, find

HELP = "Dynamo's code for one compile: original vs transformed bytecode by source line, resume functions, guards"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("compile_id", metavar="CID", help="compile id as the other commands print it (0/1)")
    add_run_arguments(parser, json=True, rank=True)


def _resume_text(r: ResumeFunction) -> str:
    where = file_line(r.loc.file, r.line) if r.loc else f"line {r.line}"
    code = f": `{r.loc.code.split('  #')[0].strip()}`" if r.loc and r.loc.code else ""
    return f"{r.name} — resumes `{r.function}` after the graph break at {where}{code} (compiles {', '.join(r.compiles)})"


def run(args: argparse.Namespace) -> int:
    r = read_run(args)
    c = find(r, args.compile_id)
    if c is None:
        known = ", ".join(c.cid for c in r.model.compiles_in_order()[:12])
        raise InspectorError(f"no compile {args.compile_id} in {r.path.name} (compiles: {known or 'none'})")
    cc = code_report(r, c)
    if printed_json(args, cc):
        return 0
    console, say = text_console()

    where = file_line(cc.file, cc.line) if cc.file else "?"
    say(f"compile {c.cid}  {cc.function}  ({where})")
    if cc.resume:
        say(f"  a resume function: {_resume_text(cc.resume)}")
    for res in cc.creates:
        say(f"  its graph break created {_resume_text(res)}")
    say()
    if not cc.blocks:
        say("no bytecode recorded: torch logs the original and transformed bytecode of resume functions only;")
        say(f"this frame's original is its source at {where}")
    else:
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
        table.add_column("line", justify="right", no_wrap=True)
        table.add_column("original bytecode", no_wrap=True)
        table.add_column("transformed by Dynamo", no_wrap=True)
        for b in cc.blocks:
            table.add_row(str(b.line or "-"), b.source or "", "", style="bold")
            for o, m in itertools.zip_longest(b.original, b.modified):
                table.add_row("", o or "", m or "")
        console.print(table)
    say()
    say(f"guards ({cc.guard_count}), by what they guard:")
    for group in cc.guards:
        say(f"  {group.source or '(global state)'}")
        for g in group.guards:
            say(f"    {g}")
    return 0
