"""The header's two lines — the command, the run's state and elapsed time; the environment,
the rank selector and the run's directory — and the rank scope the selector sets
(``HeaderMixin``, a part of ``InspectorApp``). What they say is the inspector's
(``inspector/reports/screens.py``: ``run_state``, ``command_line``, ``environment_text``,
``elapsed``, ``scope_for_rank``); this part puts it on the screen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label

from dyn_inspect.inspector.reader import safe_name
from dyn_inspect.inspector.reports import screens
from dyn_inspect.tui.app_state import AppState
from dyn_inspect.tui.display import duration
from dyn_inspect.tui.view_list import VIEW_IDS
from dyn_inspect.tui.views.base import Context

if TYPE_CHECKING:
    from textual.widgets import Select

ALL_RANKS = -1  # the selector's value for "all ranks"

HEADER_CSS = """
#header { height: 2; background: $panel; padding: 0 1; }
#header-line1, #header-line2 { height: 1; }
#header-command { width: 1fr; text-style: bold; }
#header-state { width: auto; padding: 0 1; }
#header-elapsed { width: auto; padding: 0 1; color: $text-muted; }
#header-env { width: 1fr; color: $text-muted; }
#header-run { width: auto; color: $text-muted; }
#rank-select { width: 24; height: 1; }
.state-running { color: $success; }
.state-compiling { color: $accent; text-style: bold; }
.state-starting { color: $text-muted; }
.state-finished { color: $success; text-style: bold; }
.state-crashed, .state-killed { color: $error; text-style: bold; }
.state-exited { color: $warning; text-style: bold; }
"""


def compose_header() -> ComposeResult:
    """The header's widgets (the rank selector is mounted later, for a run of two ranks)."""
    with Horizontal(id="header-line1"):
        yield Label("", id="header-command")
        yield Label("", id="header-state")
        yield Label("", id="header-elapsed")
    with Horizontal(id="header-line2"):
        yield Label("", id="header-env")
        # (the rank selector is mounted here for a run of two ranks or more)
        yield Label("", id="header-run")


class HeaderMixin(AppState):
    def _sync_header(self, ctx: Context) -> None:
        model = ctx.run.model
        child = self.child
        state = screens.run_state(model, self.scope, child.exit_code if child is not None else None, child is not None and child.alive)
        self._show_header(screens.command_line(model, safe_name(ctx.run.path.name)), state, screens.environment_text(model))
        self._show_elapsed()
        ranks = model.ranks()
        if ranks != self._ranks:
            self._ranks = ranks
            options = [("all ranks", ALL_RANKS), *((f"rank {r}", r) for r in ranks)]
            value = self.scope.rank if self.scope.rank is not None else ALL_RANKS
            select = self._rank_select()
            if select is None and len(ranks) > 1:
                from textual.widgets import Select

                select = Select(options, prompt="rank", allow_blank=False, value=value, id="rank-select", compact=True)
                self.query_one("#header-line2", Horizontal).mount(select, before="#header-run")
            elif select is not None:
                select.set_options(options)
                select.value = value
                select.display = len(ranks) > 1

    def _show_header(self, command: str, state: screens.RunState, env: str) -> None:
        self.query_one("#header-command", Label).update(Text(f"dyn-inspect  {command}"))
        self._set_state(state)
        self.query_one("#header-env", Label).update(Text(env))
        # (the run directory's name is the run's too: `ESC c` in it reset the terminal)
        self.query_one("#header-run", Label).update(Text(f"run {safe_name(self.run_path.name)}"))

    def _rank_select(self) -> Select[int] | None:
        """The rank selector, once the run has two ranks (a Select is costly to mount)."""
        for select in self.query("#rank-select"):
            return select  # type: ignore[return-value]
        return None

    def _header_label(self, selector: str) -> Label | None:
        """A header label, or None while the screen is not (or no longer) mounted: timers
        and follower messages can arrive during start-up and shutdown."""
        for label in self.query(selector).results(Label):
            return label
        return None

    def _set_state(self, state: screens.RunState) -> None:
        label = self._header_label("#header-state")
        if label is None:
            return
        marker = {"compiling": "◐", "running": "●", "starting": "○"}.get(state.kind, "■")
        label.update(Text(f"{marker} {state.label}"))
        for kind in ("starting", "compiling", "running", "finished", "exited", "crashed", "killed"):
            label.set_class(kind == state.kind, f"state-{kind}")

    def _tick(self) -> None:
        """The elapsed time, twice a second. Skipped while the follower is applying events
        (the model's dicts may be growing); the next tick catches up."""
        if self.loaded_run is None or not self.lock.acquire(blocking=False):
            return
        try:
            self._show_elapsed()
        finally:
            self.lock.release()

    def _show_elapsed(self) -> None:
        assert self.loaded_run is not None
        seconds = screens.elapsed(self.loaded_run.model, self.clock())
        label = self._header_label("#header-elapsed")
        if label is not None:
            label.update(duration(seconds) if seconds is not None else "")

    # -- the rank scope ----------------------------------------------------------------------

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id != "rank-select" or self.loaded_run is None or not isinstance(event.value, int):
            return  # Select.NULL: nothing chosen
        rank = None if event.value == ALL_RANKS else event.value
        if rank == self.scope.rank:
            return
        with self.lock:
            self.scope = screens.scope_for_rank(self.loaded_run.model, rank)
        self._stale.update(VIEW_IDS)
        self._sync()

    def action_next_rank(self) -> None:
        """Cycle all ranks → rank 0 → rank 1 → … (only when the run has several)."""
        if len(self._ranks) < 2:
            return
        order: list[int | None] = [None, *self._ranks]
        self.set_rank(order[(order.index(self.scope.rank) + 1) % len(order)])

    def set_rank(self, rank: int | None) -> None:
        select = self._rank_select()
        if select is not None:
            select.value = ALL_RANKS if rank is None else rank
