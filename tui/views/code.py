"""Dynamo's code per compile (what depyf and tlparse show, tied to the user's lines): the
original and transformed bytecode side by side by source line, the resume functions a
graph break created and the user line each resumes at, and the guards one per line,
grouped by what they guard — the report layer's ``CodeReport`` (what ``code CID`` prints)."""

from __future__ import annotations

import itertools

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import DataTable

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.model import CompileInfo
from dyn_inspect.inspector.outputs import loc_of
from dyn_inspect.inspector.outputs.reports import CodeReport
from dyn_inspect.inspector.reports import screens
from dyn_inspect.inspector.reports.code import code_report, resumes_at
from dyn_inspect.tui.display import display_loc
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, beside_detail, matches
from dyn_inspect.tui.views.table import Cell, SplitView
from dyn_inspect.tui.widgets import DetailPane


def code_parts(cc: CodeReport, cwd: str | None) -> list[RenderableType]:
    """The pane's content for one compile."""
    parts: list[RenderableType] = [Text.assemble((cc.function, "bold"), ("  compile ", "dim"), cc.compile_id)]
    if cc.resume is not None:
        r = cc.resume
        loc = loc_of(r.loc)
        where = display_loc(loc, cwd) if loc else f"line {r.line}"
        code = f": {loc.code.split('  #')[0].strip()}" if loc and loc.code else ""
        parts.append(Text(f"resume function: runs the rest of `{r.function}` after the graph break at {where}{code}", style="cyan"))
    for r in cc.creates:
        loc = loc_of(r.loc)
        where = display_loc(loc, cwd) if loc else f"line {r.line}"
        parts.append(Text(f"its graph break at {where} created {r.name} (compiles {', '.join(r.compiles)})", style="cyan"))
    parts.append(Text(""))
    if not cc.blocks:
        parts.append(
            Text(
                "torch logs the original and transformed bytecode of resume functions only; this frame's original is its source.",
                style="dim",
            )
        )
    else:
        t = Table(box=None, pad_edge=False, header_style="bold")
        t.add_column("line", justify="right", no_wrap=True)
        t.add_column("original", no_wrap=True)
        t.add_column("transformed by Dynamo", no_wrap=True)
        for b in cc.blocks:
            t.add_row(str(b.line or "-"), Text(b.source or "", style="bold"), "")
            for o, m in itertools.zip_longest(b.original, b.modified):
                t.add_row("", o or "", m or "")
        parts.append(t)
    parts.append(Text(""))
    parts.append(Text(f"Guards ({cc.guard_count}), by what they guard", style="bold"))
    for group in cc.guards:
        parts.append(Text("  " + (group.source or "(global state)"), style="bold cyan"))
        for g in group.guards:
            parts.append(Text("    " + g))
    return parts


class CodeView(SplitView):
    view_id = "code"
    TABLE_ID = "code-table"
    DETAIL_ID = "code-detail"
    COLUMNS = (("Compile", "cid"), ("Function", "fn"), ("Resumes at", "at"), ("Bytecode", "bc"))
    EMPTY = "Nothing compiled yet."
    SCOPED_CSS = False  # (beside_detail: the narrow layout hangs on the screen's class)
    DEFAULT_CSS = beside_detail("code-table", "40%")
    HELP = (
        """
## Dynamo's code

Per compile: the original and the transformed bytecode side by side, by user source line
(torch logs them for resume functions); the resume functions a graph break created and the
user line each resumes at; the guards, one per line, grouped by what they guard.

- **↑/↓** select a compile · **o** open the line it resumes at (else the function) in `$EDITOR`
"""
        + COMMON_KEYS
    )

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._compiles: dict[str, CompileInfo] = {}
        self._scope: screens.Scope | None = None
        self._count = -1
        self._shown: CodeReport | None = None

    def tab_label(self, ctx: Context) -> str:
        return "Code"

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        done = [c for c in ctx.run.model.compiles_in_order() if c.capture is not None and ctx.scope.has(c.log)]
        if ctx.scope == self._scope and len(done) == self._count:
            return
        self._scope, self._count = ctx.scope, len(done)
        table = self.query_one(DataTable)
        table.clear()
        self._compiles.clear()
        for c in done:
            key = f"{c.log}|{c.cid}"
            self._compiles[key] = c
            name = c.capture.co_name if c.capture and c.capture.co_name else "?"
            at = resumes_at(name) or "-"
            table.add_row(Cell(c.cid), Cell(name), Cell(at), Cell("original + transformed" if c.bytecode else "-"), key=key)
        if table.row_count and self._shown is None:
            self._show(str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))

    def _show(self, key: str) -> None:
        c = self._compiles.get(key)
        if c is None or self.ctx is None:
            return
        self._shown = code_report(self.ctx.run, c)
        self.query_one(DetailPane).show(*code_parts(self._shown, self.ctx.cwd))

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        return [
            SearchHit(self.view_id, f"{c.log}|{c.cid}", f"code      {c.cid} {c.capture.co_name}")
            for c in ctx.run.model.compiles_in_order()
            if c.capture is not None and c.capture.co_name and ctx.scope.has(c.log) and matches(query, c.capture.co_name)
        ]

    def reveal(self, key: str) -> None:
        table = self.query_one(DataTable)
        if key in self._compiles:
            table.move_cursor(row=table.get_row_index(key), animate=False)
            self._show(key)
        table.focus()

    def selected_location(self) -> Loc | None:
        cc = self._shown
        if cc is None:
            return None
        resumed = loc_of(cc.resume.loc) if cc.resume is not None else None
        if resumed is not None:
            return resumed
        return Loc(file=cc.file, line=cc.line or 1, name=cc.function) if cc.file else None
