"""FX graphs as ``networkx.DiGraph``: nodes are the graph's values (placeholders, ops, the
output) with their target, shape, dtype and source line; edges are data flow.

Built from the readable code torch logs for each stage (``GraphModule.print_readable``)::

    def forward(self, L_x_: "f32[4, 8][8, 1]cpu"):
        # File: /w/t.py:8 in f, code: return (x * 2).sum(dim=0)
        mul: "f32[4, 8][8, 1]cpu" = l_x_ * 2;  l_x_ = None
        sum_1: "f32[8][1]cpu" = mul.sum(dim = 0);  mul = None
        return (sum_1,)

The text is parsed, never executed. Only the top-level ``forward`` is read (nested
submodules of higher-order ops appear as ``call_module``/``get_attr`` nodes).

The one home of FX graphs: ``graph``/``graph --svg`` and the export's pictures use this
parser, this DOT writer and this SVG runner (the export adds a lower node cap and one
budget for all its pictures: ``inspector/export/pictures.py``).

Public API: ``parse_fx(code) -> nx.DiGraph``, ``compile_graph(run, compile, stage)``,
``op_histogram(graph)``, ``graph_diff(run, compile_a, compile_b, stage) -> GraphDiff``,
``to_dot(graph, name)``, ``render_svg(dot, nodes)``, ``write_svg(graph, out) -> SvgResult``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from dyn_inspect.engine.normalizers.graphs import op_name
from dyn_inspect.inspector.console import write_private
from dyn_inspect.inspector.model import CompileInfo
from dyn_inspect.inspector.run import Run

_DEF_RE = re.compile(r"^(?P<indent>\s*)def forward\((?P<params>.*)$")
_PARAM_RE = re.compile(r'(?P<name>\w+)(?:\s*:\s*"(?P<ann>[^"]*)")?')
# AOT's joint graphs declare their inputs in the body: `primals_1: "f32[4, 8]"`.
_DECL_RE = re.compile(r'^(?P<name>\w+): "(?P<ann>[^"]*)"$')
_NODE_RE = re.compile(r'^(?P<name>\w+)(?:: "(?P<ann>[^"]*)")? = (?P<rhs>.+)$')
_FILE_RE = re.compile(r"^# File: (?P<file>.+?):(?P<line>\d+) in (?P<fn>[^,]+)(?:, code: (?P<code>.*))?$")
_CALL_RE = re.compile(r"^(?P<target>[A-Za-z_][\w.]*)\(")
_ANN_RE = re.compile(r"^(?P<dtype>[a-z]+\d*)\[(?P<shape>[^\]]*)\](?:\[(?P<stride>[^\]]*)\])?(?P<device>[\w:]*)")
_IDENT_RE = re.compile(r"\b[A-Za-z_]\w*\b")
_BINOPS = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "truediv",
    "//": "floordiv",
    "%": "mod",
    "**": "pow",
    "@": "matmul",
    ">": "gt",
    "<": "lt",
    ">=": "ge",
    "<=": "le",
    "==": "eq",
    "!=": "ne",
    "&": "and_",
    "|": "or_",
}
NON_OPS = ("placeholder", "output", "get_attr")


def parse_annotation(ann: str | None) -> dict[str, str]:
    """``"f32[4, 8][8, 1]cpu"`` → {dtype: f32, shape: [4, 8], stride: [8, 1], device: cpu};
    ``"Sym(s0)"`` → {dtype: sym, shape: s0}."""
    if not ann:
        return {}
    if ann.startswith("Sym(") and ann.endswith(")"):
        return {"dtype": "sym", "shape": ann[4:-1]}
    m = _ANN_RE.match(ann)
    if m is None:
        return {"annotation": ann}
    out = {"dtype": m["dtype"], "shape": f"[{m['shape']}]"}
    if m["stride"] is not None:
        out["stride"] = f"[{m['stride']}]"
    if m["device"]:
        out["device"] = m["device"]
    return out


def _strip_statement(rhs: str) -> str:
    """Drop FX's trailing ``;  x = y = None`` bookkeeping."""
    return rhs.split(";  ", 1)[0].rstrip(";").strip()


