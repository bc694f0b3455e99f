"""The compiles tree: frame → compile → graphs (Dynamo, AOT forward/backward, post-grad, …)
→ output code and kernels. The pane beside it shows the selected node: a compile's stage
times and counts, a graph's op histogram and code, a kernel's source.

A compile's children are built when it is first expanded and rebuilt when the compile
logs more (a live run), so a run with thousands of compiles opens without building nodes
for every graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from dyn_inspect.inspector.events import Graph, Loc, OutputCode
from dyn_inspect.inspector.locations import def_file_line, def_line
from dyn_inspect.inspector.model import CompileInfo, FrameInfo, KernelInfo
from dyn_inspect.inspector.reports import screens
from dyn_inspect.tui.display import display_loc, display_path, duration
from dyn_inspect.tui.source import code_view, cut_code
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, View, beside_detail, matches
from dyn_inspect.tui.views.table import frame_key, kernel_detail
from dyn_inspect.tui.widgets import DetailPane

HISTOGRAM_ROWS = 20

STAGE_NAMES = {
    "dynamo": "Dynamo graph",
    "aot_joint": "AOT joint graph",
    "aot_fw": "AOT forward graph",
    "aot_bw": "AOT backward graph",
    "aot_inference": "AOT inference graph",
    "pre_grad_before": "pre-grad (before passes)",
    "pre_grad": "pre-grad graph",
    "joint_before": "joint (before passes)",
    "joint": "joint graph",
    "post_grad_before": "post-grad (before passes)",
    "post_grad": "post-grad graph",
}

NodeKind = Literal["frame", "compile", "graph", "output", "kernels", "kernel", "guards", "pending"]


@dataclass
class Node:
    kind: NodeKind
    frame: FrameInfo | None = None
    compile: CompileInfo | None = None
    graph: Graph | None = None
    output: OutputCode | None = None
    kernel: KernelInfo | None = None


def stage_name(stage: str) -> str:
    if stage.endswith("_bw") and stage[:-3] in STAGE_NAMES:
        return STAGE_NAMES[stage[:-3]] + " (backward)"
    return STAGE_NAMES.get(stage, stage)


def _signature(c: CompileInfo) -> tuple[int, int, int, bool, bool]:
    return (len(c.graphs), len(c.output_codes), len(c.kernels), c.guards is not None, c.capture is not None)


def compile_label(c: CompileInfo) -> Text:
    style = {"graph": "green", "compiling": "bold cyan"}.get(c.outcome, "yellow")
    label = Text.assemble((c.cid, "bold"), "  ", (c.outcome, style))
    if c.compile_time_s:
        label.append(f"  {duration(c.compile_time_s)}", style="dim")
    if c.recompile is not None:
        label.append("  recompile", style="magenta")
    if c.breaks:
        label.append(f"  {len(c.breaks)} break{'s' if len(c.breaks) > 1 else ''}", style="red")
    return label


def op_histogram(op_counts: dict[str, int]) -> Table:
    t = Table(box=None, padding=(0, 1), title="ops", title_justify="left", title_style="bold")
    t.add_column("count", justify="right")
    t.add_column("op")
    t.add_column("")
    top = sorted(op_counts.items(), key=lambda kv: (-kv[1], kv[0]))
    peak = top[0][1] if top else 1
    for op, n in top[:HISTOGRAM_ROWS]:
        t.add_row(str(n), Text(op), Text("█" * max(1, round(20 * n / peak)), style="magenta"))
    if len(top) > HISTOGRAM_ROWS:
        t.add_row("", Text(f"… {len(top) - HISTOGRAM_ROWS} more ops", style="dim"), "")
    return t


def compile_detail(ctx: Context, c: CompileInfo) -> list[RenderableType]:
    parts: list[RenderableType] = [Text.assemble(("compile ", "bold"), (c.cid, "bold cyan"), f"  {screens.frame_name(c)}")]
    cap = c.capture
    if cap is None:
        parts.append(Text(f"in progress: {screens.compile_stage(c)}", style="bold cyan"))
    else:
        parts.append(Text(f"outcome: {cap.outcome}"))
        times = c.stage_times()
        if times:
            parts.append(
                Text("time: " + ", ".join(f"{k} {duration(v)}" for k, v in times.items()) + f"  (total {duration(c.compile_time_s)})")
            )
        counts = [
            ("ops", cap.graph_op_count),
            ("nodes", cap.graph_node_count),  # torch's: what c.node_count() says of the Dynamo graph
            ("inputs", cap.graph_input_count),
            ("guards", c.guard_count),
            ("cache size", cap.cache_size),
        ]
        parts.append(Text(" · ".join(f"{k} {v}" for k, v in counts if v is not None)))
        caches = f"fx cache {cap.fx_cache_hits} hit / {cap.fx_cache_misses} miss · aot cache {cap.aot_cache_hits} hit / {cap.aot_cache_misses} miss"
        parts.append(Text(caches, style="dim"))
        if cap.fail_type or cap.fail_reason:
            parts.append(Text(f"failed: {cap.fail_type or ''} {cap.fail_reason or ''}".strip(), style="red"))
        for reason in cap.restart_reasons:
            parts.append(Text(f"restarted: {reason}", style="yellow"))
    if c.recompile is not None:
        for reason in c.recompile.reasons:
            parts.append(Text(f"recompiled because: {reason}", style="magenta"))
    for loc, said in screens.compile_breaks(c):
        parts.append(Text(f"graph break at {display_loc(loc, ctx.cwd)}: {said}", style="red"))
    if c.kernels:
        parts.append(Text(f"{len(c.kernels)} kernels: " + ", ".join(k.name for k in c.kernels), style="dim"))
    return parts


def graph_detail(ctx: Context, c: CompileInfo, g: Graph) -> list[RenderableType]:
    text, more = cut_code(ctx.run.blob_text(g.code))
    parts: list[RenderableType] = [Text.assemble((stage_name(g.stage), "bold"), f"  {c.node_count(g)} nodes")]
    if g.op_counts:
        parts.append(op_histogram(g.op_counts))
    parts.append(Text(""))
    parts.append(code_view(text or "# the graph's code is missing from the run (blob not found)", "python"))
    if more:
        parts.append(Text(f"… {more} more lines", style="dim"))
    return parts


class CompilesView(View):
    SCOPED_CSS = False  # (beside_detail: the narrow layout hangs on the screen's class)
    DEFAULT_CSS = beside_detail("compiles-tree", "45%")
    view_id = "compiles"
    HELP = (
        """
