"""The TUI's Causes view (issue 14) on the recorded example (Textual pilot): the five
batch-size recompiles are one cause, ranked first, with one fix at the line that makes
``x``; the break causes follow; key 8 opens the view, ``o`` targets the fix's line and
search finds the cause. Expected lines come from the example's source, not from the code
under test."""

from __future__ import annotations

from textual.widgets import DataTable, TabbedContent

from corpus_support import EXAMPLES
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from dyn_inspect.tui.views.causes import CausesView
from test_tui import SIZE, cursor_row, flat, rows, settle, static_text

TRAIN = EXAMPLES / "train.py"


def line_of(needle: str) -> int:
    (line,) = [n for n, text in enumerate(TRAIN.read_text().splitlines(), start=1) if needle in text]
    return line


async def test_causes_view_ranks_the_batch_size_cause_first_with_its_fix(example_run: Run) -> None:
    app = InspectorApp(example_run.path, run=example_run, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert app.query_one(TabbedContent).active == "causes"
        table = app.query_one("#causes-table", DataTable)
        got = rows(table)
        made = line_of("x, y = torch.randn(bs, 32")
        # one cause for the 5 recompiles, first (most expensive), with the one fix
        assert got[0][:3] == ["1", "5 recompiles", "`x.shape[0]` takes 16, 32 → 5 recompiles"]
        assert got[0][3] == f"torch._dynamo.mark_dynamic(x, 0)  (train.py:{made})"
        # then the three break sites (the example's), without a fix of their own here
        breaks = [r for r in got[1:] if r[2].startswith("graph break")]
        assert len(got) == 4 and len(breaks) == 3 and all(r[3] == "—" for r in breaks)
        assert [int(r[0]) for r in got] == [1, 2, 3, 4]
        assert app.query_one(TabbedContent).get_tab("causes").label.plain == "Causes (4)"

        detail = flat(static_text(app, "#cause-detail"))
        assert cursor_row(table)[0] == "1"
        assert "Fix: torch._dynamo.mark_dynamic(x, 0) where `x` is made" in detail
        assert "x, y = torch.randn(bs, 32" in detail  # the fix's line, from the source
        assert f"train.py:{line_of('def forward(')} forward" in detail  # and where it shows
        assert "model_utils.py" in detail and "log_stats" in detail

        view = app.query_one("#view-causes", CausesView)
        loc = view.selected_location()
        assert loc is not None and loc.file == str(TRAIN) and loc.line == made

        await pilot.press("down")
        await settle(pilot)
        assert "graph break" in flat(static_text(app, "#cause-detail"))

        hits = view.search(view.ctx, "mark_dynamic")  # type: ignore[arg-type]
        assert [h.label.split("  fix: ")[1] for h in hits] == ["torch._dynamo.mark_dynamic(x, 0)"]
