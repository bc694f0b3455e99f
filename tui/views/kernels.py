"""Kernels: every generated kernel (name, compile, backend, fused ATen ops, the user lines it
came from, size) with its Triton or C++ source highlighted; the filter narrows by name, op
or source line (``train.py:27``). A ``--profile-kernels`` run adds time per step, calls per
step and achieved GB/s and GFLOP/s; a run with Triton's compile metadata adds each kernel's
config, registers, spills and shared memory — each row laid out from the report layer's
``Kernel`` (``inspector/reports/kernels.kernel``, what ``kernels`` prints); a click on a
header (or **s**) sorts by that column."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Input

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.locations import same_file, split_file_line
from dyn_inspect.inspector.model import KernelInfo, KernelMeta
from dyn_inspect.inspector.outputs.reports import KernelCompile
from dyn_inspect.inspector.reports import screens
from dyn_inspect.inspector.reports.kernels import kernel
from dyn_inspect.inspector.units import bytes_text, rate_text, time_text
from dyn_inspect.tui.display import cut_middle, display_loc
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, matches
from dyn_inspect.tui.views.table import Cell, RowDetails, kernel_detail
from dyn_inspect.tui.widgets import DetailPane

# Names and ops are cut (in full in the pane below and in the sort) so that the columns up
# to the fused ops fit the terminal: a name gets what the other columns leave, at least
# NAME_MIN (with a profiled run's cost columns that is all 160 columns leave) and at most
# NAME_MAX; OTHER_WIDTHS are those columns' widths with their padding (Source lines: three).
NAME_MIN, NAME_MAX = 28, 64
OPS_WIDTH = 32
OTHER_WIDTHS = {"cid": 9, "size": 10, "lines": 26, "ops": OPS_WIDTH + 2, "costs": 43, "bw": 5, "edges": 4}


def name_width(screen_width: int, profiled: bool) -> int:
    """How many cells a kernel's name may take on a screen ``screen_width`` wide."""
    taken = sum(w for k, w in OTHER_WIDTHS.items() if k != "costs" or profiled)
    return max(NAME_MIN, min(NAME_MAX, screen_width - taken))


def kernel_matches(k: KernelInfo, query: str, cwd: str | None) -> bool:
    """``file:line`` (or ``:line``) matches kernels whose provenance includes that line;
    anything else is a case-insensitive substring of the name, backend, ops or lines."""
    q = query.strip()
    if not q:
        return True
    at = split_file_line(q)
    if at is not None:
        name, line = at  # the same file matching as `kernels --at` (":27": any file)
        return any(loc.line == line and (not name or same_file(loc.file, name, cwd)) for loc in k.lines)
    e = k.event
    return matches(q, e.name, e.backend, *e.fused_ops, *e.source_nodes, *(display_loc(loc, cwd) for loc in k.lines))


def _cid_order(cid: str) -> tuple[int, ...]:
    """ "10/2" after "2/0": compile ids sort by their numbers, not as text."""
    return tuple(int(n) for n in cid.replace("@r", "/").split("/") if n.isdigit())


def _most_first(value: float | None, name: str) -> tuple[object, ...]:
    """A figure's sort value: the largest first, a kernel without it last."""
    return (1, 0, name) if value is None else (0, -value, name)


def meta_cells(c: KernelCompile | None, name: str) -> dict[str, Cell]:
    """The compile-metadata cells (column key → cell) of a kernel: its config, registers,
    spills and shared memory; "-" for a kernel without metadata (sorted after the others)."""
    config = c.config if c is not None else "-"
    regs = c.registers if c is not None else None
    spills = c.spills if c is not None else None
    shared = c.shared_bytes if c is not None else None
    return {
        "config": Cell(config, (c is None, config)),
        "regs": Cell("-" if regs is None else str(regs), _most_first(regs, name), justify="right"),
        "spills": Cell("-" if spills is None else str(spills), _most_first(spills, name), justify="right"),
        "smem": Cell(bytes_text(shared), _most_first(shared, name), justify="right"),
    }


