"""Recompiles: per function, the timeline of its compiles with the guards that failed, the
guard diff between consecutive cache entries, and a suggestion (from
``inspector.analysis.recompiles`` / ``.guards``)."""

from __future__ import annotations

from rich.console import RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable

from dyn_inspect.engine.schema import Loc
from dyn_inspect.inspector.analysis import guards as guard_analysis
from dyn_inspect.inspector.analysis import recompiles as recompile_analysis
from dyn_inspect.inspector.locations import def_line
from dyn_inspect.inspector.model import CompileInfo, FrameInfo
from dyn_inspect.tui import digest
from dyn_inspect.tui.display import display_path, duration
from dyn_inspect.tui.source import THEME
from dyn_inspect.tui.views.base import COMMON_KEYS, Cell, Context, SearchHit, View, matches
from dyn_inspect.tui.widgets import DetailPane

MAX_DIFF_LINES = 8
MAX_OLDER_ENTRIES = 2  # older cache entries' failed guards shown per recompile


def frame_key(f: FrameInfo) -> str:
    return f.key


def _diff(ctx: Context, before: CompileInfo, after: CompileInfo) -> RenderableType | None:
    d = guard_analysis.guard_diff(ctx.run, before, after)
    if d.problem and d.empty:
        return Text(f"    guard diff {d.a} → {d.b}: {d.problem}", style="dim")
    if d.empty:
        return Text(f"    guard diff {d.a} → {d.b}: no guard changed", style="dim")
    out = Text(f"    guard diff {d.a} → {d.b} ({d.unchanged} unchanged)\n", style="bold")
    lines = 0
    for ch in d.changed:
        if lines >= MAX_DIFF_LINES:
            break
        where = f"{ch.after.path} " if ch.after.path else ""
        if ch.fields:
            fields = "; ".join(f"{k}: {a} → {b}" for k, a, b in ((k, *v) for k, v in ch.fields.items()))
            out.append(f"      ~ {ch.after.kind} {where}{fields}\n", style="yellow")
        else:
            out.append(f"      ~ {ch.before.expr}  →  {ch.after.expr}\n", style="yellow")
        lines += 1
    for g in d.added[: max(0, MAX_DIFF_LINES - lines)]:
        out.append(f"      + {g}\n", style="green")
        lines += 1
    for g in d.removed[: max(0, MAX_DIFF_LINES - lines)]:
        out.append(f"      - {g}\n", style="red")
        lines += 1
    hidden = len(d.changed) + len(d.added) + len(d.removed) - lines
    if hidden > 0:
        out.append(f"      … {hidden} more\n", style="dim")
    out.rstrip()
    return out


def timeline(ctx: Context, frame: FrameInfo) -> list[RenderableType]:
    model = ctx.run.model
    t0 = digest.start_time(model)
    where = f"{display_path(frame.filename, ctx.cwd)}:{def_line(frame.filename, frame.firstlineno)}"
    parts: list[RenderableType] = [
        Text.assemble((frame.name, "bold"), ("  " + where, "dim")),
        Text(f"{len(frame.compiles)} compiles", style="dim"),
        Text(""),
    ]
    entries = recompile_analysis.recompile_timeline(model, frame)
    for entry in entries:
        c = entry.compile
        when = f"+{duration(entry.t - t0)}" if t0 is not None and entry.t else ""
        head = Text.assemble(
            (f"#{entry.index} ", "bold"),
            (f"{c.cid:<6}", "cyan"),
            (f" {'recompiled' if entry.is_recompile else 'compiled'} {when}", ""),
            (f"  {c.outcome}", "green" if c.outcome == "graph" else "yellow"),
            (f"  {duration(c.compile_time_s)}" if c.compile_time_s else "", "dim"),
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
        if entry.is_recompile:
            previous = entries[entry.index - 1].compile
            diff = _diff(ctx, previous, c)
            if diff is not None:
                parts.append(diff)
        if entry.limit_reached:
            parts.append(Text("    ⚠ recompile limit reached: the frame runs eagerly from here on", style="bold yellow"))
        if entry.suggestion is not None:
            parts.append(Text.assemble(("    → ", "bold green"), entry.suggestion.text))
            if entry.suggestion.code:
                parts.append(Syntax(entry.suggestion.code, "python", theme=THEME, padding=(0, 6), background_color="default"))
        parts.append(Text(""))
    if frame.recompile_limit is not None and not any(e.limit_reached for e in entries):
        parts.append(Text(f"⚠ {frame.recompile_limit.reason}", style="bold yellow"))
    return parts


class RecompilesView(View):
    view_id = "recompiles"
    HELP = """
## Recompiles

Functions torch compiled more than once. For the selected function: every compile in
order, the guard that failed for each recompile, the guard diff between cache entries and
what to change.

- **↑/↓** select a function · **o** open its `def` in `$EDITOR`
""" + COMMON_KEYS

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._frames: dict[str, FrameInfo] = {}
        self._sizes: dict[str, int] = {}
        self._scope: digest.Scope | None = None
        self._shown: str | None = None

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

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        table = self.query_one(DataTable)
        if ctx.scope != self._scope:
            table.clear()
            self._frames.clear()
            self._sizes.clear()
            self._scope = ctx.scope
        changed_shown = False
        for frame in digest.recompiled_frames(ctx.run.model, ctx.scope):
            key = frame_key(frame)
            size = len(frame.compiles) + (1 if frame.recompile_limit is not None else 0)
            hit = frame.recompile_limit is not None
            n = Cell(f"{len(frame.compiles)}{' limit' if hit else ''}", len(frame.compiles), style="bold yellow" if hit else "", justify="right")
            if key not in self._frames:
                self._frames[key] = frame
                where = f"{display_path(frame.filename, ctx.cwd)}:{def_line(frame.filename, frame.firstlineno)}"
                table.add_row(n, Cell(where), Cell(frame.name), key=key)
            elif self._sizes[key] != size:
                table.update_cell(key, "n", n)
                changed_shown |= key == self._shown
            self._sizes[key] = size
        if self._shown is None and table.row_count:
            self._show(str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))
        elif changed_shown:
            self._show(self._shown)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.row_key is not None and event.row_key.value is not None:
            key = str(event.row_key.value)
            self.show_detail_soon(lambda: self._show(key))

    def _show(self, key: str | None) -> None:
        if key is None or key not in self._frames or self.ctx is None:
            return
        self._shown = key
        self.query_one(DetailPane).show(*timeline(self.ctx, self._frames[key]))

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        hits = []
        for frame in digest.recompiled_frames(ctx.run.model, ctx.scope):
            reasons = [r for c in frame.compiles for r in recompile_analysis.reasons_of(c)]
            if matches(query, frame.name, display_path(frame.filename, ctx.cwd), *reasons):
                first = reasons[0] if reasons else ""
                hits.append(SearchHit(self.view_id, frame_key(frame), f"recompile   {frame.name} ×{len(frame.compiles)}  {first}"))
        return hits

    def reveal(self, key: str) -> None:
        table = self.query_one(DataTable)
        if key in self._frames:
            table.move_cursor(row=table.get_row_index(key), animate=False)
            self._show(key)
        table.focus()

    def selected_location(self) -> Loc | None:
        if self._shown is None:
            return None
        f = self._frames[self._shown]
        return Loc(file=f.filename, line=def_line(f.filename, f.firstlineno), name=f.name)
