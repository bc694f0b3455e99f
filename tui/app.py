"""The dyn-inspect TUI: a Textual app over one run, live (``run_live``: the program runs in
a child process while its compiles appear) or opened afterwards (``run_open``).

Structure (memray's live TUI): background threads own the slow or blocking work — the
``RunFollower`` polls the run's logs, ``ChildProcess`` pumps the program's pty — and post
messages; the app reads the shared model under a lock and brings the visible view up to
date incrementally. Hidden views are marked stale and caught up when shown, so the cost
of an update is the visible view's.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Label, TabbedContent, TabPane

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.events import Loc, read_tail
from dyn_inspect.inspector.reader import safe_name
from dyn_inspect.inspector.reports import screens
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui import last_frame
from dyn_inspect.tui._textual_hacks import DisplayHook, full_frame_text
from dyn_inspect.tui.display import display_loc, duration, run_cwd
from dyn_inspect.tui.follow import OutputBuffer, RunFollower
from dyn_inspect.tui.messages import ChildExited, LabelChanged, LoadFailed, OutputAvailable, RunLoaded, RunUpdated
from dyn_inspect.tui.view_bar import ViewBar
from dyn_inspect.tui.view_list import TITLES, VIEW_IDS, VIEWS
from dyn_inspect.tui.views.base import Context, SearchHit, View

if TYPE_CHECKING:  # the launcher (and the recorder it imports) only where a run starts
    from rich.console import RenderableType
    from textual.widgets import Select

    from dyn_inspect.engine.launcher import Launch, LaunchSpec
    from dyn_inspect.tui.child import ChildProcess
    from dyn_inspect.tui.first_screen import FirstScreen, Opening
    from dyn_inspect.tui.views.output import OutputView


def view_class(view_id: str) -> type[View]:
    """The class of a tab's view, its module imported now if it was not."""
    module, name = next(v.where for v in VIEWS if v.id == view_id).split(":")
    cls: type[View] = getattr(importlib.import_module(f"dyn_inspect.tui.views.{module}"), name)
    return cls


ALL_RANKS = -1
FREEZE_EVERY = 20_000  # events: how much a live model grows before it is frozen again

CSS = """
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
TabbedContent { height: 1fr; }
TabPane { padding: 0; }
View { height: 1fr; }
DataTable { overflow-x: hidden; }
.section { color: $text-muted; text-style: bold; margin-top: 1; }
ConfirmScreen, SearchScreen { align: center middle; }
#confirm { width: 64; height: auto; border: round $warning; background: $surface; padding: 1 2; }
#confirm-buttons { height: auto; margin-top: 1; }
#confirm-buttons Button { margin-right: 1; }
#search { width: 90%; height: 80%; border: round $accent; background: $surface; padding: 0 1; }
#search-input { border: none; height: 1; margin-bottom: 1; }
#search-count { color: $text-muted; }
#search-results { height: 1fr; }
/* Under 110 columns a table beside its detail pane left the causes' titles 17 characters
   (80x24): the pair is stacked instead, the table above at full width (each view's
   DEFAULT_CSS sizes its own parts for the narrow screen). */
.-narrow View > Horizontal { layout: vertical; }
"""


