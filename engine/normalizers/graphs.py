"""FX graphs at every stage torch logs: Dynamo's captured graph, AOTAutograd's joint /
forward / backward / inference graphs (PrimTorch-decomposed ATen) and Inductor's pre- and
post-grad graphs. Code goes to the blob store; the event keeps node and op counts."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from dyn_inspect.engine.normalizers import Context, TraceOut, TraceRecord, emits, handles, handles_artifact
from dyn_inspect.engine.schema import Event, Graph, Loc

STAGE_OF_KIND = {
    "dynamo_output_graph": "dynamo",
    "aot_joint_graph": "aot_joint",
    "aot_forward_graph": "aot_fw",
    "aot_backward_graph": "aot_bw",
    "aot_inference_graph": "aot_inference",
    "inductor_post_grad_graph": "post_grad",  # a kind of its own before it became an artifact
}
STAGE_OF_ARTIFACT = {
    "before_pre_grad_graph": "pre_grad_before",
    "after_pre_grad_graph": "pre_grad",
    "before_joint_graph": "joint_before",
    "after_joint_graph": "joint",
    "before_post_grad_graph": "post_grad_before",
    "inductor_post_grad_graph": "post_grad",
    "after_post_grad_graph": "post_grad",  # torch 2.9's name
}

# `name: "f32[4, 8]..." = target(args...)` — the FX readable form of every call node.
_NODE_RE = re.compile(r'^\s+(?P<name>\w+)(?:: "[^"]*")? = (?P<rhs>.+)$')
_CALL_RE = re.compile(r"^(?P<target>[A-Za-z_][\w.]*)\(")
_ATEN_RE = re.compile(r"^torch\.ops\.(?P<ns>\w+)\.(?P<op>\w+)(?:\.\w+)?$")


def op_name(target: str) -> str:
    m = _ATEN_RE.match(target)
    if m:
        return f"{m['ns']}.{m['op']}"
    head, _, method = target.rpartition(".")
    if head and not head.startswith(("torch", "operator", "math", "builtins")) and "." not in head:
        return f"Tensor.{method}"  # `linear.relu()`: a method call on a graph value
    return target


def summarize_graph(code: str) -> tuple[int, dict[str, int]]:
    """Node count and op histogram of a readable FX graph."""
    ops: Counter[str] = Counter()
    nodes = 0
    for line in code.splitlines():
        m = _NODE_RE.match(line)
        if not m or line.lstrip().startswith(("#", "def ", "return")):
            continue
        nodes += 1
        # FX appends `;  a = b = None` (freeing dead values) after a node: not part of it.
        rhs = m["rhs"].split(";  ", 1)[0].strip()
        call = _CALL_RE.match(rhs)
        if call:
            ops[op_name(call["target"])] += 1
        elif rhs.startswith(("L_", "l_")):
            continue  # input aliasing, not an op
        else:
            parts = rhs.split()
            if len(parts) == 3 and parts[1] in {"+", "-", "*", "/", ">", "<", ">=", "<=", "==", "!=", "@", "//", "%", "**"}:
                ops[f"operator.{parts[1]}"] += 1
    return nodes, dict(ops)


def _stage_for(stage: str, record: TraceRecord, ctx: Context) -> str:
    cid = record.compile_id or ""
    if stage == "aot_bw":
        ctx.has_backward.add(cid)
    if stage.startswith(("post_grad", "pre_grad", "joint")) and ctx.is_backward_phase(cid):
        return f"{stage}_bw"
    return stage


# `# File: /path/train.py:27 in forward, code: y = x * 2` above the nodes it made.
_FILE_RE = re.compile(r"^\s*# File: (?P<file>.+?):(?P<line>\d+) in (?P<name>[^,\n]+)(?:, code: (?P<code>.*))?$")


def node_lines(code: str) -> dict[str, Loc]:
    """Each node of a readable FX graph → the source line of the ``# File:`` comment above it."""
    out: dict[str, Loc] = {}
    current: Loc | None = None
    for line in code.splitlines():
        m = _FILE_RE.match(line)
        if m:
            current = Loc(file=m["file"], line=int(m["line"]), name=m["name"].strip(), code=(m["code"] or "").strip() or None)
            continue
        n = _NODE_RE.match(line)
        if n and current is not None and not line.lstrip().startswith(("#", "def ", "return")):
            out[n["name"]] = current
        elif not line.strip() or line.lstrip().startswith("return"):
            current = None
    return out


def _graph(stage: str, record: TraceRecord, ctx: Context) -> Graph:
    code = record.payload or ""
    nodes, ops = summarize_graph(code)
    full_stage = _stage_for(stage, record, ctx)
    if stage == "dynamo":
        # Dynamo traces afresh on every compile (never from a cache): its paths are this run's.
        ctx.source_files.update(m["file"] for m in map(_FILE_RE.match, code.splitlines()) if m)
    elif stage == "post_grad":
        # The kernels' "Source Nodes" are these nodes: their lines, when provenance has none.
        # (From a warm cache their "# File:" paths may be another checkout's: mapped.)
        mapped = {name: ctx.local_loc(loc) for name, loc in node_lines(code).items()}
        ctx.node_lines[(record.compile_id or "", full_stage.endswith("_bw"))] = {n: loc for n, loc in mapped.items() if loc}
    return Graph(stage=full_stage, code=ctx.blobs.put(code), node_count=nodes, op_counts=ops)


@handles(*STAGE_OF_KIND)
def kind_graph(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    graph = _graph(STAGE_OF_KIND[record.kind], record, ctx)
    yield from ctx.new_aliases()
    yield graph


@handles_artifact(*STAGE_OF_ARTIFACT)
def artifact_graph(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    graph = _graph(STAGE_OF_ARTIFACT[record.body["name"]], record, ctx)
    yield from ctx.new_aliases()
    yield graph


# -- back to TORCH_TRACE -----------------------------------------------------------------

# Our stage → torch's record: a kind of its own, or a named artifact. The first name wins
# where torch renamed a record between releases (after_post_grad_graph on 2.9).
_KIND_OF_STAGE: dict[str, str] = {}
for _kind, _stage in STAGE_OF_KIND.items():
    _KIND_OF_STAGE.setdefault(_stage, _kind)
_ARTIFACT_OF_STAGE: dict[str, str] = {}
for _name, _stage in STAGE_OF_ARTIFACT.items():
    _ARTIFACT_OF_STAGE.setdefault(_stage, _name)


@emits(Graph)
def emit_graph(event: Graph, out: TraceOut) -> None:
    code = out.text(event, "code", f"{event.stage} graph of {event.cid}")
    if code is None:
        return
    stage = event.stage
    if stage not in _KIND_OF_STAGE and stage not in _ARTIFACT_OF_STAGE:
        stage = stage.removesuffix("_bw")  # Inductor's lazily compiled backward
    if stage in _KIND_OF_STAGE:
        out.emit(event.t, out.envelope(_KIND_OF_STAGE[stage], {}, event.cid), code)
    else:
        name = _ARTIFACT_OF_STAGE.get(stage, f"{stage}_graph")
        out.emit(event.t, out.envelope("artifact", {"name": name, "encoding": "string"}, event.cid), code)
