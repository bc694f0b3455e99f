"""The compile timeline: every compile in the order it happened — compiled, recompiled (the
guard that failed), served from the cache, or fell back to eager — and, beside it, where
the selected compile's time went as torch's own nested spans (entire frame → backend →
AOTAutograd → Inductor → codegen / C++ compile / autotuning) instead of a flat per-stage
sum (``inspector.analysis.timeline``)."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import DataTable

from dyn_inspect.inspector.analysis.cache import compile_cache
from dyn_inspect.inspector.analysis.shapes import shapes_of
from dyn_inspect.inspector.analysis.timeline import SpanNode, TimelineEntry, compile_breakdowns, timeline_entries
from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.reports import screens
from dyn_inspect.tui.display import display_loc, duration
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, matches
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


def breakdown_table(roots: list[SpanNode]) -> RenderableType:
    """A compile's spans as an indented table: name, seconds, share of the compile."""
    if not roots:
        return Text("torch recorded no timing spans for this compile", style="dim")
    total = sum(r.dur for r in roots) or 1.0
    t = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    # The figures keep their width on a narrow pane; the names are cut instead.
    t.add_column("where the time went", no_wrap=True, overflow="ellipsis", max_width=48)
    t.add_column("s    share", justify="right", no_wrap=True, min_width=12)
    for root in roots:
        for depth, node in root.walk():
            if depth > MAX_DEPTH or node.dur / total < MIN_SHARE:
                continue
            label = SPAN_WORDS.get(node.name, node.name)
            state = node.args.get("cache_state")
            if isinstance(state, str):
                label += f"  [cache {state}]"
            if node.unfinished:
                label += "  (unfinished)"
            t.add_row(Text("  " * depth + label), f"{node.seconds:.3f}  {100 * node.dur / total:>4.0f}%")
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
    DEFAULT_CSS = """
    #timeline-table { width: 50%; }
    """
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
        self._entries: dict[str, TimelineEntry] = {}
        self._scope: screens.Scope | None = None
        self._seen = -1
        self._shown: str | None = None
        self._spans: dict[tuple[str, str], list[SpanNode]] = {}
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
        for e in timeline_entries(ctx.run):
            if not ctx.scope.has(e.compile.log):
                continue
            key = f"{e.compile.log}|{e.compile.cid}"
            self._entries[key] = e
            style = "yellow" if e.what.startswith("recompiled") else "red" if "eager" in e.what else ""
            cache_style = {"hit": "green", "bypass": "yellow", "miss": ""}.get(e.cache, "dim")
            table.add_row(
                Cell(f"+{duration(e.t)}", e.t, justify="right"),
                Cell(e.compile.cid),
                Cell(e.function),
                Cell(e.what, style=style),
                Cell(e.cache if e.cache != "none" else "-", style=cache_style),
                Cell(duration(e.seconds), e.seconds, justify="right"),
                key=key,
            )
        self.show_kept_row(self._shown if self._shown in self._entries else None)

    def _breakdown(self, log: str, cid: str) -> list[SpanNode]:
        """The compile's spans. Reading them is a pass over the logs (seconds on a 100k-event
        run): done again only for a compile that was still compiling at the last pass — a
        finished compile's spans never change (the lazily compiled backward may still come)."""
        assert self.ctx is not None
        key = (log, cid)
        if key not in self._final:
            self._spans = compile_breakdowns(self.ctx.run)
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
        c = e.compile
        parts: list[RenderableType] = [Text.assemble((e.function, "bold"), ("  compile ", "dim"), c.cid, ("  " + e.what, "bold"))]
        if e.why:
            parts.append(Text(("failed guard: " if c.recompile else "") + e.why, style="yellow"))
        shapes = shapes_of(c)
        if shapes.automatic_dynamic:  # why the recompile will not recompile again for new sizes
            dims = ", ".join(f"{s.name} ({s.symbol})" for s in shapes.dynamic)
            parts.append(Text(f"automatic dynamic: {dims} now dynamic", style="cyan"))
        for spec in shapes.specializations:
            parts.append(Text("specialized: " + spec.describe(display_loc(spec.loc, self.ctx.cwd) if spec.loc else None), style="yellow"))
        for lk in compile_cache(self.ctx.run, c).lookups:
            parts.append(Text(lk.describe(), style={"hit": "green", "bypass": "yellow"}.get(lk.state, "")))
        parts.append(Text(""))
        roots = self._breakdown(c.log, c.cid)
        # The compile's time is the figure the row, Recompiles and the summary give
        # (CompileInfo.compile_time_s, torch's compile metrics); torch's spans may cover less
        # (a lazily compiled backward), so their sum is said as such, never as the total.
        parts.append(Text.assemble(("compile time ", "bold"), duration(c.compile_time_s)))
        covered = sum(r.seconds for r in roots)
        if roots and abs(covered - c.compile_time_s) > 0.05 * max(c.compile_time_s, 1e-9):
            parts.append(Text(f"torch's timing spans below cover {duration(covered)} of it", style="dim"))
        parts.append(breakdown_table(roots))
        self.query_one(DetailPane).show(*parts)

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        return [
            SearchHit(self.view_id, f"{e.compile.log}|{e.compile.cid}", f"timeline  {e.compile.cid} {e.function} {e.what}")
            for e in timeline_entries(ctx.run)
            if ctx.scope.has(e.compile.log) and matches(query, e.function, e.what, e.why)
        ]

    def reveal(self, key: str) -> None:
        self.reveal_row(key, key in self._entries)

    def selected_location(self) -> Loc | None:
        if self._shown is None:
            return None
        cap = self._entries[self._shown].compile.capture
        if cap is None or not cap.co_filename:
            return None
        return Loc(file=cap.co_filename, line=cap.co_firstlineno or 1, name=cap.co_name)
