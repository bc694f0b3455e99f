"""FX graphs as networkx graphs: nodes, shapes, source lines, histograms, diffs, DOT/SVG."""

from __future__ import annotations

import shutil

import pytest

from corpus_support import CORPUS, marker_line
from dyn_inspect.inspector.analysis.graphs import compile_graph, graph_diff, op_histogram, parse_annotation, parse_fx, to_dot, write_svg
from dyn_inspect.inspector.model import CompileInfo
from dyn_inspect.inspector.run import Run

RECOMPILES = CORPUS / "recompiles.py"


def _compiles(run: Run, function: str) -> list[CompileInfo]:
    frame = next(f for f in run.model.frames_in_order() if f.name == function)
    return frame.compiles


def test_dynamo_graph_nodes_shapes_and_lines(recompiles_run: Run) -> None:
    # by_shape: `return (x * 2).sum(dim=0)` on the line after its def, first called with (4, 8).
    first = _compiles(recompiles_run, "by_shape")[0]
    g = compile_graph(recompiles_run, first, "dynamo")
    assert g is not None
    line = marker_line(RECOMPILES, "RECOMPILE:shape") + 1
    x = g.nodes["L_x_"]
    assert (x["op"], x["dtype"], x["shape"]) == ("placeholder", "f32", "[4, 8]")
    mul, total = g.nodes["mul"], g.nodes["sum_1"]
    assert (mul["op"], mul["target"], mul["shape"], mul["line"]) == ("call_function", "operator.mul", "[4, 8]", line)
    assert (total["op"], total["target"], total["shape"]) == ("call_method", "Tensor.sum", "[8]")
    assert total["file"] == str(RECOMPILES) and total["code"] == "return (x * 2).sum(dim=0)"
    assert list(g.edges()) == [("L_x_", "mul"), ("mul", "sum_1"), ("sum_1", "output")]
    assert op_histogram(g) == {"operator.mul": 1, "Tensor.sum": 1}


@pytest.mark.parametrize("fixture", ["example_run", "gpu_trace_run"])
def test_aten_histograms_agree_with_the_recorder(request: pytest.FixtureRequest, fixture: str) -> None:
    # The recorder counts ops with its own line matcher when it writes Graph.op_counts; the
    # graph built here must agree for every ATen stage of every compile.
    run: Run = request.getfixturevalue(fixture)
    checked = 0
    for c in run.model.compiles_in_order():
        for graph in c.graphs:
            if graph.stage.startswith(("aot", "post_grad", "joint")):
                g = parse_fx(run.blob_text(graph.code))
                assert op_histogram(g) == graph.op_counts, (c.cid, graph.stage)
                checked += 1
    assert checked >= 8


def test_gpu_graph_keeps_the_device(gpu_trace_run: Run) -> None:
    c = gpu_trace_run.model.compiles_in_order()[0]
    g = compile_graph(gpu_trace_run, c, "aot_fw")
    assert g is not None
    devices = {d.get("device") for _, d in g.nodes(data=True) if d.get("op") == "placeholder"}
    assert "cuda:0" in devices


def test_recompile_graph_diff_same_ops_dynamic_shapes(recompiles_run: Run) -> None:
    a, b = _compiles(recompiles_run, "by_shape")
    d = graph_diff(recompiles_run, a, b, "dynamo")
    assert d.problem is None
    assert d.added == {} and d.removed == {}  # same code, same ops
    changed = {name: (before, after) for name, before, after in d.changed}
    assert changed["mul"][0] == "f32[4, 8]" and changed["mul"][1].startswith("f32[s")  # dim 0 became a symbol
    assert "sum_1" not in changed  # the sum over dim 0 stays f32[8]


