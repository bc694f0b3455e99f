"""``dyn-inspect graph [RUN] COMPILE_ID [--stage STAGE] [--dot [OUT] | --svg OUT] [--diff OTHER_ID]``:
one compile's FX graph at a stage — nodes with target, shape and source line, the op
histogram — or its DOT/SVG export, or its op diff against another compile."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.table import Table

from dyn_inspect.cli.common import add_rank_argument, open_cli_run, print_read_warnings
from dyn_inspect.inspector.console import make_console, write_private
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import file_line
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reports.graph import (
    captured_function,
    compile_named,
    graph_diff,
    graph_dot,
    graph_report,
    graph_svg,
    stage_graph,
)

HELP = "show a compile's FX graph at a stage (table, --json, --dot, --svg) or diff it with another compile"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.usage = "%(prog)s [RUN] COMPILE_ID [--stage STAGE] [--dot [OUT] | --svg OUT | --diff OTHER_ID] [--json]"
    parser.add_argument(
        "target", nargs="+", metavar="RUN COMPILE_ID", help="a compile id such as 0/1, optionally after a run directory or id"
    )
    parser.add_argument("--runs-dir", metavar="DIR")
    parser.add_argument(
        "--stage",
        default="dynamo",
        help="dynamo, aot_fw, aot_bw, aot_inference, aot_joint, pre_grad, joint, post_grad, ... (default: dynamo)",
    )
    parser.add_argument("--log", metavar="NAME", help="the process log (p<pid>.jsonl) when several processes share compile ids")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--dot", nargs="?", const="-", metavar="OUT", help="write Graphviz DOT (to stdout without OUT)")
    out.add_argument("--svg", metavar="OUT", help="render SVG with Graphviz (DOT plus a hint when Graphviz is missing)")
    out.add_argument("--diff", metavar="OTHER_ID", help="ops added/removed and shapes changed from this compile to OTHER_ID")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_rank_argument(parser)


def _split_target(target: list[str]) -> tuple[str | None, str]:
    if len(target) == 1:
        return None, target[0]
    if len(target) == 2:
        return target[0], target[1]
    raise InspectorError("graph takes [RUN] COMPILE_ID (e.g. `dyn-inspect graph 0/1`)")


def run(args: argparse.Namespace) -> int:
    run_arg, cid = _split_target(args.target)
    r = open_cli_run(run_arg, args.runs_dir, args.rank)
    print_read_warnings(r)
    c = compile_named(r, cid, args.log)
    g = stage_graph(r, c, args.stage)
    title = f"{c.cid} {args.stage}"
    if args.diff:
        d = graph_diff(r, c, g, compile_named(r, args.diff, args.log or c.log), args.stage)
        if args.json:
            sys.stdout.write(to_json(d) + "\n")
            return 0
        console = make_console()
        say = lambda s: console.print(s, markup=False, highlight=False)  # noqa: E731
        say(f"graph {d.a} → {d.b} ({d.stage}): {d.nodes_a} → {d.nodes_b} nodes")
        for op, n in d.ops_added.items():
            say(f"  + {op} ×{n}")
        for op, n in d.ops_removed.items():
            say(f"  - {op} ×{n}")
        for change in d.changed:
            say(f"  ~ {change.node}: {change.before} → {change.after}")
        if not (d.ops_added or d.ops_removed or d.changed):
            say("  same ops and shapes")
        return 0
    if args.dot:
        text = graph_dot(g, title)
        if args.dot == "-":
            sys.stdout.write(text)
        else:
            write_private(args.dot, text)  # 0600: node names and shapes come from the model
            print(f"wrote {args.dot}", file=sys.stderr)
        return 0
    if args.svg:
        result = graph_svg(g, Path(args.svg), title)
        if result.svg is not None:
            print(f"wrote {result.svg}", file=sys.stderr)
        else:
            print(f"dyn-inspect: {result.hint}", file=sys.stderr)
        return 0
    report = graph_report(r, c, args.stage, g)
    if args.json:
        sys.stdout.write(to_json(report) + "\n")
        return 0
    console = make_console()
    console.print(f"graph {c.cid} {args.stage} of {captured_function(c)}: {len(report.nodes)} nodes", markup=False, highlight=False)
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
    for col in ("node", "op", "target", "type", "inputs", "source"):
        table.add_column(col, overflow="fold")
    for node in report.nodes:
        kind = f"{node.dtype or ''}{node.shape or ''}" if node.dtype != "sym" else f"Sym({node.shape})"
        src = file_line(node.file, node.line) if node.file else ""
        table.add_row(node.name, str(node.op), node.target or "", kind, ", ".join(node.inputs), src)
    console.print(table)
    hist = report.op_histogram
    console.print("ops: " + (", ".join(f"{op} ×{n}" for op, n in hist.items()) or "none"), markup=False, highlight=False)
    return 0
