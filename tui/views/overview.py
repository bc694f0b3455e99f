"""Overview: the run's counts, compile time by stage, cache hits, the top offenders, a
compile-time sparkline over the run, and what could not be read."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Label, Sparkline, Static

from dyn_inspect.inspector.locations import def_file_line
from dyn_inspect.inspector.model import STAGES, CompileInfo
from dyn_inspect.inspector.reports import screens
from dyn_inspect.tui.display import display_loc, duration
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, View

MAX_PROBLEMS = 8


@dataclass
class Columns:
    """A table of one-line cells. Laid out here as one ``Text`` when it fits the width
    (rich's Table measured and drew each cell through the console two or three times: a
    fifth of the first frame), else as a rich Table, which wraps cells that do not fit."""

    justify: list[JustifyMethod]
    rows: list[list[Text]] = field(default_factory=list)
    header: list[str] | None = None
    title: Text | None = None
    edge: int = 0  # spaces before the first column and after the last
    gap: int = 2  # spaces between columns

    def add(self, *cells: str | Text) -> None:
        self.rows.append([c if isinstance(c, Text) else Text(c) for c in cells])

    def _all(self) -> list[list[Text]]:
        return ([[Text(h, style="bold") for h in self.header]] if self.header else []) + self.rows

    def widths(self) -> list[int]:
        rows = self._all()
        return [max((row[i].cell_len for row in rows), default=0) for i in range(len(self.justify))]

    def width(self) -> int:
        widths = self.widths()
        return sum(widths) + self.gap * (len(widths) - 1) + 2 * self.edge

    def text(self) -> Text:
        widths = self.widths()
        out = Text()
        if self.title is not None:
            out.append_text(self.title)
            out.append("\n")
        for n, row in enumerate(self._all()):
            if n:
                out.append("\n")
            out.append(" " * self.edge)
            for i, (cell, width, justify) in enumerate(zip(row, widths, self.justify, strict=True)):
                if i:
                    out.append(" " * self.gap)
                pad = " " * (width - cell.cell_len)
                if justify == "right":
                    out.append(pad)
                    out.append_text(cell)
                else:
                    out.append_text(cell)
                    out.append(pad)
            out.append(" " * self.edge)
        return out

    def table(self) -> Table:
        if self.header is None:
            t = Table.grid(padding=(0, self.gap))  # (collapsed: ``gap`` between columns)
        else:
            t = Table(title=self.title, title_justify="left", box=None, padding=(0, self.edge))
        for i, justify in enumerate(self.justify):
            t.add_column(self.header[i] if self.header else "", justify=justify)
        for row in self.rows:
            t.add_row(*row)
        return t


Part = Columns | Text


def render(parts: list[Part], width: int) -> RenderableType:
    """``parts`` one under the other: one Text when every table fits ``width``."""
    if all(not isinstance(p, Columns) or p.width() <= width for p in parts):
        out = Text()
        for n, part in enumerate(parts):
            if n:
                out.append("\n")
            out.append_text(part.text() if isinstance(part, Columns) else part)
        return out
    return Group(*(p.table() if isinstance(p, Columns) else p for p in parts))


def _counts(o: screens.Overview) -> list[Part]:
    t = Columns(["right", "left", "right", "left"])
    stage = ", ".join(f"{k} {duration(o.by_stage[k])}" for k in STAGES if k in o.by_stage) or "—"
    cache = o.cache
    cache_text = (
        f"fx {cache.get('fx hits', 0)} hit / {cache.get('fx misses', 0)} miss · "
        f"aot {cache.get('aot hits', 0)} hit / {cache.get('aot misses', 0)} miss"
    )
    rows = [
        (str(o.frames), "frames", str(o.compiles), "compiles"),
        (str(o.graphs), "graphs", str(o.kernels), "kernels"),
        (f"{o.breaks_unique} / {o.breaks_total}", "graph breaks (unique / total)", str(o.recompiles), "recompiles"),
        (str(o.limits_hit), "recompile limits hit", duration(o.compile_time), "compile time"),
    ]
    for a, la, b, lb in rows:
        t.add(Text(a, style="bold"), la, Text(b, style="bold"), lb)
    # A failed compile is in no other count: red when there is one (press 7).
    failed = "bold red" if o.failures else "bold"
    t.add(Text(str(o.failures), style=failed), Text("compile failures", style=failed if o.failures else ""), "", "")
    detail = Columns(["left", "left"])
    detail.add(Text("by stage", style="bold"), stage)
    detail.add(Text("caches", style="bold"), cache_text)
    # DDPOptimizer's cuts, beside the counts: the graphs count one graph per capture, and
    # these are no graph break of the user's code
    for split in o.ddp_splits:
        detail.add(Text("DDP split", style="bold"), split)
    if o.no_graph:  # before any count, as the summary says it: the counts read as a normal run
        return [Text(o.no_graph, style="bold red"), Text(""), t, Text(""), detail]
    return [t, Text(""), detail]


def _titled(title: str, columns: list[tuple[str, JustifyMethod]], style: str = "bold") -> Columns:
    return Columns([j for _, j in columns], header=[h for h, _ in columns], title=Text(title, style=style), edge=1)


def _offenders(o: screens.Overview, cwd: str | None) -> list[Part]:
    parts: list[Part] = []
    if o.top_failures:
        t = _titled("Compile failures", [("compile", "left"), ("location", "left"), ("failure", "left")], "bold red")
        for f in o.top_failures:
            t.add(f.cid, display_loc(f.user_loc, cwd), f"{f.fail_type}: {f.headline}")
        parts += [t, Text("")]
    if o.top_breaks:
        t = _titled("Top graph breaks", [("hits", "right"), ("location", "left"), ("type", "left")])
        for b in o.top_breaks:
            t.add(str(b.count), display_loc(b.loc, cwd), b.headline)
        parts.append(t)
    if o.top_recompiled:
        t = _titled("Most recompiled", [("compiles", "right"), ("function", "left"), ("location", "left")])
        for r in o.top_recompiled:
            where = def_file_line(r.filename, r.firstlineno, cwd)
            t.add(str(r.compiles), r.name + ("  [limit hit]" if r.limit_hit else ""), where)
        parts += [Text(""), t]
    if o.slowest:
        t = _titled("Slowest compiles", [("time", "right"), ("compile", "left"), ("function", "left")])
        for c in o.slowest:
            t.add(duration(c.seconds), c.cid, c.name)
        parts += [Text(""), t]
    if not parts:
        parts.append(Text("Nothing compiled yet.", style="dim"))
    return parts


class OverviewView(View):
    SCOPED_CSS = False  # the rules name the view's parts by id, as the app's CSS did
    DEFAULT_CSS = """
    #overview-spark { height: 2; margin: 0 1; }
    #overview-spark-axis { height: 1; margin: 0 1; color: $text-muted; }
    #spark-start { width: 1fr; }
    #spark-end { width: auto; }
    #overview-counts, #overview-cache, #overview-offenders, #overview-problems { padding: 0 1; }
    """
    view_id = "overview"
    HELP = (
        """
