"""Where a profiled step's time goes (``--profile N``): the step's split — compiled graphs,
the eager code graph breaks leave inside compiled frames, guard checks, wrappers, the rest —
then each graph break by its time per step, then each compiled region. The rows are
``inspector.reports.cost``'s, as ``dyn-inspect cost`` prints them; the tab shows only for a
profiled run."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.widgets import DataTable

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports import cost
from dyn_inspect.inspector.units import share_text, time_text
from dyn_inspect.tui.display import display_loc
from dyn_inspect.tui.source import snippet
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, beside_detail, matches
from dyn_inspect.tui.views.table import Cell, SplitView
from dyn_inspect.tui.widgets import DetailPane

Item = typed.BreakCost | typed.RegionCost | typed.Figure | typed.EagerComparison | None
Row = tuple[typed.StepBreakdown, str, str, float, Item]  # (process, what, note, µs, item)


class CostView(SplitView):
    view_id = "cost"
    TABLE_ID = "cost-table"
    DETAIL_ID = "cost-detail"
    # The numbers first: a break's headline is long, and the pane beside says it in full.
    COLUMNS = (
        ("Time/step", "time"),
        ("Share", "share"),
        ("What", "what"),
        ("Where", "where"),
    )
    EMPTY = "No profiled steps: record the run with `dyn-inspect run --profile N script.py`."
    SCOPED_CSS = False  # (beside_detail: the narrow layout hangs on the screen's class)
    DEFAULT_CSS = beside_detail("cost-table", "60%")
    HELP = (
        """
## Cost per step

Recorded with `--profile N`: N steady-state steps under torch.profiler. The first rows split a
step's host time: **compiled graphs**, **eager in compiled code** (the Python Dynamo left in
a compiled frame: the instruction a break stopped at), **guard checks** before each compiled
frame, Dynamo's and AOTAutograd's **wrappers**, and everything **outside** compiled code.
Then each graph break by its time per step, then each compiled region.

