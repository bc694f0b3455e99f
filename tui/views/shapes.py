"""Dynamic shapes (tlparse's "symbolic shape specializations", tied to the user's line):
one row per symbol torch created — the input dim it stands for, its example value, whether
it stayed dynamic or was specialized to a constant, and the line that did either; beside it
the compile's story: which line specialized which dim, and its shape guards as the user
would write them (``inspector.reports.screens.shapes``: ``shapes --json``'s answer)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widgets import DataTable

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.outputs import loc_of
from dyn_inspect.inspector.outputs.reports import CompileShapes, ShapeSymbol
from dyn_inspect.inspector.reports import screens
from dyn_inspect.tui.display import display_loc
from dyn_inspect.tui.source import snippet
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, beside_detail, matches
from dyn_inspect.tui.views.table import Cell, SplitView
from dyn_inspect.tui.widgets import DetailPane


def _row_key(cs: CompileShapes, index: int) -> str:
    return f"{cs.log}|{cs.compile_id}|{index}"


def _rows(cs: CompileShapes) -> list[ShapeSymbol | None]:
    """What the table lists for a compile, and so what the tab counts: one row per symbol,
    or one (None) for a compile with shape guards only."""
    return list(cs.symbols) or [None]


class ShapesView(SplitView):
    view_id = "shapes"
    TABLE_ID = "shapes-table"
    DETAIL_ID = "shapes-detail"
    COLUMNS = (
        ("Compile", "cid"),
        ("Function", "fn"),
        ("Dim", "dim"),
        ("Sym", "sym"),
        ("Example", "value"),
        ("State", "state"),
        ("Line", "line"),
    )
    EMPTY = "No dynamic shapes: every compile was static."
    SCOPED_CSS = False  # (beside_detail: the narrow layout hangs on the screen's class)
    DEFAULT_CSS = beside_detail("shapes-table", "55%")
    HELP = (
        """
## Dynamic shapes

Every symbol torch created for an input dim (`dynamic=True`, `mark_dynamic`, or automatic
dynamic after a recompile): its example value, whether it stayed **dynamic** or became
**static** (specialized to a constant), and the user line responsible. The pane shows the
compile's specializations with the line that caused each, and its shape guards.