def _classify(rhs: str, names: set[str]) -> tuple[str, str]:
    """(FX op kind, target) of one right-hand side."""
    call = _CALL_RE.match(rhs)
    if call:
        target = call["target"]
        head = target.split(".", 1)[0]
        if head == "self":
            return "call_module", target.removeprefix("self.")
        if head in names and "." in target:
            return "call_method", f"Tensor.{target.rsplit('.', 1)[1]}"
        return "call_function", target.removeprefix("torch.ops.") if target.startswith("torch.ops.") else target
    if rhs.startswith("self."):
        return "get_attr", rhs.removeprefix("self.")
    parts = rhs.split()
    if len(parts) == 3 and parts[1] in _BINOPS:
        return "call_function", f"operator.{_BINOPS[parts[1]]}"
    if re.fullmatch(r"\w+\[[^\]]*\]", rhs):
        return "call_function", "operator.getitem"
    return "call_function", rhs


def histogram_key(target: str, op: str) -> str:
    """The op name used in histograms: ``aten.mul.Tensor`` → ``aten.mul``; methods as
    ``Tensor.sum``; the same naming the recorder uses for ``Graph.op_counts``."""
    if op == "call_method":
        return target
    if op == "call_function" and target.count(".") >= 2 and not target.startswith(("operator.", "torch.")):
        return op_name(f"torch.ops.{target}")
    return op_name(target) if op == "call_function" else target


def parse_fx(code: str) -> nx.DiGraph:
    """A readable FX graph → DiGraph. Node ids are FX value names; attributes: ``op``
    (placeholder, call_function, call_method, call_module, get_attr, output), ``target``,
    ``dtype``/``shape``/``stride``/``device`` where annotated, ``file``/``line``/``code``
    of the user line torch attributes the node to. Never raises on odd input."""
    g = nx.DiGraph()
    lines = code.splitlines()
    i = 0
    while i < len(lines) and not _DEF_RE.match(lines[i]):
        i += 1
    if i == len(lines):
        return g
    indent = len(_DEF_RE.match(lines[i])["indent"])  # type: ignore[index]
    # The signature, possibly over several lines, up to the balanced "):".
    signature = ""
    while i < len(lines):
        signature += " " + lines[i].split("  #", 1)[0].strip()
        if signature.count("(") <= signature.count(")") and signature.rstrip().endswith(":"):
            break
        i += 1
    params = signature[signature.index("forward(") + len("forward(") :] if "forward(" in signature else ""
    for pm in _PARAM_RE.finditer(params):
        name = pm["name"]
        if name in ("self", "def", "forward") or (pm["ann"] is None and name in g):
            continue
        g.add_node(name, op="placeholder", target=name, **parse_annotation(pm["ann"]))
    alias: dict[str, str] = {}
    source: dict[str, str | int] = {}
    i += 1
    statement = ""
    while i < len(lines):
        raw = lines[i]
        i += 1
        stripped = raw.strip()
        if not stripped:
            continue
        if len(raw) - len(raw.lstrip()) <= indent:
            break  # the end of forward (a nested class or method follows)
        if stripped.startswith("#"):
            fm = _FILE_RE.match(stripped)
            if fm:
                source = {"file": fm["file"], "line": int(fm["line"]), "function": fm["fn"].strip(), "code": (fm["code"] or "").strip()}
            continue
        statement = (statement + " " + stripped.split("  # ", 1)[0]).strip() if statement else stripped.split("  # ", 1)[0]
        if statement.count("(") > statement.count(")") or statement.count("[") > statement.count("]"):
            continue  # a statement continued on the next line (multi-line return)
        line, statement = statement, ""
        if line.startswith("return"):
            values = [alias.get(n, n) for n in _IDENT_RE.findall(line[len("return") :]) if alias.get(n, n) in g]
            g.add_node("output", op="output", target="output")
            for v in values:
                g.add_edge(v, "output")
            continue
        m = _NODE_RE.match(line)
        if m is None:
            if (decl := _DECL_RE.match(line)) is not None and decl["name"] not in g:
                g.add_node(decl["name"], op="placeholder", target=decl["name"], **parse_annotation(decl["ann"]))
            continue
        name, rhs = m["name"], _strip_statement(m["rhs"])
        if m["ann"] is None and rhs in g and re.fullmatch(r"\w+", rhs):
            alias[name] = alias.get(rhs, rhs)  # `l_x_ = L_x_`: a renamed input, not an op
            continue
        op, target = _classify(rhs, set(g.nodes) | set(alias))
        g.add_node(name, op=op, target=target, **parse_annotation(m["ann"]), **source)
        call_args = rhs[rhs.index("(") :] if op in ("call_function", "call_module") and "(" in rhs else rhs
        if op == "call_method":
            call_args = rhs
        for ref in dict.fromkeys(_IDENT_RE.findall(call_args)):
            node = alias.get(ref, ref)
            if node != name and node in g:
                g.add_edge(node, name)
    return g