class InspectorApp(DisplayHook[int]):
    """One run, live or finished. ``exit_code`` is what ``dyn-inspect`` returns on quit."""

    CSS = CSS
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # (the screen's class, for CSS above)
    TITLE = "dyn-inspect"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        *(Binding(v.key, f"show('{v.id}')", v.title, show=False) for v in VIEWS if v.key),
        Binding("/", "search", "Search"),
        Binding("o", "open_editor", "Open in $EDITOR"),
        Binding("e", "export", "Export"),
        Binding("?", "toggle_help", "Keys"),
        Binding("r", "next_rank", "Rank", show=False),
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "interrupt", "Stop program", show=False, priority=True),
    ]

    def __init__(
        self,
        run_path: Path,
        *,
        run: Run | None = None,
        first_screen: FirstScreen | None = None,
        launch: Launch | None = None,
        clock: Callable[[], float] = time.time,
        initial_view: str = "overview",
        poll_interval: float = 0.1,
        cursor_blink: bool = True,
    ) -> None:
        super().__init__()
        self.cursor_blink = cursor_blink  # off for snapshots: a blinking cursor is not deterministic
        self.run_path = Path(run_path)
        self.loaded_run: Run | None = None
        self._preloaded = run
        self.launch = launch
        self.clock = clock
        self.initial_view = initial_view if initial_view in VIEW_IDS else "overview"
        # The overview drawn before the run is read (``run_open``), when no ``run`` is given.
        self.first_screen = first_screen if run is None and self.initial_view == "overview" else None
        self.poll_interval = poll_interval
        self.lock = threading.Lock()
        self.output_buffer = OutputBuffer()
        self.child: ChildProcess | None = None
        # a signal that ends the program came from outside (a supervisor's SIGTERM, the
        # terminal's SIGHUP): the app quits when the program has ended, without waiting for q
        self.quit_when_child_exits = False
        self.early_signals: list[int] = []  # sent to the program once it is started (run_live)
        self.follower: RunFollower | None = None
        self.scope = screens.ALL
        self.exit_code = 0
        self._stale: set[str] = set(VIEW_IDS)
        self._ranks: list[int] = []
        self._ranks_tab = True  # hidden at the first sync of a run without ranks
        self._cost_tab = True  # hidden at the first sync of a run without --profile
        self.load_error: str | None = None
        self._exporting = False
        self._frozen_at = 0
        self.synced_events = -1  # the model's event count when the views were last synced (tests, bench)
        self._frame_spot: last_frame.Spot | None = None

    # -- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="header-line1"):
            yield Label("", id="header-command")
            yield Label("", id="header-state")
            yield Label("", id="header-elapsed")
        with Horizontal(id="header-line2"):
            yield Label("", id="header-env")
            # (the rank selector is mounted here for a run of two ranks or more)
            yield Label("", id="header-run")
        yield ViewBar(id="view-bar")
        # Every view exists from the start (its tab's label is its own), but only the first
        # one shown is mounted, and the program's output while it runs live: laying out
        # twelve views' widgets took half the time to the first frame. The others are
        # mounted the first time they are shown (``show_view``; the output pane keeps what
        # is written to it before).
        # (Views are made, their modules imported, when first needed: ``view``.)
        self._views: dict[str, View] = {}
        with TabbedContent(initial=self.initial_view):
            for view_id, title, *_ in VIEWS:
                with TabPane(title, id=view_id):
                    if view_id == self.initial_view or (view_id == "output" and self.launch is not None):
                        yield self.view(view_id)

    def view(self, view_id: str) -> View:
        """The view of a tab, mounted or not (``search`` and ``tab_label`` read the run,
        not the view's widgets); made the first time it is asked for."""
        view = self._views.get(view_id)
        if view is None:
            cls = view_class(view_id)
            if view_id == "output":
                view = cls(id=f"view-{view_id}", interactive=self.launch is not None)  # type: ignore[call-arg]
            else:
                view = cls(id=f"view-{view_id}")
            self._views[view_id] = view
        return view

    def mounted(self, view_id: str) -> bool:
        view = self._views.get(view_id)
        return view is not None and view.is_mounted

    async def show_view(self, view_id: str) -> View:
        """Make the view's tab the active one, mounted (the first time it is shown) and up
        to date."""
        view = await self._mount_view(view_id)
        tabs = self.query_one(TabbedContent)
        if tabs.active != view_id:
            tabs.active = view_id
        if view_id in self._stale:
            self._sync()
        return view

    async def _mount_view(self, view_id: str) -> View:
        view = self.view(view_id)
        if not view.is_mounted:
            await self.query_one(f"TabPane#{view_id}", TabPane).mount(view)
            self._stale.add(view_id)
        return view

    @property
    def output_view(self) -> OutputView:
        from dyn_inspect.tui.views.output import OutputView

        view = self.view("output")
        assert isinstance(view, OutputView)
        return view

    @property
    def active_view(self) -> str:
        return self.query_one(TabbedContent).active or "overview"

    def on_mount(self) -> None:
        # Textual's driver has the terminal now (a frame replayed by cli.main is under ours):
        # it leaves the alternate screen itself when the app stops.
        last_frame.hand_over()
        self.query_one("#header-command", Label).update(Text(f"dyn-inspect  {safe_name(self.run_path.name)}"))
        self._set_state(screens.RunState("starting", "loading…" if self._preloaded is None else "starting"))
        if self.launch is not None:
            self._start_child()
        elif not (self.run_path / "output.log").exists():
            self.call_after_refresh(self._show_stderr_tail)  # (after the first frame: the output view is not on it)
        self.follower = RunFollower(
            self,
            self.run_path,
            self.lock,
            run=self._preloaded,
            interval=self.poll_interval,
            output=self.output_buffer if self.launch is None else None,
        )
        if self._preloaded is not None:
            self._loaded(self._preloaded)
        elif self.first_screen is not None:
            self._show_first_screen(self.first_screen)
        else:
            self.query_one(TabbedContent).loading = True
        # Read the logs once the first frame is on screen (the reading thread competes for the GIL).
        self.call_after_refresh(self.follower.start)
        self.call_after_refresh(self._collect_again)
        self.set_interval(0.5, self._tick)
        self.call_after_refresh(lambda: self._focus_view(self.active_view))

    def keep_first_frame(self, spot: last_frame.Spot) -> None:
        """Keep what this app writes for its first frame, for the next ``dyn-inspect open``
        of the run to replay at once (tui/last_frame.py)."""
        self._frame_spot = spot

    def on_terminal_write(self, renderable: RenderableType) -> None:
        spot = self._frame_spot
        if spot is not None:
            self._frame_spot = None
            self.call_later(self._keep_frame, spot, renderable)

    def _keep_frame(self, spot: last_frame.Spot, renderable: RenderableType) -> None:
        """The first frame, if Textual drew the whole screen at once (else nothing is kept)."""
        width, height = self.size
        frame = None if self.is_headless else full_frame_text(renderable, width, height, self.console)
        if frame is not None:
            last_frame.keep(spot, width, height, frame)

    def _collect_again(self) -> None:
        """`dyn-inspect open` and the live run start with the cyclic GC off (cli/commands):
        on again once the first frame is drawn. What start-up made (modules, classes, the
        screen's widgets) lives as long as the app: frozen first, else the first collection
        walks all of it while the first frame is still being written (+0.1 s to it)."""
        gc.freeze()
        gc.enable()

    def _show_first_screen(self, screen: FirstScreen) -> None:
        """The run's saved header and overview, while the run itself is read behind them."""
        self._show_header(screen.command, screen.state, screen.env)
        elapsed = self._header_label("#header-elapsed")
        if elapsed is not None and screen.elapsed is not None:
            elapsed.update(duration(screen.elapsed))
        if len(screen.ranks) < 2:
            self._ranks_tab = False
            self.query_one(TabbedContent).hide_tab("ranks")
        self._cost_tab = False  # until the run read says it was profiled
        self.query_one(TabbedContent).hide_tab("cost")
        from dyn_inspect.tui.views.overview import OverviewView  # (the first view: imported already)

        overview = self.view("overview")
        assert isinstance(overview, OverviewView)
        overview.show(screen.overview, screen.cwd)

    def _show_stderr_tail(self) -> None:
        tail = read_tail(self.run_path)  # --no-tui keeps the stderr tail (engine/stderr_tail.py)
        if tail is None:
            self.output_view.show_notice("The program's output was not recorded (it ran without the live TUI).")
        else:
            self.output_view.show_notice("The program ran without the live TUI: the end of its stderr was kept.")
            self.output_view.write_bytes(tail.encode() + (b"" if tail.endswith("\n") else b"\n"))

    def on_unmount(self) -> None:
        if self.follower is not None:
            self.follower.stop()
        if self.child is not None and self.child.exit_code is None:
            self.exit_code = self.child.stop_and_wait()

    # -- the program -----------------------------------------------------------------------

    def _start_child(self) -> None:
        from dyn_inspect.tui.child import ChildProcess  # (only a live run has a child)

        assert self.launch is not None
        self.child = ChildProcess(self.launch, self, self.output_buffer)
        width, height = self.size
        try:
            self.child.start(columns=max(20, width - 2), rows=max(5, height - 8))
        except OSError as exc:
            command = self.launch.spec.command[0]
            self.output_view.show_notice(f"cannot start {command}: {exc.strerror or exc}")
            self.exit_code = self.child.finish(127)
            self.output_view.set_interactive(False)
        early, self.early_signals = self.early_signals, []
        for signum in early:
            self.child.signal(signum)

    def on_output_available(self, _message: OutputAvailable) -> None:
        data = self.output_buffer.drain()
        if data:
            self.output_view.write_bytes(data)

    def on_child_exited(self, message: ChildExited) -> None:
        assert self.child is not None
        self.exit_code = self.child.finish(message.returncode)
        data = self.output_buffer.drain()
        if data:
            self.output_view.write_bytes(data)
        self.output_view.set_interactive(False)
        self.output_view.show_notice(f"[dyn-inspect: the program exited with code {self.exit_code} — press q to quit]")
        if self.follower is not None and self.loaded_run is not None:
            self.follower.poll()  # read run_end now rather than at the next tick
        self._sync()
        self.notify(f"Program exited with code {self.exit_code}.", severity="information" if self.exit_code == 0 else "warning")
        if self.quit_when_child_exits:
            self.exit(None)

    # (Handlers by name, not ``@on(OutputView.StdinLine)``: the output view's module is
    # imported only when the view is first needed.)
    def on_output_view_stdin_line(self, message: OutputView.StdinLine) -> None:
        if self.child is not None:
            self.child.write(message.text.encode() + b"\n")

    def on_output_view_stdin_eof(self, _message: OutputView.StdinEOF) -> None:
        if self.child is not None:
            self.child.send_eof()

    def on_resize(self, event: object) -> None:
        if self.child is not None and self.child.alive:
            width, height = self.size
            self.child.resize(max(20, width - 2), max(5, height - 8))

    # -- the run ---------------------------------------------------------------------------

    def on_run_loaded(self, message: RunLoaded) -> None:
        self._loaded(message.run)

    def _loaded(self, run: Run) -> None:
        self.loaded_run = run
        # The run's model is a large, long-lived heap (a 100k-event run is millions of
        # objects): move it out of the cyclic GC's reach so that full collections do not
        # freeze the screen for a few hundred milliseconds while scrolling.
        gc.freeze()
        self._frozen_at = run.model.event_count
        self.query_one(TabbedContent).loading = False
        self._sync(all_views=False)
        self.call_after_refresh(self._mount_footer)
        self.call_after_refresh(self._make_views)
        if self.first_screen is None and run.from_index:
            self.call_after_refresh(self._save_first_screen, run)
        with self.lock:
            problems = run.problems
        if problems:
            self.notify(f"Skipped {len(problems)} unreadable line(s) of the log — see the overview.", severity="warning", timeout=8)

    def _save_first_screen(self, run: Run) -> None:
        """Save the first screen of a finished run opened from its index without one (an
        index written by the language server, or by an older dyn-inspect): the next open
        draws it before reading the run."""
        from dyn_inspect.tui import first_screen

        with self.lock:
            if first_screen.load(run.path) is None:
                first_screen.save(run)

    def _make_views(self) -> None:
        """Every view, once the first frame is on the screen: their tab labels count what
        they show (their modules' imports took a fifth of the time to the first frame)."""
        if len(self._views) < len(VIEWS):
            for view_id in VIEW_IDS:
                self.view(view_id)
            self._sync()

    def _mount_footer(self) -> None:
        """The key bar, once the run is on the screen: Textual's Footer builds a widget per
        key and rebuilds them at every change of focus, which cost a fifth of the time to
        the first overview with data."""
        from textual.widgets import Footer

        if not self.query(Footer):
            self.mount(Footer())

    def on_label_changed(self, message: LabelChanged) -> None:
        if self.loaded_run is None:
            return
        self._stale.add(message.view_id)
        self._sync()

    def on_load_failed(self, message: LoadFailed) -> None:
        self.query_one(TabbedContent).loading = False
        self._mount_footer()
        if self.loaded_run is None and self.launch is None:
            # Nothing to show (e.g. a log from a newer dyn-inspect): leave with one line.
            self.load_error = message.error
            self.exit(None, return_code=2)
            return
        self._set_state(screens.RunState("crashed", "cannot read the run"))
        self.notify(message.error, severity="error", timeout=30)

    def on_run_updated(self, _message: RunUpdated) -> None:
        if self.follower is not None:
            self.follower.handled()
        self._stale.update(VIEW_IDS)
        self._sync()
        if self.loaded_run is not None and self.loaded_run.model.event_count - self._frozen_at > FREEZE_EVERY:
            gc.freeze()  # a live run's model grew: keep the collector off it too
            self._frozen_at = self.loaded_run.model.event_count

    def context(self) -> Context:
        assert self.loaded_run is not None
        return Context(self.loaded_run, self.scope, run_cwd(self.loaded_run.model))

    def _sync(self, all_views: bool = False) -> None:
        """Bring the header, the tab labels and the visible view up to date."""
        if self.loaded_run is None:
            return
        with self.lock:
            ctx = self.context()
            model = ctx.run.model
            self._sync_header(ctx)
            tabs = self.query_one(TabbedContent)
            for view_id, title, *_ in VIEWS:
                # A view not made yet has its plain title (``_make_views`` follows the first frame).
                view = self._views.get(view_id)
                tabs.get_tab(view_id).label = Text(view.tab_label(ctx) if view is not None else title)
            if (len(model.ranks()) > 1) != self._ranks_tab:
                self._ranks_tab = not self._ranks_tab
                (tabs.show_tab if self._ranks_tab else tabs.hide_tab)("ranks")
            if bool(model.step_profiles) != self._cost_tab:
                self._cost_tab = not self._cost_tab
                (tabs.show_tab if self._cost_tab else tabs.hide_tab)("cost")
            self._show_view_bar()
            targets = VIEW_IDS if all_views else [self.active_view]
            for view_id in targets:
                if not self.mounted(view_id):
                    continue  # synced when first shown
                if view_id in self._stale and view_id != "output":
                    self.view(view_id).sync(ctx)
                self._stale.discard(view_id)
            self.synced_events = model.event_count

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

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        from textual.widgets import Input

        if not self.cursor_blink and isinstance(event.widget, Input):
            event.widget.cursor_blink = False

    @on(TabbedContent.TabActivated)
    async def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        view_id = event.pane.id
        if view_id is None or view_id not in TITLES:
            return
        # The tab is active already (a click, or ``show_view``): never set it again here,
        # the active tab may have moved on since this message was sent.
        await self._mount_view(view_id)
        self._show_view_bar()
        if view_id in self._stale and view_id == self.active_view:
            self._sync()

    def _show_view_bar(self) -> None:
        """The narrow screen's list of views (``ViewBar``): the tabs shown, as labelled now."""
        tabs = self.query_one(TabbedContent)
        shown = [
            (v.id, v.key, str(tabs.get_tab(v.id).label))
            for v in VIEWS
            if (v.id != "ranks" or self._ranks_tab) and (v.id != "cost" or self._cost_tab)
        ]
        self.query_one(ViewBar).show_views(shown, self.active_view)

    # -- actions -----------------------------------------------------------------------------

    def _focus_view(self, view_id: str) -> None:
        """Focus the view's main widget. (Leaving focus inside the previous tab would make
        TabbedContent switch back to it.)"""
        from textual.widgets import DataTable, OptionList, Tree

        view = self.view(view_id)
        target: Widget | None = None
        if view_id == "output":
            stdin = view.query_one("#stdin")
            target = stdin if stdin.display else view.query_one("#output-log")
        else:
            for widget_type in (DataTable, Tree, OptionList):
                found = list(view.query(widget_type))
                if found:
                    target = found[0]
                    break
            else:
                target = next((w for w in view.query("*") if w.can_focus), None)
        if target is not None:
            # At once, not ``focus()``'s next turn: the pane shown a moment ago is new, and
            # the screen moves a focus left in the hidden pane to the tabs meanwhile.
            self.set_focus(target)

    async def key_p(self) -> None:
        """The Cost view (a key method, not a Binding: the tab exists only for profiled runs)."""
        if self._cost_tab:
            await self.action_show("cost")

    async def key_upper_r(self) -> None:
        """The Ranks view (a key method, not a Binding: the tab exists only for ranked runs)."""
        if self._ranks_tab:
            await self.action_show("ranks")

    async def action_show(self, view_id: str) -> None:
        await self.show_view(view_id)
        self._focus_view(view_id)

    def action_search(self) -> None:
        if self.loaded_run is None:
            return

        async def done(hit: SearchHit | None) -> None:
            if hit is not None:
                view = await self.show_view(hit.view)
                view.reveal(hit.key)

        from dyn_inspect.tui.screens import SearchScreen

        self.push_screen(SearchScreen(self.search), done)

    def search(self, query: str) -> list[SearchHit]:
        """Every view's matches for ``query``, in view order."""
        if self.loaded_run is None:
            return []
        hits: list[SearchHit] = []
        with self.lock:
            ctx = self.context()
            for view_id in VIEW_IDS:
                hits.extend(self.view(view_id).search(ctx, query))
        return hits

    def action_open_editor(self) -> None:
        loc = self.view(self.active_view).selected_location()
        if loc is None:
            self.notify("Nothing with a source line is selected.", severity="warning")
            return
        self.open_in_editor(loc)

    def open_in_editor(self, loc: Loc) -> None:
        # A run names what it likes: only a regular file goes to the editor (no FIFO or
        # device to hang it), and always by its absolute path (editor_command).
        if not os.path.isfile(loc.file):
            self.notify(f"{loc.file} is not a file on this machine.", severity="error")
            return
        from dyn_inspect.tui.source import editor_command

        command = editor_command(loc.file, loc.line)
        try:
            with self.suspend():
                subprocess.call(command)  # noqa: S603 - the user's own $EDITOR
        except FileNotFoundError:
            self.notify(f"cannot start the editor: {command[0]} (set $EDITOR)", severity="error")
        except Exception as exc:  # noqa: BLE001 - e.g. SuspendNotSupported when headless
            self.notify(f"cannot open an editor here: {exc}", severity="error")
        else:
            cwd = run_cwd(self.loaded_run.model) if self.loaded_run is not None else None
            self.notify(f"Opened {display_loc(loc, cwd)}", timeout=2)

    def action_export(self) -> None:
        """Write a bug-report zip of the run (``dyn_inspect.inspector.export``) in the
        background; the screen stays live and says when it is done."""
        if self.loaded_run is None:
            return
        try:
            from dyn_inspect.inspector import export
        except ImportError:
            export = None  # type: ignore[assignment]
        export_run = getattr(export, "export_run", None) if export is not None else None
        if export_run is None:
            self.notify("Export is not available in this version of dyn-inspect.", severity="warning")
            return
        if self._exporting:
            self.notify("An export is already being written.")
            return
        run = self.loaded_run
        out = Path.cwd() / f"dyn-inspect-{run.path.name}.zip"
        n = 2
        while out.exists():
            out = Path.cwd() / f"dyn-inspect-{run.path.name}-{n}.zip"
            n += 1
        self._exporting = True
        self.notify(f"Exporting a bug report to {out.name}…", timeout=3)
        self.run_worker(lambda: self._export_in_thread(export_run, run, out), thread=True, exclusive=False, group="export")

    def _export_in_thread(self, export_run: Callable[..., object], run: Run, out: Path) -> None:
        # The follower is the model's only writer: pausing it keeps the model still while
        # the export reads it, without holding the lock the screen needs.
        if self.follower is not None:
            self.follower.pause()
        try:
            result = export_run(run, out)
        except (InspectorError, OSError) as exc:
            self.call_from_thread(self.notify, f"export failed: {exc}", severity="error", timeout=10)
        else:
            path = getattr(result, "path", out)
            self.call_from_thread(self.notify, f"Bug report written: {path}", timeout=10)
        finally:
            if self.follower is not None:
                self.follower.resume()
            self._exporting = False

    def action_toggle_help(self) -> None:
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def action_quit(self) -> None:  # type: ignore[override]
        if self.child is not None and self.child.alive:
            from dyn_inspect.tui.screens import ConfirmScreen

            def answer(choice: str | None) -> None:
                if choice == "kill":
                    self._kill_and_quit()

            self.push_screen(
                ConfirmScreen(
                    "The program is still running. Stop it and quit?", [("kill", "Kill it and quit"), ("cancel", "Keep running")]
                ),
                answer,
            )
            return
        self.exit(self.exit_code, return_code=self.exit_code)

    def _kill_and_quit(self) -> None:
        assert self.child is not None
        self.exit_code = self.child.stop_and_wait()
        self.exit(self.exit_code, return_code=self.exit_code)

    def action_interrupt(self) -> None:
        from dyn_inspect.tui.screens import ConfirmScreen

        if isinstance(self.screen, ConfirmScreen):
            return
        if self.child is None or not self.child.alive:
            self.action_quit()
            return

        def answer(choice: str | None) -> None:
            if self.child is None:
                return
            if choice == "interrupt":
                self.child.interrupt()
                self.notify("Sent SIGINT (Ctrl-C) to the program.")
            elif choice == "kill":
                self.child.kill()
                self.notify("Killed the program.")

        self.push_screen(
            ConfirmScreen(
                "Stop the program?",
                [("interrupt", "Interrupt (Ctrl-C)"), ("kill", "Kill"), ("cancel", "Cancel")],
            ),
            answer,
        )