- **↑/↓** select a symbol · **o** open its line (the specializing line for a static dim)
"""
        + COMMON_KEYS
    )

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._rows: dict[str, tuple[CompileShapes, ShapeSymbol | None]] = {}
        self._scope: screens.Scope | None = None
        self._shown: str | None = None
        self._signature: tuple[int, ...] = ()
        self._label_seen: tuple[int, screens.Scope] | None = None
        self._label = "Shapes (0)"

    def _found(self, ctx: Context, tree: bool = False) -> list[CompileShapes]:
        """``tree``: mark which shape guards torch installed (reads each guard tree: only
        when the rows are rebuilt, not at every live update)."""
        return screens.shapes(ctx.run.model, ctx.scope, ctx.cwd, ctx.run if tree else None)

    def tab_label(self, ctx: Context) -> str:
        # Every tab's label is refreshed on each live update: count only when the run grew.
        kinds = ctx.run.model.kinds
        seen = (kinds.get("symbol", 0) + kinds.get("specialization", 0) + kinds.get("shape_guard", 0), ctx.scope)
        if seen != self._label_seen:
            self._label_seen = seen
            # The rows the table lists (it said "Shapes (0)" over 8 rows: it counted specializations)
            self._label = f"Shapes ({sum(len(_rows(cs)) for cs in self._found(ctx))})"
        return self._label

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        # A live run's compiles only grow: rebuild when any count changed.
        signature = screens.shapes_signature(ctx.run.model, ctx.scope)
        if ctx.scope == self._scope and signature == self._signature:
            return
        self._scope, self._signature = ctx.scope, signature
        found = self._found(ctx, tree=True)
        table = self.query_one(DataTable)
        table.clear()
        self._rows.clear()
        for cs in found:
            for index, s in enumerate(_rows(cs)):  # guards only: one row for the compile
                key = _row_key(cs, index)
                self._rows[key] = (cs, s)
                if s is None:
                    table.add_row(
                        Cell(cs.compile_id),
                        Cell(cs.function),
                        Cell("-"),
                        Cell("-"),
                        Cell("-"),
                        Cell(f"{sum(1 for g in cs.guards if g.installed is not False)} guards"),
                        Cell("-"),
                        key=key,
                    )
                    continue
                if s.specialized:
                    state = Cell(f"static = {s.static_value}", style="bold yellow")
                    loc = loc_of(s.static_loc)
                else:
                    state = Cell("dynamic", style="green")
                    loc = loc_of(s.loc)
                where = display_loc(loc, ctx.cwd) if loc else "-"
                table.add_row(
                    Cell(cs.compile_id),
                    Cell(cs.function),
                    Cell(s.name),
                    Cell(s.symbol),
                    Cell(s.value or "?"),
                    state,
                    Cell(where, (loc.file, loc.line) if loc else ("", 0)),
                    key=key,
                )
        self.show_kept_row(self._shown if self._shown in self._rows else None)

    def _show(self, key: str | None) -> None:
        if key is None or key not in self._rows:
            return
        self._shown = key
        cs, s = self._rows[key]
        cwd = self.ctx.cwd if self.ctx else None
        parts: list[RenderableType] = []
        head = Text.assemble((cs.function, "bold"), ("  compile ", "dim"), cs.compile_id)
        if cs.automatic_dynamic:
            head.append("  automatic dynamic (after a recompile)", style="cyan")
        parts.append(head)
        if s is not None:
            line = Text.assemble((s.name, "bold"), f" is {s.symbol}", (f"  example {s.value}  range {s.range or '?'}", "dim"))
            parts.append(line)
            created = loc_of(s.loc)
            if created is not None:
                parts.append(Text(f"created while tracing {display_loc(created, cwd)}", style="dim"))
        for spec in cs.specializations:
            at = loc_of(spec.loc)
            parts.append(Text(""))
            parts.append(Text("Specialized: " + spec.text, style="yellow"))
            if at is not None and (s is None or s.symbol == spec.symbol):
                parts.append(snippet(at, display_loc(at, cwd), context=3))
        if cs.accepts:
            parts.append(Text(""))
            parts.append(Text("Reused for sizes (the guard tree)", style="bold"))
            parts.append(Group(*(Text.assemble(("  " + d.name, ""), ("   " + d.text, "")) for d in cs.accepts)))
        installed = [g for g in cs.guards if g.installed is not False]  # (every guard when no tree was recorded)
        for title, guards in (
            ("Shape guards", installed),
            (
                "Logged while compiling, not in the guard tree (never checked when the code runs)",
                [g for g in cs.guards if g.installed is False],
            ),
        ):
            if not guards:
                continue
            parts.append(Text(""))
            parts.append(Text(title, style="bold" if guards is installed else "bold dim"))
            rows = []
            for g in guards:
                at = loc_of(g.loc)
                origin = display_loc(at, cwd) if at else "added by the compiler"
                rows.append(Text.assemble(("  " + g.readable, ""), ("   " + origin, "dim"), ("   " + g.expr, "dim italic")))
            parts.append(Group(*rows))
        self.query_one(DetailPane).show(*parts)

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        hits = []
        for cs in self._found(ctx):
            for index, s in enumerate(cs.symbols):
                if matches(query, s.name, s.symbol, s.source, cs.function):
                    state = f"static = {s.static_value}" if s.specialized else "dynamic"
                    hits.append(SearchHit(self.view_id, _row_key(cs, index), f"shape     {cs.compile_id} {s.name} {state}"))
        return hits

    def reveal(self, key: str) -> None:
        self.reveal_row(key, key in self._rows)

    def selected_location(self) -> Loc | None:
        if self._shown is None:
            return None
        cs, s = self._rows[self._shown]
        if s is not None and s.specialized and s.static_loc is not None:
            return loc_of(s.static_loc)
        return loc_of(s.loc) if s is not None else None
