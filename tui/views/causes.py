"""Root causes (``inspector.reports.screens.cause_rows``, from ``inspector.analysis.causes``): the run's recompiles and graph breaks grouped
by what causes them, most expensive first, each with its one fix and where it goes.

On the bundled example the five batch-size recompiles (forward, three resume functions, a
helper) are one row, "`x.shape[0]` takes 16, 32 → 5 recompiles", whose fix is
``torch._dynamo.mark_dynamic(x, 0)`` at the line that makes ``x``; the detail pane shows
that line's source and every frame the cause made recompile.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
from rich.console import Group, RenderableType
from rich.text import Text
from textual import work
from textual.app import App
from textual.widgets import DataTable

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.outputs.reports import VerifyReport
from dyn_inspect.inspector.reports import screens
from dyn_inspect.inspector.reports.screens import CauseRow
from dyn_inspect.tui.display import display_loc
from dyn_inspect.tui.messages import LabelChanged
from dyn_inspect.tui.source import snippet
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, beside_detail, matches
from dyn_inspect.tui.views.table import Cell, SplitView
from dyn_inspect.tui.widgets import DetailPane

# Recompiles + unique breaks above which a finished run's causes are ranked in a thread.
RANK_IN_THREAD_ABOVE = 200


@dataclass
class Verdict:
    """What ``dyn-inspect verify --json`` said of a re-run (its typed VerifyReport, made by
    inspector/reports/verify.py): a cause is marked fixed only when the report is verified."""

    report: VerifyReport
    fixed: set[str] = field(default_factory=set)  # cause titles gone from the re-run
    remaining: set[str] = field(default_factory=set)

    @property
    def run_id(self) -> str:
        return Path(self.report.after_run).name

    @property
    def verified(self) -> bool:
        return self.report.state == "verified"

    @property
    def before(self) -> dict[str, float]:
        return msgspec.to_builtins(self.report.before)  # type: ignore[no-any-return]

    @property
    def after(self) -> dict[str, float]:
        return msgspec.to_builtins(self.report.after)  # type: ignore[no-any-return]

    def summary(self) -> str:
        counts = self.report.changes
        if not self.verified:
            return f"not verified — {self.report.reason} · re-run {self.run_id}: {counts}"
        return f"verified run {self.run_id}: {counts} · {len(self.fixed)} fixed, {len(self.remaining)} still there"


def run_verify(run_dir: Path, timeout_s: float = 1800.0) -> Verdict | str:
    """Re-runs the recorded program through the CLI (as the editor does), from the TUI's
    own directory: a Verdict, or the one line saying why not. A subprocess: the re-run
    must not share the TUI's process."""
    argv = [sys.executable, "-m", "dyn_inspect.cli", "verify", str(run_dir), "--json", "--runs-dir", str(run_dir.parent)]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s + 60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"verify failed: {exc}"
    if out.returncode not in (0, 1):  # 1: the re-run did not verify the fix, the report says why
        return (out.stderr.strip().splitlines() or [f"verify exited with {out.returncode}"])[-1]
    try:
        report = msgspec.json.decode(out.stdout, type=VerifyReport)
    except msgspec.DecodeError:
        return (out.stderr.strip().splitlines() or ["verify printed no verdict"])[-1]
    return Verdict(report, fixed={c.title for c in report.fixed}, remaining={c.title for c in report.remaining})


