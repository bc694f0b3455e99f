"""``AppState``, the base of every part of ``InspectorApp`` (``tui/app.py`` mixes them in):
what the parts share — the run and the lock that guards its model, the follower, the
program, the rank scope, the views made so far and which are stale — set up in its
``__init__``; and the methods the parts call on one another, declared here for the type
checker only (each is defined by the part that owns it).

The parts are mixins, subclasses of this one ``App``: Textual looks up ``on_<message>``
handlers, ``@on`` handlers and ``action_<name>`` methods on the app's MRO, so each part
keeps its own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from dyn_inspect.inspector.reports import screens
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui._textual_hacks import HangupSafeApp
from dyn_inspect.tui.follow import OutputBuffer, RunFollower
from dyn_inspect.tui.view_list import VIEW_IDS

if TYPE_CHECKING:
    from textual.widgets import Label

    from dyn_inspect.engine.launcher import Launch
    from dyn_inspect.tui.child import ChildProcess
    from dyn_inspect.tui.first_screen import FirstScreen
    from dyn_inspect.tui.view_list import RunFacts
    from dyn_inspect.tui.views.base import Context, View
    from dyn_inspect.tui.views.output import OutputView


class AppState(HangupSafeApp[int]):
    """The state of ``InspectorApp`` (its arguments are this ``__init__``'s): one run, live
    or finished. ``exit_code`` is what ``dyn-inspect`` returns on quit."""

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
        # The views made so far (``view``: a view's module is imported when first needed),
        # those behind the model, and those the run has (``VIEWS``' ``shown_for``: every
        # view's tab until the run, or its first screen, says otherwise).
        self._views: dict[str, View] = {}
        self._stale: set[str] = set(VIEW_IDS)
        self._shown: set[str] = set(VIEW_IDS)
        self._ranks: list[int] = []  # the rank selector's (tui/header.py)
        self.load_error: str | None = None
        self._exporting = False  # tui/export.py
        self._frozen_at = 0
        self.synced_events = -1  # the model's event count when the views were last synced (tests, bench)

    if TYPE_CHECKING:  # defined by the parts
        # tui/tabs.py
        def view(self, view_id: str) -> View: ...
        def mounted(self, view_id: str) -> bool: ...
        async def show_view(self, view_id: str) -> View: ...
        @property
        def output_view(self) -> OutputView: ...
        @property
        def active_view(self) -> str: ...
        def context(self) -> Context: ...
        def _sync(self, all_views: bool = False) -> None: ...
        def _show_tabs_for(self, run: RunFacts) -> None: ...

        # tui/header.py
        def _sync_header(self, ctx: Context) -> None: ...
        def _show_header(self, command: str, state: screens.RunState, env: str) -> None: ...
        def _header_label(self, selector: str) -> Label | None: ...
        def _set_state(self, state: screens.RunState) -> None: ...
