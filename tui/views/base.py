"""What every view shares: the context it is synced from, the search-hit record and the
``View`` base. Kept light (no table, no syntax highlighting): the first view on the screen
imports only this, so that the first frame does not wait for what the other views need
(``tui/views/table.py``). A view never imports another view."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from textual.timer import Timer
from textual.widget import Widget

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.reports.screens import ALL, Scope
from dyn_inspect.inspector.run import Run

COMMON_KEYS = """
**1**–**9**, **0**, **c** switch views · **/** search everything · **o** open in `$EDITOR` ·
**e** export a bug report · **?** this help · **q** quit · **ctrl+c** stop the program
"""


@dataclass(frozen=True)
class Context:
    """The run as a view sees it: the model (read under the app's lock), the rank scope and
    the directory paths are shown relative to."""

    run: Run
    scope: Scope = ALL
    cwd: str | None = None


@dataclass(frozen=True)
class SearchHit:
    view: str  # the tab id
    key: str  # what ``reveal`` takes
    label: str  # one line shown in the results


def beside_detail(left_id: str, width: str, more: str = "") -> str:
    """The CSS of a view whose ``#left_id`` (its table or tree) sits ``width`` wide beside the
    detail pane, and on a narrow screen above it, full width. The rules name the screen's
    class (``-narrow``), so the view sets ``SCOPED_CSS = False`` beside it."""
    return f"#{left_id} {{ width: {width}; }}\n{more}.-narrow #{left_id} {{ width: 100%; height: 45%; }}\n"


class View(Widget):
    """Base of the tab contents. ``sync`` runs on the UI thread with the model locked."""

    view_id: str = ""

    DETAIL_DELAY = 0.08  # s: while the cursor moves faster than this, details wait

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - textual's name
        super().__init__(id=id)
        self.ctx: Context | None = None
        self._last_move = 0.0
        self._detail_timer: Timer | None = None

    def show_detail_soon(self, show: Callable[[], None]) -> None:
        """Show the selected row's details: at once when the cursor was resting, else when
        it comes to rest. Holding ↓ over a long table then redraws only the table (cheap:
        DataTable draws only its visible rows), not a highlighted source per row passed."""
        now = time.monotonic()
        resting = now - self._last_move > 2 * self.DETAIL_DELAY
        self._last_move = now
        if self._detail_timer is not None:
            self._detail_timer.stop()
            self._detail_timer = None
        if resting:
            show()
        else:

            def fire() -> None:
                self._detail_timer = None
                show()

            self._detail_timer = self.set_timer(self.DETAIL_DELAY, fire)

    @property
    def detail_pending(self) -> bool:
        return self._detail_timer is not None

    def sync(self, ctx: Context) -> None:
        self.ctx = ctx

    def tab_label(self, ctx: Context) -> str:
        return self.view_id

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        return []

    def reveal(self, key: str) -> None:
        pass

    def selected_location(self) -> Loc | None:
        return None


def matches(query: str, *fields: str | None) -> bool:
    q = query.casefold()
    return any(q in f.casefold() for f in fields if f)