def test_graph_diff_reports_ops_added_and_removed(breaks_run: Run) -> None:
    # branchy's first graph (relu, sum, gt) vs its resume function's (add, sin): different code.
    frames = {f.name: f for f in breaks_run.model.frames_in_order()}
    branchy = frames["branchy"].compiles[0]
    resume = next(f for name, f in frames.items() if name.startswith("torch_dynamo_resume_in_branchy")).compiles[0]
    d = graph_diff(breaks_run, branchy, resume, "aot_inference")
    assert "aten.sin" in d.added and "aten.relu" in d.removed


def test_graph_diff_without_the_stage(example_run: Run) -> None:
    frames = [f for f in example_run.model.frames_in_order() if f.name == "torch_dynamo_resume_in_log_stats_at_7"]
    empty = frames[0].compiles[0]  # an empty graph: nothing recorded at any stage
    other = example_run.model.compiles_in_order()[0]
    assert "no dynamo graph" in (graph_diff(example_run, other, empty).problem or "")


def test_dot_export(recompiles_run: Run) -> None:
    g = compile_graph(recompiles_run, _compiles(recompiles_run, "by_shape")[0], "dynamo")
    assert g is not None
    dot = to_dot(g, "0/0 dynamo")
    assert dot.startswith('digraph "0/0 dynamo" {') and dot.rstrip().endswith("}")
    assert '"mul" -> "sum_1";' in dot
    assert 'label="mul\\noperator.mul\\nf32[4, 8]"' in dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz not installed (the DOT fallback is tested in test_cli_reports)")
def test_svg_with_graphviz(recompiles_run: Run, tmp_path) -> None:
    g = compile_graph(recompiles_run, _compiles(recompiles_run, "by_shape")[0], "dynamo")
    assert g is not None
    result = write_svg(g, tmp_path / "g.svg")
    assert result.svg == tmp_path / "g.svg" and result.hint is None
    svg = result.svg.read_text()
    assert "<svg" in svg and "sum_1" in svg


@pytest.mark.parametrize(
    ("ann", "expected"),
    [
        ("f32[4, 8][8, 1]cpu", {"dtype": "f32", "shape": "[4, 8]", "stride": "[8, 1]", "device": "cpu"}),
        ("b8[][]cuda:0", {"dtype": "b8", "shape": "[]", "stride": "[]", "device": "cuda:0"}),
        ("Sym(s77)", {"dtype": "sym", "shape": "s77"}),
    ],
)
def test_annotations(ann: str, expected: dict[str, str]) -> None:
    assert parse_annotation(ann) == expected


def test_every_stage_parses_every_declared_value(example_run: Run) -> None:
    """Each value a recorded graph names with a type (`x: "f32[..]" = ...`, and AOT's joint
    graph inputs declared in the body, `primals_1: "f32[..]"`) is a node — at every stage,
    since the export draws them all with this parser."""
    import re

    stages = set()
    for c in example_run.model.compiles_in_order():
        for graph in c.graphs:
            code = example_run.blob_text(graph.code)
            g = parse_fx(code)
            declared = set(re.findall(r'^\s*(\w+): "[^"]*"', code, re.M))
            assert declared <= set(g.nodes), (graph.stage, sorted(declared - set(g.nodes))[:5])
            stages.add(graph.stage)
    assert {"dynamo", "aot_joint", "post_grad"} <= stages


@pytest.mark.corpus
def test_one_node_and_guard_count_per_compile(error_break_run: Run) -> None:
    # The compiles tree and its pane showed two figures for one thing (issue 28 #10): the
    # graph's nodes we counted in its code (no output node) beside torch's graph_node_count,
    # our guard-tree leaves beside torch's guard_count. The model gives torch's figure.
    [c] = error_break_run.model.compiles_in_order()
    cap, g = c.capture, c.graph("dynamo")
    assert cap is not None and g is not None and c.guards is not None
    assert c.node_count(g) == cap.graph_node_count == g.node_count + 1  # x, mul, output
    assert c.guard_count == cap.guard_count
    aot = next(x for x in c.graphs if x.stage != "dynamo")
    assert c.node_count(aot) == aot.node_count  # torch counts only Dynamo's graph