# Signals that ask a process to stop (a supervisor, a closed terminal, kill -INT): the TUI
# ends with the program. Others (SIGUSR1 for a checkpoint, SIGALRM) only go on to it.
QUIT_SIGNALS = frozenset({signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT})


def run_live(spec: LaunchSpec) -> int:
    """``dyn-inspect train.py`` in a terminal: run the program and show it live; returns its
    exit code when the user quits."""
    from dyn_inspect.engine.launcher import FORWARDED_SIGNALS, Launch

    launch = Launch(spec)
    run = Run(launch.run_dir, recorder=True)  # (its index goes into the run it records)
    app = InspectorApp(launch.run_dir, run=run, launch=launch)

    def forward(signum: int, _frame: object) -> None:
        # The program runs in its own session on our pty, so no signal sent to dyn-inspect
        # (a supervisor's SIGTERM, SLURM's --signal=USR1, a closed terminal's SIGHUP) reaches
        # it by itself: each one python would receive goes on to it, as under --no-tui. One
        # that asks a process to stop (QUIT_SIGNALS) also ends the TUI once the program has
        # ended; a program that handles it and runs on keeps the TUI (docs/security.md).
        # One that arrives before the program is started waits for it (app.early_signals),
        # as under --no-tui: plain python would have met it as soon as it started.
        child = app.child
        ends = signum in QUIT_SIGNALS
        if child is None or (child.process is None and child.exit_code is None):
            app.early_signals.append(signum)
            app.quit_when_child_exits = app.quit_when_child_exits or ends
        elif child.exit_code is None:
            child.signal(signum)
            if ends:
                app.quit_when_child_exits = True
        elif ends:
            app.exit(None)

    # SIGWINCH is the TUI's own (the program's pty is resized with the screen); the others
    # python would receive are forwarded.
    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED_SIGNALS if sig != signal.SIGWINCH}
    try:
        app.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if app.child is not None and app.child.exit_code is None:
            app.exit_code = app.child.stop_and_wait()
        elif app.child is None:
            launch.finish(130)
        if launch.notice:  # "recording stopped: disk full (...)", once the screen is back
            with contextlib.suppress(OSError):  # (no terminal any more: a closed one)
                print(launch.notice, file=sys.stderr)
        _save_index(app, run)
    return app.exit_code


