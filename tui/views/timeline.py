"""The compile timeline: every compile in the order it happened — compiled, recompiled (the
guard that failed), served from the cache, or fell back to eager — and, beside it, where
the selected compile's time went as torch's own nested spans (entire frame → backend →
AOTAutograd → Inductor → codegen / C++ compile / autotuning) instead of a flat per-stage
sum — laid out from the report layer's ``CompileTimelineRow`` and ``TimeSpan``
(``inspector/reports/timeline.py``), shapes and cache lookups as ``shapes`` and ``cache``
give them."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import DataTable

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.outputs.reports import CompileTimelineRow, TimeSpan
from dyn_inspect.inspector.reports import screens
from dyn_inspect.inspector.reports.cache import compile_lookups
from dyn_inspect.inspector.reports.shapes import compile_shapes_of
from dyn_inspect.inspector.reports.timeline import compile_spans, compile_timeline
from dyn_inspect.tui.display import duration
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, beside_detail, matches
from dyn_inspect.tui.views.table import Cell, SplitView
from dyn_inspect.tui.widgets import DetailPane

# torch's span names, in words (the others are shown as torch names them)
SPAN_WORDS = {
    "dynamo": "Dynamo (whole frame)",
    "entire_frame_compile": "entire frame",
    "bytecode_tracing": "Dynamo tracing the bytecode",
    "backend_compile": "backend (AOTAutograd + Inductor)",
    "create_aot_dispatcher_function": "AOTAutograd",
    "aot_collect_metadata": "AOTAutograd metadata",
    "inductor_compile": "Inductor",
    "compile_fx.<locals>.fw_compiler_base": "Inductor forward",
    "compile_fx.<locals>.bw_compiler": "Inductor backward",
    "fx_codegen_and_compile": "Inductor lowering + codegen",
    "AOTAutogradCache.inductor_load": "loaded from the AOTAutograd cache",
    "PyCodeCache.load_by_key_path": "loading the generated module",
    "compile_file": "C++ compiler",
    "async_compile.wait": "waiting for kernel compiles",
    "build_guards": "building guards",
    "inductor_codecache_torch_key": "hashing torch (cache key)",
}
MIN_SHARE = 0.01  # spans under 1 % of the compile are left out of the breakdown
MAX_DEPTH = 9


def breakdown_table(spans: list[TimeSpan]) -> RenderableType:
    """A compile's spans as an indented table: name, seconds, share of the compile."""
    if not spans:
        return Text("torch recorded no timing spans for this compile", style="dim")
    t = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    # The figures keep their width on a narrow pane; the names are cut instead.
    t.add_column("where the time went", no_wrap=True, overflow="ellipsis", max_width=48)
    t.add_column("s    share", justify="right", no_wrap=True, min_width=12)
    for span in spans:
        if span.depth > MAX_DEPTH or span.share < MIN_SHARE:
            continue
        label = SPAN_WORDS.get(span.name, span.name)
        if span.cache_state is not None:
            label += f"  [cache {span.cache_state}]"
        if span.unfinished:
            label += "  (unfinished)"
        t.add_row(Text("  " * span.depth + label), f"{span.seconds:.3f}  {100 * span.share:>4.0f}%")
    return t