## Overview

The run at a glance: counts, compile time by stage, cache hits, the top offenders and
compile time over the run (sparkline). Press **2**–**7** for the other views.
"""
        + COMMON_KEYS
    )

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="overview-counts")
            yield Static(id="overview-cache")
            yield Label("Compile time over the run", classes="section")
            yield Sparkline([], id="overview-spark")
            with Horizontal(id="overview-spark-axis"):
                yield Label("", id="spark-start")
                yield Label("", id="spark-end")
            yield Static(id="overview-offenders")
            yield Static(id="overview-problems")

    def tab_label(self, ctx: Context) -> str:
        return "Overview"

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        o = screens.overview(ctx.run.model, ctx.scope)
        self.show(o, ctx.cwd)
        self._sync_cache(ctx)
        self.query_one("#overview-problems", Static).update(problems_text(ctx))

    def show(self, o: screens.Overview, cwd: str | None) -> None:
        """Draw ``o``: from the model (``sync``), or from a run's saved first screen before
        the run is read."""
        self._shown = (o, cwd)
        width = self._width()
        self.query_one("#overview-counts", Static).update(render(_counts(o), width))
        spark = self.query_one("#overview-spark", Sparkline)
        # Textual draws a flat series as full bars: show nothing until something compiled.
        has_data = bool(o.spark) and max(o.spark) > 0
        spark.display = has_data
        spark.data = o.spark if has_data else [0.0]
        self.query_one("#spark-start", Label).update("start" if o.span else "")
        self.query_one("#spark-end", Label).update(f"+{duration(o.span)}" if o.span else "")
        self.query_one("#overview-offenders", Static).update(render(_offenders(o, cwd), width))
        self._drawn_for = width

    def _width(self) -> int:
        """What the tables have: the screen's width less the padding and the scrollbar (the
        view has no size of its own before its first layout)."""
        return max(20, (self.size.width or self.app.size.width) - 4)

    def on_resize(self) -> None:
        shown = getattr(self, "_shown", None)
        if shown is not None and self._drawn_for != self._width():
            self.show(*shown)  # (the tables' layout depends on the width)

    def _sync_cache(self, ctx: Context) -> None:
        """Why a warm run still compiled (``reports.cache.cache_story``): re-read only when torch
        logged another cache lookup, since it loads each lookup's payload (70 KB for an FX
        graph key). A few are read at once; many (11k in a 1M-event run) in a thread, so
        that the overview's counts are on the screen first and keys keep working."""
        seen = (ctx.run.model.kinds.get("cache", 0), ctx.scope)
        if seen == getattr(self, "_cache_seen", None):
            return
        self._cache_seen = seen
        from dyn_inspect.inspector.reports.cache import unread_lookups

        memo = self.__dict__.setdefault("_cache_memo", {})  # compile → its lookups, read once
        # Taken now, under the app's lock (sync holds it): the thread reads this list only.
        compiles = [c for c in ctx.run.model.compiles_in_order() if c.capture is not None or c.caches]
        self._cache_generation = getattr(self, "_cache_generation", 0) + 1
        if unread_lookups(compiles, memo) <= READ_AT_ONCE:
            self._show_cache(self._cache_generation, _cache_story(ctx, compiles, memo))
        else:
            self._read_cache(self._cache_generation, ctx, compiles, memo)

    # (A description of our own: Textual would otherwise repr() every argument — the list
    # of 11k compiles took 1.7 s.)
    @work(thread=True, exclusive=True, group="overview-cache", description="reading cache payloads")
    def _read_cache(self, generation: int, ctx: Context, compiles: list[CompileInfo], memo: dict) -> None:
        story = _cache_story(ctx, compiles, memo)
        self.app.call_from_thread(self._show_cache, generation, story)

    def _show_cache(self, generation: int, story: Text) -> None:
        if generation == self._cache_generation:  # not overtaken by a newer read
            self.query_one("#overview-cache", Static).update(story)

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        return []


