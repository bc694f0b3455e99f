"""The TUI's views, one entry each: tab id, title, key, class and, for a view only some runs
have, when it is shown. The app builds its tabs and key bindings from this list, hides the
tab of a view its run does not have, and ``dyn-inspect open --view`` takes its choices from
it, so a view is added here once (docs/architecture.md, "Add a TUI view").

Plain data without Textual: the CLI reads it to build its parser, and a view's module is
imported only when the view is first needed (``tui/tabs.py``: the first frame waits only
for the first view's; the others' tables, trees and syntax highlighting took a fifth of
the time to it). That is why when a view is shown is said here (``shown_for``) and not by
its class: the app asks before the first frame, when only the first view's module is
imported. A view's own CSS is its class's ``DEFAULT_CSS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple


class RunFacts(NamedTuple):
    """What decides which views a run has: read from its model, or from its saved first
    screen before the run is read (``tui/startup.py``)."""

    ranks: int  # how many ranks it recorded (0: not a distributed run)
    profiled: bool  # recorded with --profile (not known from a first screen: False)


class ViewEntry(NamedTuple):
    id: str  # the tab's id
    title: str  # the tab's label
    key: str | None  # the key that shows it (None: only its tab does)
    where: str  # "module:Class" in dyn_inspect.tui.views
    # Shown only for the runs this says yes to (its tab hidden, its key inert, for the
    # others; ``--view`` does not offer it). None: shown for every run.
    shown_for: Callable[[RunFacts], bool] | None = None

    @property
    def always(self) -> bool:
        """Shown for every run."""
        return self.shown_for is None


def _profiled(run: RunFacts) -> bool:
    return run.profiled


def _ranked(run: RunFacts) -> bool:
    return run.ranks > 1


VIEWS: list[ViewEntry] = [
    ViewEntry("overview", "Overview", "1", "overview:OverviewView"),
    ViewEntry("breaks", "Graph breaks", "2", "breaks:BreaksView"),
    ViewEntry("recompiles", "Recompiles", "3", "recompiles:RecompilesView"),
    ViewEntry("compiles", "Compiles", "4", "compiles:CompilesView"),
    ViewEntry("kernels", "Kernels", "5", "kernels:KernelsView"),
    ViewEntry("output", "Output", "6", "output:OutputView"),
    ViewEntry("failures", "Failures", "7", "failures:FailuresView"),
    ViewEntry("causes", "Causes", "c", "causes:CausesView"),
    ViewEntry("shapes", "Shapes", "8", "shapes:ShapesView"),
    ViewEntry("timeline", "Timeline", "9", "timeline:TimelineView"),
    ViewEntry("code", "Code", "0", "code:CodeView"),
    ViewEntry("cost", "Cost", "p", "cost:CostView", shown_for=_profiled),  # a run recorded with --profile
    ViewEntry("ranks", "Ranks", "R", "ranks:RanksView", shown_for=_ranked),  # a run of two ranks or more
]
VIEW_IDS = [v.id for v in VIEWS]
TITLES = {v.id: v.title for v in VIEWS}


def shown_views(run: RunFacts) -> set[str]:
    """The ids of the views ``run`` has."""
    return {v.id for v in VIEWS if v.shown_for is None or v.shown_for(run)}
