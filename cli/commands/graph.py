"""``dyn-inspect graph [RUN] COMPILE_ID [--stage STAGE] [--dot [OUT] | --svg OUT] [--diff OTHER_ID]``:
one compile's FX graph at a stage — nodes with target, shape and source line, the op
histogram — or its DOT/SVG export, or its op diff against another compile."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import networkx as nx
from rich.table import Table

from dyn_inspect.cli.common import add_rank_argument, open_cli_run, print_read_warnings
from dyn_inspect.inspector.analysis.graphs import compile_graph, diff_graphs, op_histogram, to_dot, write_svg
from dyn_inspect.inspector.analysis.guards import find_compile
from dyn_inspect.inspector.console import make_console, write_private
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import file_line
from dyn_inspect.inspector.model import CompileInfo
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reports.graph import graph_diff_report, graph_report
from dyn_inspect.inspector.run import Run

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


def resolve_compile(run: Run, cid: str, log: str | None) -> CompileInfo:
    c = find_compile(run, cid, log)
    if c is None:
        known = ", ".join(list(dict.fromkeys(k[1] for k in run.model.compiles))[:12])
        raise InspectorError(f"no compile {cid} in {run.path.name} (compile ids: {known or 'none'})")
    return c


def load_graph(run: Run, c: CompileInfo, stage: str) -> nx.DiGraph:
    g = compile_graph(run, c, stage)
    if g is None:
        stages = ", ".join(dict.fromkeys(gr.stage for gr in c.graphs)) or "none recorded"
        raise InspectorError(f"compile {c.cid} has no {stage} graph (stages: {stages})")
    recorded = c.graph(stage)
    if recorded is not None and not run.blob_exists(recorded.code):
        # Not "0 nodes": the graph is there, its code is not (issue 19).
        raise InspectorError(
            f"the code of compile {c.cid}'s {stage} graph is missing from the run (payload {recorded.code.digest[:40]!r} not in blobs/)"
        )
    return g


def run(args: argparse.Namespace) -> int:
    run_arg, cid = _split_target(args.target)
    r = open_cli_run(run_arg, args.runs_dir, args.rank)
    print_read_warnings(r)
    c = resolve_compile(r, cid, args.log)
    g = load_graph(r, c, args.stage)
    title = f"{c.cid} {args.stage}"
    if args.diff:
        other = resolve_compile(r, args.diff, args.log or c.log)
        d = diff_graphs(g, load_graph(r, other, args.stage), c.cid, other.cid, args.stage)
        if args.json:
            sys.stdout.write(to_json(graph_diff_report(d, str(r.path))) + "\n")
            return 0
        console = make_console()
        say = lambda s: console.print(s, markup=False, highlight=False)  # noqa: E731
        say(f"graph {d.a} → {d.b} ({d.stage}): {d.nodes_a} → {d.nodes_b} nodes")
        for op, n in d.added.items():
            say(f"  + {op} ×{n}")
        for op, n in d.removed.items():
            say(f"  - {op} ×{n}")
        for name, before, after in d.changed:
            say(f"  ~ {name}: {before} → {after}")
        if d.empty:
            say("  same ops and shapes")
        return 0
    if args.dot:
        text = to_dot(g, title)
        if args.dot == "-":
            sys.stdout.write(text)
        else:
            write_private(args.dot, text)  # 0600: node names and shapes come from the model
            print(f"wrote {args.dot}", file=sys.stderr)
        return 0
    if args.svg:
        result = write_svg(g, Path(args.svg), title)
        if result.svg is not None:
            print(f"wrote {result.svg}", file=sys.stderr)
        else:
            print(f"dyn-inspect: {result.hint}", file=sys.stderr)
        return 0
    if args.json:
        sys.stdout.write(to_json(graph_report(r, c, args.stage, g)) + "\n")
        return 0
    hist = op_histogram(g)
    console = make_console()
    cap = c.capture
    fn = f"{cap.co_name} ({file_line(cap.co_filename or '?', cap.co_firstlineno)})" if cap else "?"
    console.print(f"graph {c.cid} {args.stage} of {fn}: {g.number_of_nodes()} nodes", markup=False, highlight=False)
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
    for col in ("node", "op", "target", "type", "inputs", "source"):
        table.add_column(col, overflow="fold")
    for name, d in g.nodes(data=True):
        kind = f"{d.get('dtype', '')}{d.get('shape', '')}" if d.get("dtype") != "sym" else f"Sym({d.get('shape')})"
        src = file_line(str(d["file"]), d["line"]) if d.get("file") else ""
        table.add_row(name, str(d.get("op")), str(d.get("target", "")), kind, ", ".join(g.predecessors(name)), src)
    console.print(table)
    console.print("ops: " + (", ".join(f"{op} ×{n}" for op, n in hist.items()) or "none"), markup=False, highlight=False)
    return 0