READ_AT_ONCE = 200  # cache lookups whose payloads are read before the overview is drawn


def _cache_story(ctx: Context, compiles: list[CompileInfo], memo: dict) -> Text:
    from dyn_inspect.inspector.reports.cache import cache_story

    lines = cache_story(ctx.run, memo, compiles, ctx.scope.has)
    out = Text()
    if lines:
        out.append("\n" + lines[0] + "\n", style="cyan")
        for line in lines[1:]:
            out.append("  " + line + "\n")
    return out


def problems_text(ctx: Context) -> RenderableType:
    """What was skipped while reading: corrupted or truncated lines, unknown event kinds."""
    problems = ctx.run.problems
    unknown = len(ctx.run.unknown)
    if not problems and not unknown:
        return Text("")
    out = Text("\nSkipped while reading the log\n", style="bold yellow")
    for p in problems[:MAX_PROBLEMS]:
        out.append(f"  {p}\n")
    if len(problems) > MAX_PROBLEMS:
        out.append(f"  … and {len(problems) - MAX_PROBLEMS} more\n")
    if unknown:
        kinds = sorted({e.kind for e in ctx.run.unknown})
        out.append(f"  {unknown} events of kinds this version does not know ({', '.join(kinds[:5])}) kept but not shown\n")
    return out
