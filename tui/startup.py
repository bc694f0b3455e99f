"""What gets ``dyn-inspect open``'s first screen up before the run is read (``StartupMixin``, a
part of ``InspectorApp``; docs/tui.md, "What gets the first screen up"): the run's saved
first screen drawn at once (``tui/first_screen.py``), and saved for the next open where the
run's index had none; the cyclic GC back on once the first frame is drawn; and
``open_at_once``, a small indexed run read before the first frame."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app_state import AppState
from dyn_inspect.tui.display import duration
from dyn_inspect.tui.view_list import RunFacts

if TYPE_CHECKING:
    from dyn_inspect.tui.first_screen import FirstScreen


class StartupMixin(AppState):
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
        # (Whether the run was profiled is not saved: the Cost tab waits for the run read.)
        self._show_tabs_for(RunFacts(ranks=len(screen.ranks), profiled=False))
        from dyn_inspect.tui.views.overview import OverviewView  # (the first view: imported already)

        overview = self.view("overview")
        assert isinstance(overview, OverviewView)
        overview.show(screen.overview, screen.cwd)

    def _save_first_screen(self, run: Run) -> None:
        """Save the first screen of a finished run opened from its index without one (an
        index written by the language server, or by an older dyn-inspect): the next open
        draws it before reading the run."""
        from dyn_inspect.tui import first_screen

        with self.lock:
            if first_screen.load(run.path) is None:
                first_screen.save(run)


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
