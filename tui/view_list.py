"""The TUI's views, one entry each: tab id, title, key and class. The app builds its tabs
and key bindings from this list and ``dyn-inspect open --view`` takes its choices from it,
so a view is added here once (docs/architecture.md, "Add a TUI view").

Plain data without Textual: the CLI reads it to build its parser, and a view's module is
imported only when the view is first needed (``tui/app.py``: the first frame waits only
for the first view's; the others' tables, trees and syntax highlighting took a fifth of
the time to it). A view's own CSS is its class's ``DEFAULT_CSS``.
"""

from __future__ import annotations

from typing import NamedTuple


class ViewEntry(NamedTuple):
    id: str  # the tab's id
    title: str  # the tab's label
    key: str | None  # the key that shows it (None: only its tab does)
    where: str  # "module:Class" in dyn_inspect.tui.views
    always: bool = True  # False: shown only for some runs (``--view`` does not offer it)


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
    ViewEntry("cost", "Cost", None, "cost:CostView", always=False),  # a run recorded with --profile
    ViewEntry("ranks", "Ranks", None, "ranks:RanksView", always=False),  # a run of two ranks or more
]
VIEW_IDS = [v.id for v in VIEWS]
TITLES = {v.id: v.title for v in VIEWS}
