"""The dyn-inspect TUI: a Textual app over one run, live (``run_live``: the program runs in
a child process while its compiles appear) or opened afterwards (``run_open``).

Structure (memray's live TUI): background threads own the slow or blocking work — the
``RunFollower`` polls the run's logs, ``ChildProcess`` pumps the program's pty — and post
messages; the app reads the shared model under a lock and brings the visible view up to
date incrementally (``tui/tabs.py``).

``InspectorApp`` is made of parts, one module each, all subclasses of ``AppState``
(``tui/app_state.py``: the state they share): ``tui/tabs.py`` (the views in their tabs),
``tui/header.py`` (the header, the rank scope), ``tui/navigation.py`` (keys, focus, search,
``$EDITOR``, help), ``tui/program.py`` (the program), ``tui/export.py`` (the bug report),
``tui/quit.py`` (quitting, stopping the program) and ``tui/startup.py`` (the first screen and
the last frame). This module puts them together: the layout, the keys, start and stop, the
follower's messages, and the two entry points.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Label, TabbedContent, TabPane

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.reader import safe_name
from dyn_inspect.inspector.reports import screens
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.export import ExportMixin
from dyn_inspect.tui.follow import RunFollower
from dyn_inspect.tui.header import HEADER_CSS, HeaderMixin, compose_header
from dyn_inspect.tui.messages import LabelChanged, LoadFailed, RunLoaded, RunUpdated
from dyn_inspect.tui.navigation import NavigationMixin
from dyn_inspect.tui.program import ProgramMixin
from dyn_inspect.tui.quit import QuitMixin
from dyn_inspect.tui.startup import StartupMixin, open_at_once
from dyn_inspect.tui.tabs import TabsMixin
from dyn_inspect.tui.view_bar import ViewBar
from dyn_inspect.tui.view_list import VIEW_IDS, VIEWS

if TYPE_CHECKING:  # the launcher (and the recorder it imports) only where a run starts
    from dyn_inspect.engine.launcher import LaunchSpec
    from dyn_inspect.tui.first_screen import Opening

FREEZE_EVERY = 20_000  # events: how much a live model grows before it is frozen again

CSS = (
    HEADER_CSS
    + """
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
)


class InspectorApp(TabsMixin, HeaderMixin, NavigationMixin, ProgramMixin, ExportMixin, QuitMixin, StartupMixin):
    """One run, live or finished. ``exit_code`` is what ``dyn-inspect`` returns on quit
    (its arguments: ``AppState``)."""

    CSS = CSS
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # (the screen's class, for CSS above)
    TITLE = "dyn-inspect"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        # (a key of a view only some runs have does nothing for the others: TabsMixin.check_action)
        *(Binding(v.key, f"show('{v.id}')", v.title, show=False) for v in VIEWS if v.key),
        Binding("/", "search", "Search"),
        Binding("o", "open_editor", "Open in $EDITOR"),
        Binding("e", "export", "Export"),
        Binding("?", "toggle_help", "Keys"),
        Binding("r", "next_rank", "Rank", show=False),
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "interrupt", "Stop program", show=False, priority=True),
    ]

    # -- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield from compose_header()
        yield ViewBar(id="view-bar")
        # Every view exists from the start (its tab's label is its own), but only the first
        # one shown is mounted, and the program's output while it runs live: laying out
        # twelve views' widgets took half the time to the first frame. The others are
        # mounted the first time they are shown (``show_view``; the output pane keeps what
        # is written to it before).
        # (Views are made, their modules imported, when first needed: ``view``.)
        with TabbedContent(initial=self.initial_view):
            for view_id, title, *_ in VIEWS:
                with TabPane(title, id=view_id):
                    if view_id == self.initial_view or (view_id == "output" and self.launch is not None):
                        yield self.view(view_id)

    # -- start and stop --------------------------------------------------------------------

    def on_mount(self) -> None:
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

    def on_unmount(self) -> None:
        if self.follower is not None:
            self.follower.stop()
        if self.child is not None and self.child.exit_code is None:
            self.exit_code = self.child.stop_and_wait()

    def _mount_footer(self) -> None:
        """The key bar, once the run is on the screen: Textual's Footer builds a widget per
        key and rebuilds them at every change of focus, which cost a fifth of the time to
        the first overview with data."""
        from textual.widgets import Footer

        if not self.query(Footer):
            self.mount(Footer())

    # -- the follower's messages -------------------------------------------------------------

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
    app.run()
    if app.load_error is not None:
        raise InspectorError(app.load_error)
    return 0
