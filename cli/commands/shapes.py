"""``dyn-inspect shapes [RUN]``: dynamic shapes per compile — the symbols torch created
(dim, example value, range, the user line), the dims it specialized back to a constant and
the user line that did it, and the shape guards (``inspector.reports.shapes``)."""

from __future__ import annotations

import argparse

from dyn_inspect.cli.common import add_run_arguments, printed_json, read_run, text_console
from dyn_inspect.inspector.locations import file_line, short_path
from dyn_inspect.inspector.outputs import SourceLoc
from dyn_inspect.inspector.reports.shapes import shapes_report

HELP = "dynamic shapes per compile: symbols created, dims specialized (and the line that did it), shape guards"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, json=True, rank=True)


def _where(loc: SourceLoc | None) -> str:
    return file_line(loc.file, loc.line) if loc is not None else "-"


def run(args: argparse.Namespace) -> int:
    r = read_run(args)
    report = shapes_report(r)
    if printed_json(args, report):
        return 0
    console, say = text_console()

    found = report.compiles
    say(f"dynamic shapes: {len(found)} compile{'s' if len(found) != 1 else ''} with symbols or shape guards — {short_path(str(r.path))}")
    if not found:
        say("  (every compile was static: no symbols — compile with dynamic=True or mark_dynamic to get some)")
    for cs in found:
        auto = "  (automatic dynamic: torch made the dims that changed dynamic)" if cs.automatic_dynamic else ""
        say()
        say(f"{cs.compile_id}  {cs.function}{auto}")
        for s in cs.symbols:
            state = f"static = {s.static_value}" if s.specialized else f"dynamic {s.range or ''}".rstrip()
            say(f"  {s.symbol:<6} {s.name:<24} example {s.value or '?':<6} {state:<22} created at {_where(s.loc)}")
        for spec in cs.specializations:
            say(f"  specialized: {spec.text}")
        if cs.accepts:
            say("  reused for sizes (the guard tree): " + ", ".join(f"{d.name} {d.text}" for d in cs.accepts))
        for title, guards in (
            ("shape guards:", [g for g in cs.guards if g.installed is not False]),  # (every one when no tree was recorded)
            (
                "logged while compiling, not in the guard tree (never checked when the code runs):",
                [g for g in cs.guards if g.installed is False],
            ),
        ):
            if guards:
                say(f"  {title}")
            for g in guards:
                origin = _where(g.loc) if g.loc else "(added by the compiler)"
                say(f"    {g.readable:<32} {origin}")
    return 0