class CausesView(SplitView):
    SCOPED_CSS = False  # (beside_detail: the narrow layout hangs on the screen's class)
    DEFAULT_CSS = beside_detail("causes-table", "45%")
    view_id = "causes"
    TABLE_ID = "causes-table"
    DETAIL_ID = "cause-detail"
    COLUMNS = (
        ("#", "rank"),
        ("Cost", "cost"),
        ("Cause", "what"),
        ("Fix", "fix"),
    )
    EMPTY = "No recompile or graph break: nothing to fix."
    HELP = (
        """
## Root causes

The run's recompiles and graph breaks grouped by what causes them, most expensive first
(recompiles caused, then compile time, then graph fragments). One change that recompiles
several frames (the function, the code after its graph breaks, helpers) is one cause with
one fix, at the line that makes the variable.

- **↑/↓** select a cause; the fix, its line and every place it shows are on the right
- **o** open the fix's line in `$EDITOR`
- **v** verify: once you applied a fix, re-run the program under the recorder (as
  `dyn-inspect verify` does) and mark each cause "fixed ✓" or "still there after the fix"
"""
        + COMMON_KEYS
    )

    BINDINGS = [("v", "verify", "Verify the fix")]

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._causes: dict[str, CauseRow] = {}
        self._computed: tuple[int, int, screens.Scope] | None = None  # (model id, events, scope)
        self._ranking: tuple[int, int, screens.Scope] | None = None  # being ranked in a thread
        self._list: list[CauseRow] = []
        self._shown: str | None = None
        self.verdict: Verdict | None = None
        self.verifying = False

    def ranked(self, model: RunModel, scope: screens.Scope) -> list[CauseRow]:
        """The causes in ``scope``, computed again only when the run grew."""
        key = (id(model), model.event_count, scope)
        if self._computed != key:
            self._list = screens.cause_rows(model, scope)
            self._computed = key
        return self._list

    def tab_label(self, ctx: Context) -> str:
        model = ctx.run.model
        key = (id(model), model.event_count, ctx.scope)
        if self._computed != key and model.finished and len(model.recompiles) + len(model.breaks) > RANK_IN_THREAD_ABOVE:
            # A big finished run (its model no longer changes): ranked in a thread, so the
            # overview is on the screen first; the label says so until then.
            if self._ranking != key:
                self._ranking = key
                self._rank_in_thread(self.app, model, ctx.scope, key)
            return "Causes (…)"
        return f"Causes ({len(self.ranked(model, ctx.scope))})"

    @work(thread=True, exclusive=True, group="causes-rank", description="ranking causes")
    def _rank_in_thread(self, app: App[object], model: RunModel, scope: screens.Scope, key: tuple[int, int, screens.Scope]) -> None:
        # ``app`` is passed in: this view may not be mounted yet, and an unmounted widget
        # finds its app only on the UI thread.
        found = screens.cause_rows(model, scope)
        app.call_from_thread(self._ranked, key, found)

    def _ranked(self, key: tuple[int, int, screens.Scope], found: list[CauseRow]) -> None:
        if self._ranking != key:
            return  # overtaken (the scope changed meanwhile)
        self._list, self._computed = found, key
        self.app.post_message(LabelChanged("causes"))  # (this view may not be mounted yet)

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        table = self.query_one(DataTable)
        ranked = self.ranked(ctx.run.model, ctx.scope)
        keys = [c.key for c in ranked]
        if keys != list(self._causes):
            # the ranking moves as the run grows: rebuild (a run has few causes)
            table.clear()
            self._causes = dict(zip(keys, ranked, strict=True))
            for n, (key, c) in enumerate(self._causes.items(), start=1):
                fix = f"{c.fix.one_line}  ({display_loc(c.where, ctx.cwd)})" if c.fix is not None else "—"
                table.add_row(
                    Cell(str(n), n, justify="right"),
                    Cell(c.cost_label, c.cost),
                    Cell(c.title),
                    Cell(fix, style="bold green" if c.fix is not None else "dim"),
                    key=key,
                )
            if self._shown not in self._causes:
                self._shown = None
        else:
            self._causes = dict(zip(keys, ranked, strict=True))
        if self._shown is None and table.row_count:
            self._show(str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))

    def _show(self, key: str | None) -> None:
        if key is None or key not in self._causes:
            return
        self._shown = key
        c = self._causes[key]
        cwd = self.ctx.cwd if self.ctx else None
        head: list[RenderableType] = [Text(c.title, style="bold"), Text(c.detail, style="dim")]
        if self.verdict is not None and not self.verdict.verified:
            head.append(Text(f"not verified (re-run {self.verdict.run_id}): {self.verdict.report.reason}", style="bold red"))
        elif self.verdict is not None and c.title in self.verdict.fixed:
            head.append(Text(f"fixed ✓ (verified run {self.verdict.run_id})", style="bold green"))
        elif self.verdict is not None and c.title in self.verdict.remaining:
            head.append(Text(f"still there after the fix (verified run {self.verdict.run_id})", style="bold yellow"))
        if c.run_time is not None:
            head.append(Text(f"At run time: {c.run_time}"))
        if c.no_fix is not None:
            head.append(Text(c.no_fix.capitalize(), style="dim"))
        parts: list[RenderableType] = [Group(*head)]
        where = c.where
        if c.fix is not None and where is not None:
            parts.append(
                Text.assemble(
                    ("Fix: ", "bold green"),
                    (c.fix.one_line, "bold"),
                    f"  {c.fix.why}, {'at' if c.fix.replaces is not None else 'after'} line {c.fix.after_line}",
                )
            )
            parts.append(snippet(where, display_loc(where, cwd), context=3))
        elif where is not None:
            parts.append(snippet(where, display_loc(where, cwd), context=3))
        if len(c.sites) > 1 or c.fix is not None:
            shown = [Text("Shows at:", style="bold")]
            shown += [Text(f"  {display_loc(s, cwd)}  {s.name or ''}") for s in c.sites]
            parts.append(Group(*shown))
        self.query_one(DetailPane).show(*parts)

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        hits = []
        for c in self.ranked(ctx.run.model, ctx.scope):
            fix = c.fix.code if c.fix is not None else None
            if matches(query, c.title, c.detail, fix, *(Path(s.file).name for s in c.sites)):
                hits.append(SearchHit(self.view_id, c.key, f"cause     {c.title}" + (f"  fix: {fix}" if fix else "")))
        return hits

    def reveal(self, key: str) -> None:
        table = self.query_one(DataTable)
        if key in self._causes:
            table.move_cursor(row=table.get_row_index(key), animate=False)
            self._show(key)
        table.focus()

    def selected_location(self) -> Loc | None:
        if self._shown is None or self._shown not in self._causes:
            return None
        return self._causes[self._shown].where

    def action_verify(self) -> None:
        ctx = self.ctx
        if ctx is None or self.verifying:
            return
        model = ctx.run.model
        if model.run_start is None or model.run_start.mode == "import":
            self.app.notify("This run has no recorded command to re-run (an import).", severity="warning")
            return
        if model.run_end is None:
            self.app.notify("The run is still going: verify once it has ended.", severity="warning")
            return
        self.verifying = True
        self.app.notify("verify: re-running the program under the recorder…")
        self._verify(ctx.run.path)

    @work(thread=True, exclusive=True, group="verify")
    def _verify(self, run_dir: Path) -> None:
        result = run_verify(run_dir)
        self.app.call_from_thread(self._verified, result)

    def _verified(self, result: Verdict | str) -> None:
        self.verifying = False
        if isinstance(result, str):
            self.app.notify(result, severity="error", timeout=10)
            return
        self.verdict = result
        self.app.notify(result.summary(), severity="information" if result.verified else "error", timeout=15)
        self._show(self._shown)