def lines_text(k: KernelInfo, cwd: str | None, limit: int = 3) -> str:
    shown = [display_loc(loc, cwd) for loc in k.lines[:limit]]
    more = len(k.lines) - limit
    return ", ".join(shown) + (f" +{more}" if more > 0 else "")


class KernelsView(RowDetails):
    SCOPED_CSS = False  # the rules name the view's parts by id, as the app's CSS did
    DEFAULT_CSS = """
    #kernels-table { height: 1fr; }
    #kernel-source { height: 2fr; border-left: none; border-top: hkey $foreground 20%; }
    #kernel-filter { height: 1; border: none; padding: 0 1; }
    """
    view_id = "kernels"
    HELP = (
        """
## Kernels

Every kernel Inductor generated, with the ATen ops it fuses and the user lines it came
from (provenance). The source shows below.

- **f** filter: a name, an op, or a source line such as `train.py:27`
- **s** cycles the order: time per step, calls, GB/s, GFLOP/s, name, compile (a run
  without `--profile-kernels`: name, compile, size), then registers, spills and shared
  memory where Triton's compile metadata was recorded; a click on a column header sorts
  by that column (again: reversed)
- **↑/↓** select · **o** open the kernel's first source line in `$EDITOR`

With `--profile-kernels`, *Time/step*, *Calls/step*, *GB/s* and *GFLOP/s* are the
steady-state figures (bandwidth from Inductor's byte estimate, FLOP/s for matmuls and
convolutions; a percentage is of the device's peak). A Triton run adds *Config* (the
autotuner's choice), *Regs*, *Spills* and *Smem* (shared memory) per kernel, and the
detail shows the configs tried, the IR stages kept and launches that differ from what the
kernel was compiled for.
"""
        + COMMON_KEYS
    )

    BINDINGS = [("f", "focus_filter", "Filter"), ("s", "cycle_sort", "Sort")]
    SORT_CYCLE = ("time", "calls", "gbps", "gflops", "name", "cid")
    PLAIN_SORT_CYCLE = ("name", "cid", "size")
    META_SORT_CYCLE = ("regs", "spills", "smem")
    META_COLUMNS = ("config", "regs", "spills", "smem")

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._seen = 0  # model.kernels[:_seen] were considered for the table
        self._kernels: dict[str, KernelInfo] = {}
        self._scope: screens.Scope | None = None
        self._filter = ""
        self._shown: str | None = None
        self._profiles = 0  # model.kernel_profiles seen: profiles arrive at the end of a run
        self._sort: tuple[str, bool] | None = None  # (column key, reverse)
        self._profiled = False  # the cost columns are shown
        self._with_meta = False  # the compile-metadata columns are shown
        self._metas: dict[str, KernelMeta | None] = {}  # row key → the KernelMeta its cells show
        self._name_width = NAME_MIN  # names are cut to this (``name_width``)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Input(placeholder="filter kernels: name, op, or file:line (press f)", id="kernel-filter")
            yield DataTable(id="kernels-table", cursor_type="row", zebra_stripes=True)
            yield DetailPane(id="kernel-source", classes="detail")

    def on_mount(self) -> None:
        self._add_columns(profiled=False, with_meta=False)
        self.query_one(DetailPane).show(Text("No kernels recorded (yet).", style="dim"))

    def tab_label(self, ctx: Context) -> str:
        return f"Kernels ({len(screens.kernels(ctx.run.model, ctx.scope))})"

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        profiles = len(ctx.run.model.kernel_profiles)
        if ctx.scope != self._scope or profiles != self._profiles or (not self._with_meta and _has_meta(ctx)):
            self._scope = ctx.scope
            self._profiles = profiles
            self._rebuild()
            return
        self._add(ctx.run.model.kernels[self._seen :], self._seen)
        if self._with_meta:
            self._refresh_meta()

    def _add_columns(self, profiled: bool, with_meta: bool) -> None:
        """The cost columns only for a profiled run, the compile-metadata columns only when
        some kernel has Triton's metadata (a CPU run has none): four columns of "-" would
        push the fused ops off a terminal's width. What tells kernels apart (name, size, the
        user's lines, the fused ops) comes first and fits 160 columns with the cost columns
        (names and ops are cut, in full in the pane); the metadata and the backend follow."""
        table = self.query_one(DataTable)
        table.clear(columns=True)
        self._profiled = profiled
        self._with_meta = with_meta
        table.add_column("Kernel", key="name")
        table.add_column("Compile", key="cid")
        if profiled:
            table.add_column("Time/step", key="time")
            table.add_column("Calls/step", key="calls")
            table.add_column("GB/s", key="gbps")
            table.add_column("GFLOP/s", key="gflops")
        table.add_column("Size", key="size")
        table.add_column("Source lines", key="lines")
        table.add_column("Fused ops", key="ops")
        if with_meta:
            table.add_column("Config", key="config")
            table.add_column("Regs", key="regs")
            table.add_column("Spills", key="spills")
            table.add_column("Smem", key="smem")
        table.add_column("Backend", key="backend")

    def on_resize(self) -> None:
        if name_width(self.app.size.width, self._profiled) != self._name_width and self.ctx is not None:
            self._rebuild()

    def _rebuild(self) -> None:
        table = self.query_one(DataTable)
        profiled = bool(self.ctx and self.ctx.run.model.kernel_profiles)
        with_meta = self.ctx is not None and _has_meta(self.ctx)
        if profiled != self._profiled or with_meta != self._with_meta:
            self._add_columns(profiled, with_meta)
            gone = (() if profiled else ("time", "calls", "gbps", "gflops")) + (() if with_meta else self.META_COLUMNS)
            if self._sort is not None and self._sort[0] in gone:
                self._sort = None
        self._name_width = name_width(self.app.size.width, profiled)
        table.clear()
        self._kernels.clear()
        self._metas.clear()
        self._seen = 0
        self._shown = None
        if self.ctx is not None:
            self._add(self.ctx.run.model.kernels, 0)
        if not table.row_count:
            message = "No kernel matches the filter." if self._filter else "No kernels recorded (yet)."
            self.query_one(DetailPane).show(Text(message, style="dim"))

    def _add(self, new: list[KernelInfo], start: int) -> None:
        assert self.ctx is not None
        ctx = self.ctx
        table = self.query_one(DataTable)
        rows = []
        for i, k in enumerate(new, start):
            if not ctx.scope.has(k.compile.log) or not kernel_matches(k, self._filter, ctx.cwd):
                continue
            key = str(i)
            self._kernels[key] = k
            row = kernel(ctx.run.model, k)
            ops = ", ".join(row.fused_ops)
            p = row.profile
            gflops = p.tflops * 1e3 if p is not None and p.tflops is not None else None
            costs = (
                (
                    # unprofiled kernels sort after every profiled one (values are negated: most first)
                    Cell(time_text(p.us_per_step) if p else "-", -p.us_per_step if p else 1.0, justify="right"),
                    Cell(f"{p.calls_per_step:g}" if p else "-", -p.calls_per_step if p else 1.0, justify="right"),
                    Cell(
                        rate_text(p.bandwidth_gbps if p else None, "", p.peak_gbps if p else None),
                        -(p.bandwidth_gbps or 0.0) if p else 1.0,
                        justify="right",
                    ),
                    Cell(rate_text(gflops, ""), -(gflops or 0.0) if p else 1.0, justify="right"),
                )
                if self._profiled
                else ()
            )
            meta = tuple(meta_cells(row.compile, row.name).values()) if self._with_meta else ()
            self._metas[key] = k.meta
            rows.append(
                (
                    key,
                    (
                        Cell(cut_middle(row.name, self._name_width) + (" (bw)" if row.backward else ""), row.name),
                        Cell(row.compile_id, _cid_order(row.compile_id)),
                        *costs,
                        Cell(f"{row.lines_of_code} lines", row.lines_of_code, justify="right"),
                        Cell(lines_text(k, ctx.cwd), [(loc.file, loc.line) for loc in k.lines]),
                        Cell(ops[: OPS_WIDTH - 1] + "…" if len(ops) > OPS_WIDTH else ops, ops),
                        *meta,
                        Cell(row.backend),
                    ),
                )
            )
        self._seen = start + len(new)
        for key, cells in rows:
            table.add_row(*cells, key=key)
        if rows and self._sort is not None:
            table.sort(self._sort[0], reverse=self._sort[1])
        if self._shown is None and table.row_count:
            self._show(str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))

    def _refresh_meta(self) -> None:
        """Rewrite the metadata cells of rows whose kernel's metadata came (or changed:
        the config is known once the first launch autotuned) since they were drawn."""
        table = self.query_one(DataTable)
        changed = False
        for key, k in self._kernels.items():
            if k.meta is self._metas.get(key):
                continue
            self._metas[key] = k.meta
            c = kernel(self.ctx.run.model, k).compile if self.ctx is not None else None
            for column, cell in meta_cells(c, k.name).items():
                table.update_cell(key, column, cell)
            changed = True
            if key == self._shown:
                self._show(key)
        if changed and self._sort is not None and self._sort[0] in self.META_COLUMNS:
            table.sort(self._sort[0], reverse=self._sort[1])

    def sort_by(self, column: str, reverse: bool = False) -> None:
        """Order the table by a column (its cells' sort values: costs most first)."""
        self._sort = (column, reverse)
        self.query_one(DataTable).sort(column, reverse=reverse)

    def action_cycle_sort(self) -> None:
        current = self._sort[0] if self._sort else None
        cycle = (self.SORT_CYCLE if self._profiled else self.PLAIN_SORT_CYCLE) + (self.META_SORT_CYCLE if self._with_meta else ())
        self.sort_by(cycle[(cycle.index(current) + 1) % len(cycle)] if current in cycle else cycle[0])

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        column = str(event.column_key.value)
        reverse = self._sort is not None and self._sort == (column, False)
        self.sort_by(column, reverse)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "kernel-filter":
            return
        event.stop()
        self._filter = event.value
        self._rebuild()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "kernel-filter":
            event.stop()
            self.query_one(DataTable).focus()

    def action_focus_filter(self) -> None:
        self.query_one("#kernel-filter", Input).focus()

    def set_filter(self, text: str) -> None:
        self.query_one("#kernel-filter", Input).value = text  # Input.Changed rebuilds

    def _show(self, key: str) -> None:
        k = self._kernels.get(key)
        if k is None or self.ctx is None:
            return
        self._shown = key
        self.query_one(DetailPane).show(*kernel_detail(self.ctx, k))

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        hits = []
        for i, k in enumerate(list(ctx.run.model.kernels)):
            if ctx.scope.has(k.compile.log) and kernel_matches(k, query, ctx.cwd):
                hits.append(SearchHit(self.view_id, str(i), f"kernel   {k.name}  {', '.join(k.event.fused_ops[:3])}"))
        return hits

    def reveal(self, key: str) -> None:
        table = self.query_one(DataTable)
        if key not in self._kernels and self._filter:
            self.set_filter("")
            self._filter = ""
            self._rebuild()
        if key in self._kernels:
            table.move_cursor(row=table.get_row_index(key), animate=False)
            self._show(key)
        table.focus()

    def selected_location(self) -> Loc | None:
        k = self._kernels.get(self._shown or "")
        return k.lines[0] if k is not None and k.lines else None


def _has_meta(ctx: Context) -> bool:
    """Some kernel of the run has Triton's compile metadata (none on a CPU run: looked for
    only once the model holds metadata)."""
    model = ctx.run.model
    return bool(model.kernel_metas) and any(k.meta is not None for k in model.kernels)