def compile_graph(run: Run, compile: CompileInfo, stage: str = "dynamo") -> nx.DiGraph | None:
    """The graph of ``compile`` at ``stage`` (None when that stage was not recorded)."""
    graph = compile.graph(stage)
    if graph is None:
        return None
    g = parse_fx(run.blob_text(graph.code))
    g.graph.update({"compile_id": compile.cid, "stage": stage, "log": compile.log})
    aliases = run.model.path_aliases.get(compile.log)
    if aliases:  # graphs from a warm cache name the checkout that filled it: show this one
        for _, data in g.nodes(data=True):
            if data.get("file") in aliases:
                data["file"] = aliases[data["file"]]
    return g


def op_histogram(g: nx.DiGraph) -> dict[str, int]:
    """Op name → number of nodes, most frequent first (placeholders/output excluded)."""
    counts: Counter[str] = Counter()
    for _, data in g.nodes(data=True):
        if data.get("op") in NON_OPS:
            continue
        counts[histogram_key(str(data.get("target", "?")), str(data.get("op")))] += 1
    return dict(counts.most_common())


@dataclass
class GraphDiff:
    """Two compiles' graphs at one stage: ops added/removed (counts) and nodes whose shape
    or dtype changed (paired by FX name, stable across recompiles of the same code)."""

    a: str
    b: str
    stage: str
    added: dict[str, int] = field(default_factory=dict)  # op -> how many more in b
    removed: dict[str, int] = field(default_factory=dict)  # op -> how many fewer in b
    changed: list[tuple[str, str, str]] = field(default_factory=list)  # (node, before, after) type
    nodes_a: int = 0
    nodes_b: int = 0
    problem: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def _type_of(data: dict[str, object]) -> str:
    if data.get("dtype") == "sym":
        return f"Sym({data.get('shape', '')})"
    return f"{data.get('dtype', '')}{data.get('shape', '')}"


def _same_value(a: dict[str, object], b: dict[str, object]) -> bool:
    """Whether two nodes with one FX name are the same value (same op and target, both
    tensors or both symbols): inputs are renumbered when a recompile adds a size symbol."""
    return a.get("op") == b.get("op") and a.get("target") == b.get("target") and (a.get("dtype") == "sym") == (b.get("dtype") == "sym")


def diff_graphs(a: nx.DiGraph, b: nx.DiGraph, a_id: str = "a", b_id: str = "b", stage: str = "") -> GraphDiff:
    ha, hb = Counter(op_histogram(a)), Counter(op_histogram(b))
    out = GraphDiff(a_id, b_id, stage, dict(hb - ha), dict(ha - hb), nodes_a=a.number_of_nodes(), nodes_b=b.number_of_nodes())
    for name, data in b.nodes(data=True):
        if name in a and _same_value(a.nodes[name], data):
            before, after = _type_of(a.nodes[name]), _type_of(data)
            if before != after:
                out.changed.append((name, before, after))
    return out


def graph_diff(run: Run, compile_a: CompileInfo, compile_b: CompileInfo, stage: str = "dynamo") -> GraphDiff:
    """The graphs of two compiles (usually of one frame: a recompile vs the first) at
    ``stage``; ``problem`` says when one side has no graph at that stage."""
    ga, gb = compile_graph(run, compile_a, stage), compile_graph(run, compile_b, stage)
    if ga is None or gb is None:
        missing = [c.cid for c, g in ((compile_a, ga), (compile_b, gb)) if g is None]
        return GraphDiff(compile_a.cid, compile_b.cid, stage, problem=f"no {stage} graph recorded for {', '.join(missing)}")
    return diff_graphs(ga, gb, compile_a.cid, compile_b.cid, stage)