- **↑/↓** select a row · **o** open a break's line · **p** comes here from any view
"""
        + COMMON_KEYS
    )

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._rows: dict[str, Row] = {}
        self._seen: tuple[int, object] | None = None
        self._shown: str | None = None

    def _report(self, ctx: Context) -> list[typed.StepBreakdown]:
        return [p for p in cost(ctx.run).processes if ctx.scope.has(p.log)]

    def tab_label(self, ctx: Context) -> str:
        profiles = [p for log, p in ctx.run.model.step_profiles if ctx.scope.has(log)]
        return f"Cost ({time_text(max(p.step_us for p in profiles))}/step)" if profiles else "Cost"

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        # A profile arrives once, when its window closes: rebuild only when one did.
        seen = (len(ctx.run.model.step_profiles), ctx.scope)
        if seen == self._seen:
            return
        self._seen = seen
        table = self.query_one(DataTable)
        table.clear()
        self._rows.clear()
        cwd = ctx.cwd
        for n, p in enumerate(self._report(ctx)):
            figures = {f.what: f for f in p.figures}
            rows: list[tuple[str, str, str, float, Item]] = [
                ("compiled graphs", "forward and backward graphs", "", p.compiled_us, figures.get("compiled graphs")),
                (
                    "eager in compiled code",
                    "Python left in compiled frames: graph breaks, returns",
                    "",
                    p.eager_in_regions_us,
                    figures.get("eager in compiled code"),
                ),
                ("guard checks", "cache lookups before each compiled frame", "", p.guards_us, figures.get("guard checks")),
                ("wrappers", "Dynamo's and AOTAutograd's around each graph", "", p.overhead_us, figures.get("wrappers")),
                (
                    "outside compiled code",
                    "loss, optimizer, data, other eager Python",
                    "",
                    p.outside_us,
                    figures.get("outside compiled code"),
                ),
            ]
            if p.device_wait_us:
                wait = "a break's `.item()` or sync waiting for the work queued before it"
                rows.insert(2, ("waiting for the GPU", wait, "", p.device_wait_us, figures.get("waiting for the GPU")))
            if p.ab is not None:  # compiled against eager, interleaved in this process
                rows.append(("compiled vs eager", p.ab.text, "", p.ab.compiled_us, p.ab))
            for b in p.breaks:
                rows.append((f"break: {b.reason}", b.text, display_loc(Loc(b.file, b.line), cwd), b.us_per_step, b))
            for r in p.regions:
                rows.append((f"region {r.compile_id} {r.function or '?'}", "", "", r.us_per_step, r))
            for i, (what, note, where, us, item) in enumerate(rows):
                key = f"{n}|{i}"
                self._rows[key] = (p, what, note, us, item)
                style = (
                    "bold"
                    if isinstance(item, typed.BreakCost | typed.EagerComparison)
                    else ("dim" if isinstance(item, typed.RegionCost) else "")
                )
                table.add_row(
                    Cell(time_text(us), us, justify="right"),
                    Cell(share_text(us, p.step_us), us, justify="right"),
                    Cell(what, style=style),
                    Cell(where or "-"),
                    key=key,
                )
        if table.row_count:
            self.show_kept_row(self._shown if self._shown in self._rows else None)
        else:
            self.query_one(DetailPane).show(Text(self.EMPTY, style="dim"))

    def _show(self, key: str | None) -> None:
        if key is None or key not in self._rows:
            return
        self._shown = key
        p, what, note, us, item = self._rows[key]
        cwd = self.ctx.cwd if self.ctx else None
        parts: list[RenderableType] = [
            Text.assemble((what, "bold")),
            Text(
                f"{'rank ' + str(p.rank) + ': ' if p.rank is not None else ''}{p.steps} profiled steps, {time_text(p.step_us)} per step ({p.device})",
                style="dim",
            ),
        ]
        if p.plain_step_us is not None:
            slower = f", the profiler slowed it {p.profiler_slowdown:.1f}×" if p.profiler_slowdown and p.profiler_slowdown >= 1.25 else ""
            parts.append(Text(f"without the profiler: {time_text(p.plain_step_us)} per step ({p.plain_steps} steps){slower}", style="dim"))
        if p.noise is not None:
            parts.append(Text(p.noise.text, style="yellow" if p.noise.busy or p.noise.oversubscribed else "dim"))
            if p.noise.fix:
                parts.append(Text(f"fix: {p.noise.fix}", style="yellow"))
        if isinstance(item, typed.EagerComparison):
            parts += [Text(""), Text(item.text)]
            if item.compiled_spread is not None and item.eager_spread is not None:
                parts.append(Text(f"compiled: {item.compiled_spread.text}\neager: {item.eager_spread.text}", style="dim"))
        elif isinstance(item, typed.Figure):
            parts += [Text(""), Text(f"{time_text(us)} per step ({share_text(us, p.step_us)} of the step): {note}"), Text(item.text)]
        elif isinstance(item, typed.BreakCost):
            loc = Loc(item.file, item.line)
            parts += [
                Text(""),
                Text(item.text),
                Text(
                    f"eager code {time_text(item.eager_us)}, resume functions' guard checks and wrappers {time_text(item.resume_us)}",
                    style="dim",
                ),
                snippet(loc, display_loc(loc, cwd), context=3),
            ]
        elif isinstance(item, typed.RegionCost):
            parts += [
                Text(""),
                Text(f"{item.calls_per_step:g} calls per step, {time_text(item.us_per_step)} in all (regions entered from it included)"),
                Text(
                    f"graph {time_text(item.compiled_us)} · eager code {time_text(item.eager_us)} · "
                    f"guard checks {time_text(item.guards_us)} · wrappers {time_text(item.overhead_us)}"
                ),
            ]
            if p.device == "cuda":
                parts.append(Text(f"its graph's kernels: {time_text(item.device_us)} of GPU time per step"))
            if item.resume:
                parts.append(Text("a resume function: the code after a graph break", style="dim"))
            if item.nested:
                parts.append(Text(f"enters {', '.join(item.nested)}", style="dim"))
        else:
            parts += [Text(""), Text(f"{time_text(us)} per step ({share_text(us, p.step_us)} of the step): {note}")]
        self.query_one(DetailPane).show(*parts)

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        return [
            SearchHit(self.view_id, key, f"cost      {what} {time_text(us)}/step")
            for key, (_, what, note, us, _) in self._rows.items()
            if matches(query, what, note)
        ]

    def reveal(self, key: str) -> None:
        self.reveal_row(key, key in self._rows)

    def selected_location(self) -> Loc | None:
        if self._shown is None:
            return None
        item = self._rows[self._shown][4]
        return Loc(item.file, item.line) if isinstance(item, typed.BreakCost) else None