class TimelineView(SplitView):
    view_id = "timeline"
    TABLE_ID = "timeline-table"
    DETAIL_ID = "timeline-detail"
    COLUMNS = (
        ("Time", "t"),
        ("Compile", "cid"),
        ("Function", "fn"),
        ("What happened", "what"),
        ("Cache", "cache"),
        ("Took", "s"),
    )
    EMPTY = "Nothing compiled yet."
    SCOPED_CSS = False  # (beside_detail: the narrow layout hangs on the screen's class)
    DEFAULT_CSS = beside_detail("timeline-table", "50%")
    HELP = (
        """
## Compile timeline

Every compile in the order it happened: **compiled**, **recompiled** (with the guard that
failed), served by the **cache**, or **fell back to eager** (a failure, the recompile
limit, nothing to compile). The pane shows where the selected compile's time went, as
torch's nested spans: entire frame → Dynamo tracing → backend → AOTAutograd → Inductor →
codegen / C++ compiler / autotuning, and each cache lookup with torch's reason.

- **↑/↓** select a compile · **o** open its function in `$EDITOR`
"""
        + COMMON_KEYS
    )

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._entries: dict[str, CompileTimelineRow] = {}
        self._scope: screens.Scope | None = None
        self._seen = -1
        self._shown: str | None = None
        self._spans: dict[tuple[str, str], list[TimeSpan]] = {}
        self._final: set[tuple[str, str]] = set()  # compiles finished when their spans were read

    def tab_label(self, ctx: Context) -> str:
        return f"Timeline ({sum(1 for c in ctx.run.model.compiles.values() if ctx.scope.has(c.log))})"

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        count = ctx.run.model.event_count
        if ctx.scope == self._scope and count == self._seen:
            return
        self._scope, self._seen = ctx.scope, count
        table = self.query_one(DataTable)
        table.clear()
        self._entries.clear()
        for e in compile_timeline(ctx.run):
            if not ctx.scope.has(e.log):
                continue
            key = f"{e.log}|{e.compile_id}"
            self._entries[key] = e
            style = "yellow" if e.what.startswith("recompiled") else "red" if "eager" in e.what else ""
            cache_style = {"hit": "green", "bypass": "yellow", "miss": ""}.get(e.cache, "dim")
            table.add_row(
                Cell(f"+{duration(e.t)}", e.t, justify="right"),
                Cell(e.compile_id),
                Cell(e.function),
                Cell(e.what, style=style),
                Cell(e.cache if e.cache != "none" else "-", style=cache_style),
                Cell(duration(e.seconds), e.seconds, justify="right"),
                key=key,
            )
        self.show_kept_row(self._shown if self._shown in self._entries else None)

    def _breakdown(self, log: str, cid: str) -> list[TimeSpan]:
        """The compile's spans. Reading them is a pass over the logs (seconds on a 100k-event
        run): done again only for a compile that was still compiling at the last pass — a
        finished compile's spans never change (the lazily compiled backward may still come)."""
        assert self.ctx is not None
        key = (log, cid)
        if key not in self._final:
            self._spans = compile_spans(self.ctx.run)
            model = self.ctx.run.model
            finished = self.ctx.run.model.finished
            self._final = {
                k
                for k, c in model.compiles.items()
                if c.capture is not None and (finished or c.backward is not None or not c.graph("aot_fw"))
            }
        return self._spans.get(key, [])

    def _show(self, key: str | None) -> None:
        if key is None or key not in self._entries or self.ctx is None:
            return
        self._shown = key
        e = self._entries[key]
        c = self.ctx.run.model.compiles.get((e.log, e.compile_id))
        parts: list[RenderableType] = [Text.assemble((e.function, "bold"), ("  compile ", "dim"), e.compile_id, ("  " + e.what, "bold"))]
        if e.why:
            parts.append(Text(("failed guard: " if e.is_recompile else "") + e.why, style="yellow"))
        if c is not None:
            shapes = compile_shapes_of(c, self.ctx.cwd)
            if shapes.automatic_dynamic:  # why the recompile will not recompile again for new sizes
                dims = ", ".join(f"{s.name} ({s.symbol})" for s in shapes.symbols if not s.specialized)
                parts.append(Text(f"automatic dynamic: {dims} now dynamic", style="cyan"))
            for spec in shapes.specializations:
                parts.append(Text("specialized: " + spec.text, style="yellow"))
            for lk in compile_lookups(self.ctx.run, c):
                parts.append(Text(lk.text, style={"hit": "green", "bypass": "yellow"}.get(lk.state, "")))
        parts.append(Text(""))
        spans = self._breakdown(e.log, e.compile_id)
        # The compile's time is the figure the row, Recompiles and the summary give
        # (CompileInfo.compile_time_s, torch's compile metrics); torch's spans may cover less
        # (a lazily compiled backward), so their sum is said as such, never as the total.
        parts.append(Text.assemble(("compile time ", "bold"), duration(e.seconds)))
        covered = sum(sp.seconds for sp in spans if sp.depth == 0)
        if spans and abs(covered - e.seconds) > 0.05 * max(e.seconds, 1e-9):
            parts.append(Text(f"torch's timing spans below cover {duration(covered)} of it", style="dim"))
        parts.append(breakdown_table(spans))
        self.query_one(DetailPane).show(*parts)

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        return [
            SearchHit(self.view_id, f"{e.log}|{e.compile_id}", f"timeline  {e.compile_id} {e.function} {e.what}")
            for e in compile_timeline(ctx.run)
            if ctx.scope.has(e.log) and matches(query, e.function, e.what, e.why)
        ]

    def reveal(self, key: str) -> None:
        self.reveal_row(key, key in self._entries)

    def selected_location(self) -> Loc | None:
        if self._shown is None:
            return None
        e = self._entries[self._shown]
        if e.file is None:
            return None
        return Loc(file=e.file, line=e.line or 1, name=e.function)