def _save_index(app: InspectorApp, run: Run) -> None:
    """The run is over: its index, from the model already in memory (the next ``open`` of
    a big run reads it instead of the logs). Best effort: never fails the exit."""
    try:
        with app.lock:  # the follower may be finishing a poll
            run.refresh()
            if run.model.finished:
                run.write_index()
    except Exception:  # noqa: BLE001 - a cache: the logs are the record
        pass


OPEN_AT_ONCE_INDEX_BYTES = 16 << 20  # a 100k-event run's index is 5 MB, opened in ~60 ms


def open_at_once(path: Path) -> Run | None:
    """The run, opened before the first frame when a current index covers it whole and is
    small: the first frame then has the data, which spares a second layout of the screen
    (the loading state, then the data) — the larger part of the time to the overview with
    data. Otherwise None: the app opens the run in the background behind a first frame."""
    from dyn_inspect.inspector import index

    if os.environ.get("DYN_INSPECT_NO_INDEX") or (current := index.current_file(path)) is None:
        return None
    try:
        if current.stat().st_size > OPEN_AT_ONCE_INDEX_BYTES:
            return None
    except OSError:
        return None
    try:
        return Run(path)
    except (InspectorError, OSError):
        return None  # the background loader reads it again and says why


def run_open(path: Path, initial_view: str = "overview", opening: Opening | None = None) -> int:
    """``dyn-inspect open RUN``: browse a finished (or still running) run. Its saved first
    screen, when current, is drawn before the run is read; else a small indexed run is read
    before the first frame (``open_at_once``); else behind it. ``opening``: that first
    screen, looked up already (``first_screen.opening``)."""
    from dyn_inspect.tui import first_screen

    if opening is None:
        opening = first_screen.opening(path, initial_view)
    saved = opening.saved
    run = open_at_once(path) if saved is None else None
    app = InspectorApp(path, initial_view=initial_view, run=run, first_screen=saved)
    if opening.keep_frame_at is not None:
        app.keep_first_frame(opening.keep_frame_at)
    app.run()
    if app.load_error is not None:
        raise InspectorError(app.load_error)
    return 0
