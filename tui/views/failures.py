"""Compile failures (tlparse's "Failures and Restarts"): every compile torch gave up on — a
``fullgraph=True`` break, a backend exception — deduplicated by cause and user line, with
the source at that line and torch's exception text (``inspector.reports.screens.failure_site_rows``)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.reports import screens
from dyn_inspect.inspector.reports.screens import FailureSiteRow
from dyn_inspect.tui.display import display_loc
from dyn_inspect.tui.source import snippet
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, beside_detail, matches
from dyn_inspect.tui.views.table import Cell, TableView
from dyn_inspect.tui.widgets import DetailPane


class FailuresView(TableView[FailureSiteRow]):
    SCOPED_CSS = False  # (beside_detail: the narrow layout hangs on the screen's class)
    DEFAULT_CSS = beside_detail("failures-table", "45%")
    view_id = "failures"
    HELP = (
        """
## Compile failures

Compiles torch gave up on (a `fullgraph=True` graph break, a backend exception): the frame
ran eagerly, or the exception reached the program. One row per cause and user line.

- **↑/↓** select a failure; its source line and torch's exception text show on the right
- **o** open the line in `$EDITOR`
"""
        + COMMON_KEYS
    )

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield DataTable(id="failures-table", cursor_type="row", zebra_stripes=True)
            yield DetailPane(id="failure-detail", classes="detail")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("Location", key="loc")
        table.add_column("Count", key="count")
        table.add_column("Function", key="fn")
        table.add_column("Failure", key="what")
        self.query_one(DetailPane).show(Text("No compile failed.", style="dim"))

    def tab_label(self, ctx: Context) -> str:
        return f"Failures ({sum(s.count for s in screens.failure_site_rows(ctx.run.model, ctx.scope))})"

    def rows(self, ctx: Context) -> Iterable[tuple[str, FailureSiteRow, int]]:
        return ((site.key, site, site.count) for site in screens.failure_site_rows(ctx.run.model, ctx.scope))

    def row_cells(self, ctx: Context, site: FailureSiteRow, version: int) -> list[Cell]:
        f = site
        where = display_loc(f.user_loc, ctx.cwd)
        return [
            Cell(where, (f.user_loc.file, f.user_loc.line) if f.user_loc else ("", 0)),
            self.version_cell(ctx, site, version),
            Cell(f.function),
            Cell(f"{f.fail_type}: {f.headline}"),
        ]

    def version_cell(self, ctx: Context, site: FailureSiteRow, version: int) -> Cell:
        return Cell(str(site.count), -site.count, justify="right")

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        self.sync_rows(ctx)
        if self._shown is None:
            self._show_key(self.selected_key())

    def show(self, key: str) -> None:
        f = site = self._items[key]
        cwd = self.ctx.cwd if self.ctx else None
        parts: list[RenderableType] = []
        if f.user_loc is not None:
            title = display_loc(f.user_loc, cwd) + ("  (the function's def: torch named no line)" if f.at_def else "")
            parts.append(snippet(f.user_loc, title))
        info: list[RenderableType] = [Text.assemble((f.fail_type, "bold red"), ("  in ", "dim"), (f.function, "bold"))]
        info.append(Text(f"failed {site.count}× · compiles {', '.join(site.compile_ids)}", style="dim"))
        info.append(Text(""))
        info.append(Text(f.reason or "(torch gave no message)"))
        parts.append(Group(*info))
        self.query_one(DetailPane).show(*parts)

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        hits = []
        for f in screens.failure_site_rows(ctx.run.model, ctx.scope):
            where = display_loc(f.user_loc, ctx.cwd)
            if matches(query, where, f.function, f.fail_type, f.reason):
                hits.append(SearchHit(self.view_id, f.key, f"failure   {where}  {f.fail_type}: {f.headline}"))
        return hits

    def selected_location(self) -> Loc | None:
        if self._shown is None:
            return None
        return self._items[self._shown].user_loc
