"""The incremental table most views are (``TableView``, ``SplitView``), their cells, and
what more than one view shows (a kernel's detail, a frame's key): imported by the views
that have a table, not by the first frame's overview."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Generic, TypeVar

from rich.console import JustifyMethod, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable

from dyn_inspect.inspector.events import Kernel
from dyn_inspect.inspector.model import FrameInfo, KernelInfo
from dyn_inspect.inspector.outputs.reports import KernelCompile
from dyn_inspect.inspector.reports.kernels import kernel
from dyn_inspect.inspector.reports.screens import Scope
from dyn_inspect.tui.display import display_loc
from dyn_inspect.tui.source import code_view, cut_code
from dyn_inspect.tui.views.base import Context, View
from dyn_inspect.tui.widgets import DetailPane

T = TypeVar("T")


class RowDetails(View):
    """A view whose table's highlighted row has details, drawn by ``_show(key)`` once the
    cursor rests (``show_detail_soon``)."""

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.row_key is not None and event.row_key.value is not None:
            key = str(event.row_key.value)
            self.show_detail_soon(lambda: self._show(key))

    def _show(self, key: str) -> None:
        """Show the row ``key``'s details in the pane (each view says what they are)."""


class SplitView(RowDetails):
    """A table of rows beside a detail pane, the layout of most views: subclasses name the
    two widgets' ids, the table's (label, key) columns and what the pane says while empty."""

    TABLE_ID: ClassVar[str]
    DETAIL_ID: ClassVar[str]
    COLUMNS: ClassVar[tuple[tuple[str, str], ...]]
    EMPTY: ClassVar[str]

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield DataTable(id=self.TABLE_ID, cursor_type="row", zebra_stripes=True)
            yield DetailPane(id=self.DETAIL_ID, classes="detail")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for label, key in self.COLUMNS:
            table.add_column(label, key=key)
        self.query_one(DetailPane).show(Text(self.EMPTY, style="dim"))

    def show_kept_row(self, keep: str | None) -> None:
        """After the table was rebuilt: the row shown before (``keep``, when it is still
        there) under the cursor and in the pane, else the cursor's row."""
        table = self.query_one(DataTable)
        if not table.row_count:
            return
        if keep is not None:
            table.move_cursor(row=table.get_row_index(keep), animate=False)
        self._show(keep or str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))

    def reveal_row(self, key: str, known: bool) -> None:
        """``reveal`` for a search hit: its row (when ``known``) under the cursor, shown."""
        table = self.query_one(DataTable)
        if known:
            table.move_cursor(row=table.get_row_index(key), animate=False)
            self._show(key)
        table.focus()


class TableView(RowDetails, Generic[T]):
    """A view whose DataTable grows with the run: one row per key, added once; when a row's
    version (its count) changes only its ``version_column`` cell is rewritten, so a table of
    thousands of rows costs nothing per sync; a new scope (rank) starts over. Subclasses say
    what the rows are (``rows``), their cells, and what selecting one shows (``show``)."""

    version_column = "count"

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - textual's name
        super().__init__(id=id)
        self._items: dict[str, T] = {}
        self._versions: dict[str, int] = {}  # key → its version (a count)
        self._scope: Scope | None = None
        self._shown: str | None = None  # the key whose details are on the right

    def rows(self, ctx: Context) -> Iterable[tuple[str, T, int]]:
        """(key, item, version) of every row, in the model's order."""
        raise NotImplementedError

    def row_cells(self, ctx: Context, item: T, version: int) -> list[Cell]:
        raise NotImplementedError

    def version_cell(self, ctx: Context, item: T, version: int) -> Cell:
        raise NotImplementedError

    def show(self, key: str) -> None:
        """Show the details of the row ``key`` (known to be in the table)."""

    def sync_rows(self, ctx: Context) -> set[str]:
        """Bring the table up to the model; the keys of the rows added or changed."""
        table = self.query_one(DataTable)
        if ctx.scope != self._scope:
            table.clear()
            self._items.clear()
            self._versions.clear()
            self._scope = ctx.scope
        changed: set[str] = set()
        for key, item, version in self.rows(ctx):
            if key not in self._items:
                table.add_row(*self.row_cells(ctx, item, version), key=key)
                changed.add(key)
            elif self._versions[key] != version:
                table.update_cell(key, self.version_column, self.version_cell(ctx, item, version))
                changed.add(key)
            self._items[key] = item
            self._versions[key] = version
        return changed

    def selected_key(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        try:
            row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        except Exception:  # noqa: BLE001 - an empty or shrinking table
            return None
        return str(row_key.value)

    def _show_key(self, key: str | None) -> None:
        if key is not None and key in self._items:
            self._shown = key
            self.show(key)

    def _show(self, key: str) -> None:
        self._show_key(key)

    def reveal(self, key: str) -> None:
        table = self.query_one(DataTable)
        if key in self._items:
            table.move_cursor(row=table.get_row_index(key), animate=False)
            self._show_key(key)
        table.focus()


class Cell(Text):
    """A table cell that sorts by a value rather than by its text (memray's SortableText).

    Every cell is a ``Text``, never a plain ``str``: DataTable would read a ``str`` as markup,
    and a torch message such as ``[0/1]`` must show as written."""

    __slots__ = ("value",)

    def __init__(self, text: str, value: object = None, style: str = "", justify: JustifyMethod | None = None) -> None:
        super().__init__(text, style=style, justify=justify, no_wrap=True, end="")
        self.value = text if value is None else value

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Cell):
            return NotImplemented
        return self.value < other.value  # type: ignore[operator]


