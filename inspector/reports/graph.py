"""What one compile's FX graph holds at a stage — its nodes (target, shape, source line),
edges and op histogram — and how its ops and shapes differ from another compile's
(``inspector/analysis/graphs.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dyn_inspect.inspector.analysis.graphs import GraphDiff, op_histogram
from dyn_inspect.inspector.model import CompileInfo
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.run import Run

if TYPE_CHECKING:
    import networkx as nx

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
