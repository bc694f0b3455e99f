"""Graph breaks: the deduplicated table (location, type, count, gb id) and, for the selected
break, the source around its line, torch's explanation, hints and link, and the user stack
(selecting a frame shows that frame's source)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Label, OptionList
from textual.widgets.option_list import Option

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.locations import is_library
from dyn_inspect.inspector.model import BreakGroup
from dyn_inspect.inspector.reports import screens
from dyn_inspect.tui.display import display_loc
from dyn_inspect.tui.source import snippet
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, beside_detail, matches
from dyn_inspect.tui.views.table import Cell, TableView
from dyn_inspect.tui.widgets import DetailPane


class BreaksView(TableView[BreakGroup]):
    SCOPED_CSS = False  # (beside_detail: the narrow layout hangs on the screen's class)
    DEFAULT_CSS = beside_detail("breaks-left", "45%", "#breaks-table { height: 1fr; }\n#break-stack { height: 1fr; border: none; }\n")
    view_id = "breaks"
    HELP = (
        """
## Graph breaks

Each row is one break site (type + line), with how many times it was hit.

- **↑/↓** select a break; its source, explanation and hints show on the right
- **tab** move to the user stack (below the table); select a frame to see its source
- **o** open the selected line in `$EDITOR`
"""
        + COMMON_KEYS
    )

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._stack: list[Loc] = []
        self._frame: Loc | None = None
        self._source: RenderableType = Text("")
        self._info: RenderableType = Text("")

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="breaks-left"):
                yield DataTable(id="breaks-table", cursor_type="row", zebra_stripes=True)
                yield Label("User stack (outermost first)", classes="section")
                yield OptionList(id="break-stack")
            yield DetailPane(id="break-detail", classes="detail")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("Location", key="loc")
        table.add_column("Count", key="count")
        table.add_column("GB id", key="gb")
        table.add_column("Type", key="type")
        self.query_one(DetailPane).show(Text("No graph breaks recorded (yet).", style="dim"))

    def tab_label(self, ctx: Context) -> str:
        n = len(screens.break_groups(ctx.run.model, ctx.scope))
        return f"Graph breaks ({n})"

    def rows(self, ctx: Context) -> Iterable[tuple[str, BreakGroup, int]]:
        return ((group.key, group, count) for group, count in screens.break_groups(ctx.run.model, ctx.scope))

    def row_cells(self, ctx: Context, group: BreakGroup, version: int) -> list[Cell]:
        row = screens.break_site_row(group, version)
        return [
            Cell(display_loc(row.loc, ctx.cwd), (row.loc.file, row.loc.line)),
            self.version_cell(ctx, group, version),
            Cell(row.gb_id or ""),
            Cell(row.headline),
        ]

    def version_cell(self, ctx: Context, group: BreakGroup, version: int) -> Cell:
        return Cell(str(version), -version, justify="right")  # the hit count

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        changed = self.sync_rows(ctx)
        if changed:
            # Most hit first, then by location; the cursor stays on the break it was on.
            table = self.query_one(DataTable)
            selected = self.selected_key()
            table.sort("count", "loc")
            if selected is not None:
                table.move_cursor(row=table.get_row_index(selected), animate=False)
        if self._shown is None:
            self._show_key(self.selected_key())
        elif changed:
            self._render_info()

    def show(self, key: str) -> None:
        row = screens.break_site_row(self._items[key], self._versions.get(key, 0))
        self._frame = row.loc
        self._stack = row.stack
        self._source = self._snippet(self._frame)
        self._render_info()
        stack = self.query_one("#break-stack", OptionList)
        stack.clear_options()
        cwd = self.ctx.cwd if self.ctx else None
        options = []
        for i, frame in enumerate(self._stack):
            style = "dim" if is_library(frame.file) else ""
            label = Text.assemble((f"{display_loc(frame, cwd)}", style or "bold"), ("  in ", "dim"), (frame.name or "?", style))
            if frame.code:
                label.append(f"\n    {frame.code}", style="dim")
            options.append(Option(label, id=str(i)))
        stack.add_options(options)

    def _snippet(self, loc: Loc) -> RenderableType:
        cwd = self.ctx.cwd if self.ctx else None
        return snippet(loc, display_loc(loc, cwd))

    def _render_source(self, loc: Loc) -> None:
        self._source = self._snippet(loc)
        self.query_one(DetailPane).show(self._source, self._info)

    def _render_info(self) -> None:
        if self._shown is None:
            return
        group = self._items[self._shown]
        b = screens.break_site_row(group, self._versions.get(self._shown, group.count))
        parts: list[RenderableType] = []
        title = Text.assemble((b.headline, "bold red"))
        if b.gb_id:
            title.append(f"  {b.gb_id}", style="bold")
        parts.append(title)
        if b.gb_type and b.gb_type != b.headline:
            parts.append(Text(f"torch: {b.gb_type}", style="dim"))
        parts.append(Text(f"hit {b.count}× · compiles {', '.join(b.compile_ids)}", style="dim"))
        if b.torch_loc != self._frame:
            cwd = self.ctx.cwd if self.ctx else None
            parts.append(Text(f"torch reports the break at {display_loc(b.torch_loc, cwd)}", style="dim"))
        if b.reason:
            parts.append(Text.assemble(("\nReason  ", "bold"), b.reason.strip()))
        if b.explanation:
            parts.append(Text.assemble(("\nExplanation  ", "bold"), b.explanation.strip()))
        if b.context:
            parts.append(Text.assemble(("\nDebug context  ", "bold"), b.context.strip()))
        if b.hints:
            parts.append(Text("\nHints", style="bold"))
            for hint in b.hints:
                parts.append(Text(f"  • {hint.strip()}"))
        if b.url:
            link = Text("\nDocs  ", style="bold")
            link.append(b.url, style=f"underline link {b.url}")
            parts.append(link)
        self._info = Group(*parts)
        self.query_one(DetailPane).show(self._source, self._info)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option_id is None:
            return
        index = int(event.option_id)
        if 0 <= index < len(self._stack):
            frame = self._frame = self._stack[index]
            self.show_detail_soon(lambda: self._render_source(frame))

    # -- search / reveal / open -------------------------------------------------------------

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        hits = []
        for b in screens.break_site_rows(ctx.run.model, ctx.scope):
            where = display_loc(b.loc, ctx.cwd)
            if matches(query, where, b.gb_type, b.gb_id, b.reason, b.explanation, b.context, *b.hints):
                hits.append(SearchHit(self.view_id, b.key, f"break   {where}  {b.headline} ×{b.count}"))
        return hits

    def selected_location(self) -> Loc | None:
        stack = self.query_one("#break-stack", OptionList)
        if stack.has_focus and stack.highlighted is not None and stack.highlighted < len(self._stack):
            return self._stack[stack.highlighted]
        return self._frame