# Shown by more than one view (a view never imports another: tests/test_layering.py).


def frame_key(f: FrameInfo) -> str:
    """A compiled frame's row/node key, the same in the recompiles and compiles views."""
    return f.key


def kernel_source(ctx: Context, k: Kernel, source: str | None = None) -> list[RenderableType]:
    """``source``: the kernel's source text when already read (else read from the run)."""
    text, more = cut_code(ctx.run.blob_text(k.source) if source is None else source)
    lexer = "cpp" if k.backend == "cpp" else "python"
    view: list[RenderableType] = [code_view(text or "// kernel source missing from the run", lexer)]
    if more:
        view.append(Text(f"… {more} more lines", style="dim"))
    return view


def kernel_detail(ctx: Context, k: KernelInfo) -> list[RenderableType]:
    """One kernel as ``dyn-inspect kernel`` answers it (``inspector.reports.kernels.kernel``):
    what it fuses, its lines, its compile, its cost per profiled step and the launches that
    differ from what it was compiled for; then its source."""
    e = k.event
    source = ctx.run.blob_text(e.source)
    d = kernel(ctx.run.model, k, source)
    parts: list[RenderableType] = [Text.assemble((d.name, "bold"), f"  {d.backend}", ("  backward" if d.backward else "", "dim"))]
    if d.fused_ops:
        parts.append(Text("fused: " + ", ".join(d.fused_ops)))
    if k.lines:
        parts.append(Text("from: " + ", ".join(display_loc(loc, ctx.cwd) for loc in k.lines), style="cyan"))
    if d.vectorized:
        parts.append(Text(f"vectorized: {d.vectorized}", style="dim"))
    parts.extend(kernel_compile_lines(ctx, k, d.compile))
    p = d.profile
    if p is not None:
        measured = f"profiled: {p.us_per_step:.1f} µs per step ({p.calls_per_step:g} calls)"
        if p.bandwidth_gbps:
            measured += f", {p.bandwidth_gbps:.0f} GB/s"
        if p.tflops:
            measured += f", {p.tflops:.2f} TFLOP/s"
        parts.append(Text(measured, style="green"))
    # launches that differ from what the kernel was compiled for
    parts.extend(Text(f"! {finding}", style="yellow") for finding in d.launch_findings)
    parts.extend(kernel_source(ctx, e, source))
    return parts


TRIED_SHOWN = 6  # the autotuner's configs listed in the pane (fastest first); the rest counted


def kernel_compile_lines(ctx: Context, k: KernelInfo, c: KernelCompile | None) -> list[RenderableType]:
    """What Triton made of the kernel (``c``, the report's): the config and its registers,
    spills and shared memory, how it was chosen and the configs tried (fastest first), and
    the IR stages kept."""
    parts: list[RenderableType] = []
    if c is not None:
        parts.append(Text.assemble(("compiled: ", "bold"), c.headline))
        parts.append(Text(f"autotune: {c.autotune}"))
        for t in c.tried[:TRIED_SHOWN]:
            time = "failed" if t.failed else (f"{t.time_ms * 1e3:.1f} µs" if t.time_ms is not None else "not timed")
            parts.append(Text(f"  {t.config} — {time}", style="dim"))
        if len(c.tried) > TRIED_SHOWN:
            parts.append(Text(f"  … {len(c.tried) - TRIED_SHOWN} more configs", style="dim"))
        if c.ir_kept:
            stage = "ptx" if "ptx" in c.ir_kept else c.ir_kept[-1]
            parts.append(Text(f"IR: {', '.join(c.ir_kept)} — {_kernel_command(ctx, k)} --stage {stage}", style="cyan"))
        elif c.ir_bytes:
            parts.append(Text("IR: not kept (record with `dyn-inspect run --kernel-ir` to read it)", style="dim"))
    elif k.event.backend == "triton":
        parts.append(
            Text("compile metadata: not recorded (Triton's autotuner was not seen: an imported log, or an older dyn-inspect)", style="dim")
        )
    return parts


def _kernel_command(ctx: Context, k: KernelInfo) -> str:
    """``dyn-inspect kernel NAME``, with ``--compile``/``--backward`` where the name alone
    names more than one kernel of the run."""
    same = [o for o in ctx.run.model.kernels if o.name == k.name]
    command = f"dyn-inspect kernel {k.name}"
    if len(same) > 1:
        command += f" --compile {k.compile.cid}"
        if k.event.backward and sum(1 for o in same if o.compile.cid == k.compile.cid) > 1:
            command += " --backward"
    return command