## Compiles

Every compiled frame → each of its compiles → the graphs torch produced (Dynamo,
AOT forward/backward, post-grad), the output code and the kernels.

- **↑/↓** move · **enter/space** expand · **o** open the frame in `$EDITOR`
"""
        + COMMON_KEYS
    )

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._frames: dict[str, TreeNode[Node]] = {}
        self._frame_sizes: dict[str, int] = {}
        self._compiles: dict[tuple[str, str], TreeNode[Node]] = {}
        self._signatures: dict[tuple[str, str], tuple[int, int, int, bool, bool]] = {}  # when children were built
        self._labels: dict[tuple[str, str], tuple[int, int, int, bool, bool]] = {}  # when the label was drawn
        self._pending: TreeNode[Node] | None = None
        self._scope: screens.Scope | None = None
        self._selected: Node | None = None

    def compose(self) -> ComposeResult:
        with Horizontal():
            tree: Tree[Node] = Tree("run", id="compiles-tree")
            tree.show_root = False
            tree.guide_depth = 3
            yield tree
            yield DetailPane(id="compile-info", classes="detail")

    def on_mount(self) -> None:
        self.query_one(DetailPane).show(Text("Select a frame, compile, graph or kernel.", style="dim"))

    def tab_label(self, ctx: Context) -> str:
        return f"Compiles ({screens.compile_count(ctx.run.model, ctx.scope)})"

    # -- building the tree ---------------------------------------------------------------

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        tree: Tree[Node] = self.query_one(Tree)
        if ctx.scope != self._scope:
            tree.clear()
            self._frames.clear()
            self._frame_sizes.clear()
            self._compiles.clear()
            self._signatures.clear()
            self._labels.clear()
            self._pending = None
            self._scope = ctx.scope
        for frame in screens.frames(ctx.run.model, ctx.scope):
            key = frame_key(frame)
            node = self._frames.get(key)
            if node is None:
                node = self._frames[key] = tree.root.add(self._frame_label(frame), Node("frame", frame=frame))
                self._frame_sizes[key] = 0
            if self._frame_sizes[key] != len(frame.compiles):
                node.set_label(self._frame_label(frame))
                for c in frame.compiles[self._frame_sizes[key] :]:
                    self._add_compile(node, c)
                self._frame_sizes[key] = len(frame.compiles)
        if tree.cursor_line < 0 and tree.root.children:
            tree.cursor_line = 0  # show the first frame's details without a key press
        pending = screens.compiling_now(ctx.run.model, ctx.scope)
        self._sync_pending(tree, pending)
        for ckey, node in self._compiles.items():
            info = node.data.compile if node.data else None
            if info is None:
                continue
            sig = _signature(info)
            if self._labels.get(ckey) != sig:
                self._labels[ckey] = sig
                node.set_label(compile_label(info))
            # Children are built on first expand; an expanded compile that logged more is rebuilt.
            if node.is_expanded and self._signatures.get(ckey) != sig:
                self._populate(node)
        if self._selected is not None and self._selected.kind in ("compile", "frame"):
            self._show_node(self._selected)

    def _frame_label(self, frame: FrameInfo) -> Text:
        cwd = self.ctx.cwd if self.ctx else None
        where = def_file_line(frame.filename, frame.firstlineno, cwd)
        label = Text.assemble((frame.name, "bold"), ("  " + where, "dim"), f"  {frame.compile_count}×")
        if frame.recompile_limit is not None:
            label.append("  limit hit", style="bold yellow")
        return label

    def _add_compile(self, parent: TreeNode[Node], c: CompileInfo) -> None:
        key = (c.log, c.cid)
        old = self._compiles.pop(key, None)
        if old is not None:
            old.remove()
        self._compiles[key] = parent.add(compile_label(c), Node("compile", compile=c), allow_expand=True)
        self._signatures.pop(key, None)
        self._labels[key] = _signature(c)

    def _sync_pending(self, tree: Tree[Node], pending: list[CompileInfo]) -> None:
        if pending and self._pending is None:
            self._pending = tree.root.add(Text("compiling now", style="bold cyan"), Node("pending"), before=0, expand=True)
        if self._pending is None:
            return
        present = {(c.log, c.cid) for c in pending}
        for child in list(self._pending.children):
            shown_c = child.data.compile if child.data else None
            if shown_c is None or (shown_c.log, shown_c.cid) not in present:
                child.remove()
        shown = {(child.data.compile.log, child.data.compile.cid) for child in self._pending.children if child.data and child.data.compile}
        for c in pending:
            label = Text.assemble((screens.frame_name(c), "bold"), f"  {c.cid}  ", (screens.compile_stage(c), "cyan"))
            if (c.log, c.cid) not in shown:
                self._pending.add_leaf(label, Node("compile", compile=c))
            else:
                for child in self._pending.children:
                    if child.data and child.data.compile is c:
                        child.set_label(label)
        if not pending:
            self._pending.remove()
            self._pending = None

    def _populate(self, node: TreeNode[Node]) -> None:
        assert node.data is not None and node.data.compile is not None
        c = node.data.compile
        node.remove_children()
        for g in c.graphs:
            node.add_leaf(Text.assemble(stage_name(g.stage), (f"  {c.node_count(g)} nodes", "dim")), Node("graph", compile=c, graph=g))
        for out in c.output_codes:
            label = "output code (backward)" if out.backward else "output code"
            node.add_leaf(Text.assemble(label, (f"  {len(out.kernels)} kernels", "dim")), Node("output", compile=c, output=out))
        if c.kernels:
            kernels = node.add(Text(f"kernels ({len(c.kernels)})"), Node("kernels", compile=c), expand=True)
            for k in c.kernels:
                ops = ", ".join(k.event.fused_ops[:3])
                kernels.add_leaf(Text.assemble(k.name, (f"  {k.event.backend}  {ops}", "dim")), Node("kernel", compile=c, kernel=k))
        if c.guards is not None:
            node.add_leaf(Text(f"guards ({c.guard_count})"), Node("guards", compile=c))
        self._signatures[(c.log, c.cid)] = _signature(c)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Node]) -> None:
        event.stop()
        data = event.node.data
        if data is not None and data.kind == "compile" and data.compile is not None:
            key = (data.compile.log, data.compile.cid)
            if self._signatures.get(key) != _signature(data.compile):
                self._populate(event.node)

    # -- the detail pane -----------------------------------------------------------------

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Node]) -> None:
        event.stop()
        if event.node.data is not None:
            node = self._selected = event.node.data
            self.show_detail_soon(lambda: self._show_node(node))

    def _show_node(self, node: Node) -> None:
        if self.ctx is None:
            return
        ctx = self.ctx
        info = self.query_one(DetailPane)
        if node.kind == "frame" and node.frame is not None:
            f = node.frame
            parts: list[RenderableType] = [self._frame_label(f), Text("")]
            for c in f.compiles:
                parts.append(compile_label(c))
                if c.recompile is not None:
                    for reason in c.recompile.reasons[:1]:
                        parts.append(Text(f"   recompiled because: {reason}", style="magenta"))
            info.show(*parts)
        elif node.kind == "compile" and node.compile is not None:
            info.show(*compile_detail(ctx, node.compile))
        elif node.kind == "graph" and node.graph is not None and node.compile is not None:
            info.show(*graph_detail(ctx, node.compile, node.graph))
        elif node.kind == "output" and node.output is not None:
            text, more = cut_code(ctx.run.blob_text(node.output.code))
            out: list[RenderableType] = [
                Text("output code" + (" (backward)" if node.output.backward else ""), style="bold"),
                code_view(text, "python"),
            ]
            if more:
                out.append(Text(f"… {more} more lines", style="dim"))
            info.show(*out)
        elif node.kind == "kernel" and node.kernel is not None:
            info.show(*kernel_detail(ctx, node.kernel))
        elif node.kind == "guards" and node.compile is not None and node.compile.guards is not None:
            text = ctx.run.blob_text(node.compile.guards.text)
            info.show(Text(f"guards of {node.compile.cid} ({node.compile.guards.count})", style="bold"), Text(text))
        elif node.kind == "kernels" and node.compile is not None:
            info.show(*compile_detail(ctx, node.compile))

    # -- search / reveal / open -----------------------------------------------------------

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        hits = []
        for frame in screens.frames(ctx.run.model, ctx.scope):
            if matches(query, frame.name, display_path(frame.filename, ctx.cwd)):
                hits.append(SearchHit(self.view_id, frame_key(frame), f"frame   {frame.name}  ×{frame.compile_count}"))
            for c in frame.compiles:
                if query.strip() == c.cid:
                    hits.append(SearchHit(self.view_id, f"compile|{c.log}|{c.cid}", f"compile   {c.cid}  {frame.name}"))
        return hits

    def reveal(self, key: str) -> None:
        tree: Tree[Node] = self.query_one(Tree)
        node: TreeNode[Node] | None = None
        if key.startswith("compile|"):
            _, log, cid = key.split("|", 2)
            node = self._compiles.get((log, cid))
            if node is not None and node.parent is not None:
                node.parent.expand()
        else:
            node = self._frames.get(key)
        tree.focus()
        if node is not None:
            target = node
            self.call_after_refresh(tree.move_cursor, target)

    def selected_location(self) -> Loc | None:
        node = self._selected
        if node is None:
            return None
        if node.kind == "kernel" and node.kernel is not None and node.kernel.lines:
            return node.kernel.lines[0]
        frame = node.frame
        c = node.compile
        if frame is None and c is not None and c.capture is not None and c.capture.co_filename:
            line = c.capture.co_firstlineno or 1
            return Loc(file=c.capture.co_filename, line=def_line(c.capture.co_filename, line), name=c.capture.co_name)
        if frame is None and c is not None and c.start is not None and c.start.stack:
            return c.start.stack[-1]
        if frame is not None:
            return Loc(file=frame.filename, line=def_line(frame.filename, frame.firstlineno), name=frame.name)
        return None
