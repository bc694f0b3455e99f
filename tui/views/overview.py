"""Overview: the run's counts, compile time by stage, cache hits, the top offenders, a
compile-time sparkline over the run, and what could not be read."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Label, Sparkline, Static

from dyn_inspect.inspector.locations import def_line
from dyn_inspect.inspector.model import CompileInfo
from dyn_inspect.tui import digest
from dyn_inspect.tui.display import display_loc, display_path, duration
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, View

MAX_PROBLEMS = 8


def _counts(o: digest.Overview) -> Table:
    t = Table.grid(padding=(0, 2))
    t.add_column(justify="right", style="bold")
    t.add_column()
    t.add_column(justify="right", style="bold")
    t.add_column()
    stage = ", ".join(f"{k} {duration(o.by_stage[k])}" for k in digest.STAGES if k in o.by_stage) or "—"
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
        t.add_row(a, la, b, lb)
    # A failed compile is in no other count: red when there is one (press 7).
    failed = "bold red" if o.failures else ""
    t.add_row(Text(str(o.failures), style=failed), Text("compile failures", style=failed), "", "")
    detail = Table.grid(padding=(0, 2))
    detail.add_column(style="bold")
    detail.add_column()
    detail.add_row("by stage", stage)
    detail.add_row("caches", cache_text)
    outer = Table.grid()
    outer.add_row(t)
    outer.add_row(Text(""))
    outer.add_row(detail)
    return outer


def _offenders(o: digest.Overview, cwd: str | None) -> RenderableType:
    parts: list[RenderableType] = []
    if o.top_failures:
        t = Table(title="Compile failures", title_justify="left", title_style="bold red", box=None, padding=(0, 1))
        t.add_column("compile")
        t.add_column("location")
        t.add_column("failure")
        for f in o.top_failures:
            t.add_row(Text(f.cid), Text(display_loc(f.user_loc, cwd)), Text(f"{f.fail_type}: {f.headline}"))
        parts.append(t)
        parts.append(Text(""))
    if o.top_breaks:
        t = Table(title="Top graph breaks", title_justify="left", title_style="bold", box=None, padding=(0, 1), expand=False)
        t.add_column("hits", justify="right")
        t.add_column("location")
        t.add_column("type")
        for b in o.top_breaks:
            t.add_row(str(b.count), Text(display_loc(b.loc, cwd)), Text(b.gb_type))
        parts.append(t)
    if o.top_recompiled:
        t = Table(title="Most recompiled", title_justify="left", title_style="bold", box=None, padding=(0, 1))
        t.add_column("compiles", justify="right")
        t.add_column("function")
        t.add_column("location")
        for r in o.top_recompiled:
            where = f"{display_path(r.filename, cwd)}:{def_line(r.filename, r.firstlineno)}"
            limit = "  [limit hit]" if r.limit_hit else ""
            t.add_row(str(r.compiles), Text(r.name + limit), Text(where))
        parts.append(Text(""))
        parts.append(t)
    if o.slowest:
        t = Table(title="Slowest compiles", title_justify="left", title_style="bold", box=None, padding=(0, 1))
        t.add_column("time", justify="right")
        t.add_column("compile")
        t.add_column("function")
        for c in o.slowest:
            t.add_row(duration(c.seconds), Text(c.cid), Text(c.name))
        parts.append(Text(""))
        parts.append(t)
    if not parts:
        parts.append(Text("Nothing compiled yet.", style="dim"))
    return Group(*parts)


class OverviewView(View):
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
        o = digest.overview(ctx.run.model, ctx.scope)
        self.show(o, ctx.cwd)
        self._sync_cache(ctx, o.by_stage.get("dynamo", 0.0))
        self.query_one("#overview-problems", Static).update(problems_text(ctx))

    def show(self, o: digest.Overview, cwd: str | None) -> None:
        """Draw ``o``: from the model (``sync``), or from a run's saved first screen before
        the run is read."""
        self.query_one("#overview-counts", Static).update(_counts(o))
        spark = self.query_one("#overview-spark", Sparkline)
        # Textual draws a flat series as full bars: show nothing until something compiled.
        has_data = bool(o.spark) and max(o.spark) > 0
        spark.display = has_data
        spark.data = o.spark if has_data else [0.0]
        self.query_one("#spark-start", Label).update("start" if o.span else "")
        self.query_one("#spark-end", Label).update(f"+{duration(o.span)}" if o.span else "")
        self.query_one("#overview-offenders", Static).update(_offenders(o, cwd))

    def _sync_cache(self, ctx: Context, dynamo_s: float) -> None:
        """Why a warm run still compiled (``analysis.cache``): re-read only when torch
        logged another cache lookup, since it loads each lookup's payload (70 KB for an FX
        graph key). A few are read at once; many (11k in a 1M-event run) in a thread, so
        that the overview's counts are on the screen first and keys keep working."""
        seen = (ctx.run.model.kinds.get("cache", 0), ctx.scope)
        if seen == getattr(self, "_cache_seen", None):
            return
        self._cache_seen = seen
        from dyn_inspect.inspector.analysis.cache import unread_lookups

        memo = self.__dict__.setdefault("_cache_memo", {})  # compile → its lookups, read once
        # Taken now, under the app's lock (sync holds it): the thread reads this list only.
        compiles = [c for c in ctx.run.model.compiles_in_order() if c.capture is not None or c.caches]
        self._cache_generation = getattr(self, "_cache_generation", 0) + 1
        if unread_lookups(compiles, memo) <= READ_AT_ONCE:
            self._show_cache(self._cache_generation, _cache_story(ctx, compiles, memo, dynamo_s))
        else:
            self._read_cache(self._cache_generation, ctx, compiles, memo, dynamo_s)

    # (A description of our own: Textual would otherwise repr() every argument — the list
    # of 11k compiles took 1.7 s.)
    @work(thread=True, exclusive=True, group="overview-cache", description="reading cache payloads")
    def _read_cache(self, generation: int, ctx: Context, compiles: list[CompileInfo], memo: dict, dynamo_s: float) -> None:
        story = _cache_story(ctx, compiles, memo, dynamo_s)
        self.app.call_from_thread(self._show_cache, generation, story)

    def _show_cache(self, generation: int, story: Text) -> None:
        if generation == self._cache_generation:  # not overtaken by a newer read
            self.query_one("#overview-cache", Static).update(story)

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        return []


READ_AT_ONCE = 200  # cache lookups whose payloads are read before the overview is drawn


def _cache_story(ctx: Context, compiles: list[CompileInfo], memo: dict, dynamo_s: float) -> Text:
    from dyn_inspect.inspector.analysis.cache import CacheReport, cache_report

    report = CacheReport([cc for cc in cache_report(ctx.run, memo, compiles).compiles if ctx.scope.has(cc.compile.log)])
    lines = report.story(dynamo_s)
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
