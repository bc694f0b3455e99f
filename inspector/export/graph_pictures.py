"""Graph pictures: the readable FX code torch logs → Graphviz DOT (always) → SVG (when
Graphviz's ``dot`` is installed).

The log holds each graph as FX's readable Python (``name: "f32[4, 8]" = target(args)``),
not as a graph object, so the picture is rebuilt from that code with ``ast``: parameters
and annotation-only lines are inputs, each assignment is a node, the names it reads are
its edges, ``return`` is the output. Nothing is executed.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from dataclasses import dataclass, field

# Graphviz takes minutes on graphs of many thousands of nodes; the DOT is still written.
SVG_MAX_NODES = 1500
SVG_TIMEOUT_S = 60.0
_ANON_CLASS = re.compile(r"^class <[^>\n]*>", re.M)


@dataclass
class FxNode:
    name: str
    op: str  # "input", "output" or the call target / expression
    type: str = ""
    inputs: list[str] = field(default_factory=list)


def _forward(tree: ast.Module) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    return item
        if isinstance(node, ast.FunctionDef) and node.name == "forward":
            return node
    return None


def _names(node: ast.AST) -> list[str]:
    seen: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id not in seen:
            seen.append(sub.id)
    return seen


def _targets(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for elt in node.elts for n in _targets(elt)]
    return []


def _op(value: ast.expr) -> str:
    if isinstance(value, ast.Call):
        return ast.unparse(value.func)
    text = ast.unparse(value)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_fx(code: str) -> list[FxNode] | None:
    """Nodes of a readable FX graph, in order; None when the code is not one."""
    # AOT names some graph classes after a lambda (`class <lambda>(torch.nn.Module):`).
    code = _ANON_CLASS.sub("class _anonymous", code)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    fn = _forward(tree)
    if fn is None:
        return None
    nodes: dict[str, FxNode] = {}
    for arg in fn.args.args[1:]:  # self
        ann = arg.annotation.value if isinstance(arg.annotation, ast.Constant) else ""
        nodes[arg.arg] = FxNode(arg.arg, "input", str(ann))
    output: FxNode | None = None
    for stmt in fn.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
            ann = stmt.annotation.value if isinstance(stmt.annotation, ast.Constant) else ""
            if stmt.value is None:  # `primals_1: "f32[...]"` — an AOT input declaration
                nodes[name] = FxNode(name, "input", str(ann))
                continue
            deps = [n for n in _names(stmt.value) if n in nodes]
            nodes[name] = FxNode(name, _op(stmt.value), str(ann), deps)
        elif isinstance(stmt, ast.Assign):
            if isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
                continue  # `x = None`: FX freeing a value, not a node
            deps = [n for n in _names(stmt.value) if n in nodes]
            for target in stmt.targets:
                for name in _targets(target):
                    if name in nodes and nodes[name].op == "input":
                        continue  # AOT's pytree unpacking of inputs declared above
                    nodes[name] = FxNode(name, _op(stmt.value), "", deps)
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            output = FxNode("output", "output", "", [n for n in _names(stmt.value) if n in nodes])
    out = list(nodes.values())
    if output is not None:
        out.append(output)
    return out


def unparsed_dot(title: str, why: str) -> str:
    """The DOT written when the code is not a readable FX graph: says so, still renders."""
    return f"digraph {_quote(title)} {{\n  note [shape=note, label={_quote(why)}];\n}}\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(nodes: list[FxNode], title: str) -> str:
    lines = [
        f"digraph {_quote(title)} {{",
        "  rankdir=TB;",
        '  node [shape=box, fontname="monospace", fontsize=10];',
    ]
    for n in nodes:
        if n.op == "input":
            label, style = f"{n.name}\n{n.type}" if n.type else n.name, ", style=filled, fillcolor=\"#dbeafe\""
        elif n.op == "output":
            label, style = "output", ", style=filled, fillcolor=\"#dcfce7\""
        else:
            label = f"{n.name} = {n.op}" + (f"\n{n.type}" if n.type else "")
            style = ""
        lines.append(f"  {_quote(n.name)} [label={_quote(label)}{style}];")
    for n in nodes:
        for dep in n.inputs:
            lines.append(f"  {_quote(dep)} -> {_quote(n.name)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def graphviz() -> str | None:
    return shutil.which("dot")


def to_svg(dot: str, node_count: int) -> tuple[str | None, str | None]:
    """(svg, None) or (None, why not)."""
    exe = graphviz()
    if exe is None:
        return None, "Graphviz (dot) is not installed"
    if node_count > SVG_MAX_NODES:
        return None, f"{node_count} nodes (SVG only up to {SVG_MAX_NODES}; the DOT file is there)"
    try:
        done = subprocess.run(
            [exe, "-Tsvg"], input=dot, capture_output=True, text=True, timeout=SVG_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return None, f"Graphviz took longer than {SVG_TIMEOUT_S:.0f}s"
    except OSError as exc:
        return None, f"Graphviz failed: {exc}"
    if done.returncode != 0 or "<svg" not in done.stdout:
        return None, f"Graphviz failed: {done.stderr.strip()[:200]}"
    return done.stdout, None
