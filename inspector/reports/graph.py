"""What one compile's FX graph holds at a stage — its nodes (target, shape, source line),
edges and op histogram — how its ops and shapes differ from another compile's, and the
graph as DOT or SVG (``inspector/analysis/graphs.py``); which compile an id names, and why
there is no graph to show."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dyn_inspect.inspector.analysis.graphs import GraphDiff, SvgResult, compile_graph, diff_graphs, op_histogram, to_dot, write_svg
from dyn_inspect.inspector.analysis.guards import find_compile
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import file_line
from dyn_inspect.inspector.model import CompileInfo
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.run import Run

if TYPE_CHECKING:
    import networkx as nx


def compile_named(run: Run, cid: str, log: str | None) -> CompileInfo:
    """The compile ``cid`` (of process ``log`` when several share ids); an error that lists
    the run's compile ids when there is none."""
    c = find_compile(run, cid, log)
    if c is None:
        known = ", ".join(list(dict.fromkeys(k[1] for k in run.model.compiles))[:12])
        raise InspectorError(f"no compile {cid} in {run.path.name} (compile ids: {known or 'none'})")
    return c


def stage_graph(run: Run, c: CompileInfo, stage: str) -> nx.DiGraph:
    """``c``'s graph at ``stage``; an error that says which stages there are, or that the
    graph's code is missing from the run (not "0 nodes": the graph is there, its code is not)."""
    g = compile_graph(run, c, stage)
    if g is None:
        stages = ", ".join(dict.fromkeys(gr.stage for gr in c.graphs)) or "none recorded"
        raise InspectorError(f"compile {c.cid} has no {stage} graph (stages: {stages})")
    recorded = c.graph(stage)
    if recorded is not None and not run.blob_exists(recorded.code):
        raise InspectorError(
            f"the code of compile {c.cid}'s {stage} graph is missing from the run (payload {recorded.code.digest[:40]!r} not in blobs/)"
        )
    return g


def captured_function(c: CompileInfo) -> str:
    """``forward (train.py:20)``: the function a compile captured, where it is defined."""
    cap = c.capture
    return f"{cap.co_name} ({file_line(cap.co_filename or '?', cap.co_firstlineno)})" if cap else "?"


def graph_dot(g: nx.DiGraph, title: str) -> str:
    return to_dot(g, title)


def graph_dot_report(run: Run, c: CompileInfo, stage: str, g: nx.DiGraph) -> typed.GraphDotReport:
    """The DOT text of ``graph --dot``, typed (the MCP server's ``graph`` as DOT)."""
    return typed.GraphDotReport(run=str(run.path), compile_id=c.cid, stage=stage, dot=graph_dot(g, f"{c.cid} {stage}"))


def graph_svg(g: nx.DiGraph, out: Path, title: str) -> SvgResult:
    """The SVG drawn by Graphviz, or the DOT beside ``out`` and a hint when it is missing."""
    return write_svg(g, out, title)


def graph_diff(run: Run, c: CompileInfo, g: nx.DiGraph, other: CompileInfo, stage: str) -> typed.GraphDiffReport:
    """How ``other``'s graph at ``stage`` differs from ``c``'s (``g``)."""
    return graph_diff_report(diff_graphs(g, stage_graph(run, other, stage), c.cid, other.cid, stage), str(run.path))


NODE_KEYS = ("op", "target", "dtype", "shape", "stride", "device", "file", "line", "function", "code")


def node_output(name: str, data: dict[str, Any], g: nx.DiGraph) -> typed.GraphNode:
    return typed.GraphNode(name=name, **{k: data.get(k) for k in NODE_KEYS}, inputs=list(g.predecessors(name)))


def graph_report(run: Run, c: CompileInfo, stage: str, g: nx.DiGraph) -> typed.GraphReport:
    """What ``graph CID --json`` prints: ``g``, compile ``c``'s graph at ``stage``."""
    return typed.GraphReport(
        run=str(run.path),
        compile_id=c.cid,
        log=c.log,
        stage=stage,
        stages=list(dict.fromkeys(gr.stage for gr in c.graphs)),
        nodes=[node_output(n, d, g) for n, d in g.nodes(data=True)],
        edges=[list(e) for e in g.edges()],
        op_histogram=dict(op_histogram(g)),
    )


def graph_diff_report(d: GraphDiff, run: str) -> typed.GraphDiffReport:
    """What ``graph CID --diff OTHER --json`` prints."""
    return typed.GraphDiffReport(
        run=run,
        a=d.a,
        b=d.b,
        stage=d.stage,
        nodes_a=d.nodes_a,
        nodes_b=d.nodes_b,
        ops_added=dict(d.added),
        ops_removed=dict(d.removed),
        changed=[typed.NodeChange(node=n, before=a, after=b) for n, a, b in d.changed],
    )