# -- export --------------------------------------------------------------------------------


def _dot_quote(text: object) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def node_label(name: str, data: dict[str, object]) -> str:
    op = data.get("op")
    head = name if op in ("placeholder", "output") else f"{name}\n{data.get('target', '')}"
    kind = _type_of(data)
    return f"{head}\n{kind}" if kind else head


def to_dot(g: nx.DiGraph, name: str = "graph") -> str:
    """Graphviz DOT text for ``g`` (inputs green, output grey, ops as boxes)."""
    style = {
        "placeholder": 'shape=ellipse, style=filled, fillcolor="#d9f2d9"',
        "output": 'shape=ellipse, style=filled, fillcolor="#e0e0e0"',
        "get_attr": "shape=note",
    }
    out = [f"digraph {_dot_quote(name)} {{", "  rankdir=TB;", '  node [shape=box, fontname="Helvetica", fontsize=10];']
    for node, data in g.nodes(data=True):
        extra = style.get(str(data.get("op")), "")
        tip = f"{data['file']}:{data['line']}" if data.get("file") else ""
        attrs = [f"label={_dot_quote(node_label(node, data))}"]
        if tip:
            attrs.append(f"tooltip={_dot_quote(tip)}")
        if extra:
            attrs.append(extra)
        out.append(f"  {_dot_quote(node)} [{', '.join(attrs)}];")
    for a, b in g.edges():
        out.append(f"  {_dot_quote(a)} -> {_dot_quote(b)};")
    out.append("}")
    return "\n".join(out) + "\n"


# Graphviz takes minutes on graphs of many thousands of nodes; the DOT is written instead.
SVG_MAX_NODES = 1500
SVG_TIMEOUT_S = 60.0


def graphviz() -> str | None:
    return shutil.which("dot")


def unparsed_dot(title: str, why: str) -> str:
    """The DOT written when the code is not a readable FX graph: says so, still renders."""
    return f"digraph {_dot_quote(title)} {{\n  note [shape=note, label={_dot_quote(why)}];\n}}\n"


def render_svg(dot: str, node_count: int, timeout_s: float = SVG_TIMEOUT_S) -> tuple[str | None, str | None]:
    """(svg, None), or (None, why not): Graphviz missing, too many nodes, too slow, failed.
    ``dot`` is killed after ``timeout_s`` (the export passes what is left of its budget)."""
    exe = graphviz()
    if exe is None:
        return None, "Graphviz `dot` is not installed"
    if node_count > SVG_MAX_NODES:
        return None, f"{node_count} nodes (SVG only up to {SVG_MAX_NODES}; the DOT file is there)"
    try:
        done = subprocess.run([exe, "-Tsvg"], input=dot, capture_output=True, text=True, timeout=max(timeout_s, 0.0), check=False)
    except subprocess.TimeoutExpired:
        return None, f"Graphviz took longer than {timeout_s:.3g}s"
    except OSError as exc:
        return None, f"Graphviz failed: {exc}"
    if done.returncode != 0 or "<svg" not in done.stdout:
        return None, f"Graphviz failed: {(done.stderr.strip().splitlines() or ['no SVG'])[-1][:200]}"
    return done.stdout, None


@dataclass
class SvgResult:
    """What ``write_svg`` produced: the SVG, or the DOT file plus a hint."""

    svg: Path | None
    dot: Path | None
    hint: str | None = None


def write_svg(g: nx.DiGraph, out: Path, name: str = "graph") -> SvgResult:
    """Render ``g`` to ``out`` with Graphviz's ``dot`` when installed; otherwise write the
    DOT text next to it (``out`` with suffix ``.dot``) and say how to render it."""
    dot_text = to_dot(g, name)
    svg, reason = render_svg(dot_text, g.number_of_nodes())
    if svg is not None:
        write_private(out, svg)  # 0600 whatever the umask, like the run
        return SvgResult(out, None)
    dot_path = out.with_suffix(".dot")
    write_private(dot_path, dot_text)
    hint = f"{reason}: wrote {dot_path} instead; render it with `dot -Tsvg {dot_path} -o {out}` (install Graphviz: apt install graphviz / brew install graphviz)"
    return SvgResult(None, dot_path, hint)
