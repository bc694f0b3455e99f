"""Recompiles: per function, the timeline of its compiles with the guards that failed, the
guard diff between consecutive cache entries, and a suggestion — laid out from the report
layer's ``RecompiledFrame`` (``inspector/reports/recompiles.frame_timeline``)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.locations import def_file_line, def_line
from dyn_inspect.inspector.model import FrameInfo
from dyn_inspect.inspector.outputs.reports import GuardDiffBrief
from dyn_inspect.inspector.reports import screens
from dyn_inspect.inspector.reports.recompiles import frame_timeline, recompile_reasons
from dyn_inspect.tui.display import display_path, duration
from dyn_inspect.tui.source import THEME
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, beside_detail, matches
from dyn_inspect.tui.views.table import Cell, TableView, frame_key
from dyn_inspect.tui.widgets import DetailPane

MAX_DIFF_LINES = 8
MAX_OLDER_ENTRIES = 2  # older cache entries' failed guards shown per recompile


_DIFF_STYLE = {"~": "yellow", "+": "green", "-": "red"}


def _diff(d: GuardDiffBrief) -> RenderableType:
    if d.problem and not d.lines:
        return Text(f"    guard diff {d.before} → {d.after}: {d.problem}", style="dim")
    if not d.lines:
        return Text(f"    guard diff {d.before} → {d.after}: no guard changed", style="dim")
    out = Text(f"    guard diff {d.before} → {d.after} ({d.unchanged} unchanged)\n", style="bold")
    for line in d.lines[:MAX_DIFF_LINES]:
        out.append(f"      {line.sign} {line.text}\n", style=_DIFF_STYLE[line.sign])
    hidden = len(d.lines) - MAX_DIFF_LINES
    if hidden > 0:
        out.append(f"      … {hidden} more\n", style="dim")
    out.rstrip()
    return out


def timeline(ctx: Context, frame: FrameInfo) -> list[RenderableType]:
    model = ctx.run.model
    t0 = screens.start_time(model)
    where = def_file_line(frame.filename, frame.firstlineno, ctx.cwd)
    parts: list[RenderableType] = [
        Text.assemble((frame.name, "bold"), ("  " + where, "dim")),
        Text(f"{len(frame.compiles)} compiles", style="dim"),
        Text(""),
    ]
    shown = frame_timeline(ctx.run, frame)
    for entry in shown.timeline:
        when = f"+{duration(entry.t - t0)}" if t0 is not None and entry.t else ""
        head = Text.assemble(
            (f"#{entry.index} ", "bold"),
            (f"{entry.compile_id:<6}", "cyan"),
            (f" {'recompiled' if entry.is_recompile else 'compiled'} {when}", ""),
            (f"  {entry.outcome}", "green" if entry.outcome == "graph" else "yellow"),
            (f"  {duration(entry.compile_time_s)}" if entry.compile_time_s else "", "dim"),
        )
        parts.append(head)
        # One failure per older cache entry: the newest few (a long timeline stays linear).
        for failure in entry.failures[: 1 + MAX_OLDER_ENTRIES]:
            entry_id = f" (cache entry {failure.entry})" if failure.entry else ""
            line = Text(f"    ✗ failed guard{entry_id}: ", style="red")
            line.append(failure.text, style="")
            if failure.user_code:
                line.append(f"\n      at: {failure.user_code}", style="dim")
            parts.append(line)
        hidden = len(entry.failures) - 1 - MAX_OLDER_ENTRIES
        if hidden > 0:
            parts.append(Text(f"    … and {hidden} older cache entr{'y' if hidden == 1 else 'ies'} failed too", style="dim"))
        if entry.guard_diff is not None:
            parts.append(_diff(entry.guard_diff))
        if entry.limit_reached:
            parts.append(Text("    ⚠ recompile limit reached: the frame runs eagerly from here on", style="bold yellow"))
        if entry.suggestion is not None:
            parts.append(Text.assemble(("    → ", "bold green"), entry.suggestion.text))
            if entry.suggestion.code:
                parts.append(Syntax(entry.suggestion.code, "python", theme=THEME, padding=(0, 6), background_color="default"))
        parts.append(Text(""))
    if frame.recompile_limit is not None and not shown.limit_reached:
        parts.append(Text(f"⚠ {frame.recompile_limit.reason}", style="bold yellow"))
    return parts


class RecompilesView(TableView[FrameInfo]):
    SCOPED_CSS = False  # (beside_detail: the narrow layout hangs on the screen's class)
    DEFAULT_CSS = beside_detail("recompiles-table", "45%")
    view_id = "recompiles"
    HELP = (
        """
## Recompiles

Functions torch compiled more than once. For the selected function: every compile in
order, the guard that failed for each recompile, the guard diff between cache entries and
what to change.

- **↑/↓** select a function · **o** open its `def` in `$EDITOR`
"""
        + COMMON_KEYS
    )

    version_column = "n"

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield DataTable(id="recompiles-table", cursor_type="row", zebra_stripes=True)
            yield DetailPane(id="recompile-timeline", classes="detail")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("Compiles", key="n")
        table.add_column("Location", key="loc")
        table.add_column("Function", key="fn")
        self.query_one(DetailPane).show(Text("No recompiles recorded (yet).", style="dim"))

    def tab_label(self, ctx: Context) -> str:
        return f"Recompiles ({sum(1 for r in list(ctx.run.model.recompiles) if ctx.scope.has(r.log))})"

    def rows(self, ctx: Context) -> Iterable[tuple[str, FrameInfo, int]]:
        for frame in screens.recompiled_frames(ctx.run.model, ctx.scope):
            yield frame_key(frame), frame, len(frame.compiles) + (1 if frame.recompile_limit is not None else 0)

    def row_cells(self, ctx: Context, frame: FrameInfo, version: int) -> list[Cell]:
        where = def_file_line(frame.filename, frame.firstlineno, ctx.cwd)
        return [self.version_cell(ctx, frame, version), Cell(where), Cell(frame.name)]

    def version_cell(self, ctx: Context, frame: FrameInfo, version: int) -> Cell:
        hit = frame.recompile_limit is not None
        return Cell(
            f"{len(frame.compiles)}{' limit' if hit else ''}", len(frame.compiles), style="bold yellow" if hit else "", justify="right"
        )

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        changed = self.sync_rows(ctx)
        if self._shown is None:
            self._show_key(self.selected_key())
        elif self._shown in changed:
            self._show_key(self._shown)

    def show(self, key: str) -> None:
        if self.ctx is not None:
            self.query_one(DetailPane).show(*timeline(self.ctx, self._items[key]))

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        hits = []
        for frame in screens.recompiled_frames(ctx.run.model, ctx.scope):
            reasons = recompile_reasons(frame)
            if matches(query, frame.name, display_path(frame.filename, ctx.cwd), *reasons):
                first = reasons[0] if reasons else ""
                hits.append(SearchHit(self.view_id, frame_key(frame), f"recompile   {frame.name} ×{len(frame.compiles)}  {first}"))
        return hits

    def selected_location(self) -> Loc | None:
        if self._shown is None:
            return None
        f = self._items[self._shown]
        return Loc(file=f.filename, line=def_line(f.filename, f.firstlineno), name=f.name)
