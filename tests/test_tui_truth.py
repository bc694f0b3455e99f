"""The TUI shows what torch did on realistic programs (issue 12): the source pane marks
the right line for breaks far down a long file and for user-stack frames, and compile
failures have their own count and view.

Lines come from the corpus programs' markers, never from the code under test."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, OptionList

from corpus_support import CORPUS, marker_line
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from dyn_inspect.tui.widgets import DetailPane
from test_tui import SIZE, cursor_row, flat, render, rows, settle

LONG = CORPUS / "faces_long.py"
pytestmark = pytest.mark.corpus


def app_for(run: Run, **kwargs) -> InspectorApp:
    return InspectorApp(run.path, run=run, clock=lambda: 0.0, **kwargs)


def visible_lines(pane: DetailPane) -> list[str]:
    """The pane's lines that are on screen (it is scrolled to the top when shown)."""
    top = round(pane.scroll_y)
    return [strip.text.rstrip() for strip in pane.lines[top : top + pane.scrollable_content_region.height]]


def marked(lines: list[str]) -> str:
    found = [line for line in lines if "❱" in line]
    assert len(found) == 1, lines
    return found[0]


async def test_break_past_line_200_shows_its_marked_line(faces_long_run: Run) -> None:
    line = marker_line(LONG, "BREAK:print")
    assert line > 200
    app = app_for(faces_long_run)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        table = app.query_one("#breaks-table", DataTable)
        target = f"faces_long.py:{line}"
        assert target in [r[0] for r in rows(table)]
        while cursor_row(table)[0] != target:
            await pilot.press("down")
        await settle(pilot)
        shown = visible_lines(app.query_one("#break-detail", DetailPane))
        row = marked(shown)
        assert str(line) in row and 'print("report", tuple(y.shape))' in row
        # The lines around it are the file's own, numbered as in the file.
        text = LONG.read_text().splitlines()
        above = next(s for s in shown if f"{line - 1} " in s and "❱" not in s)
        assert text[line - 2].strip() in above


async def test_user_stack_frame_past_line_200_marks_that_frame(faces_long_run: Run) -> None:
    helper, caller = marker_line(LONG, "BREAK:helper_branch"), marker_line(LONG, "CALLS:helper")
    assert helper > 200 and caller > 200
    app = app_for(faces_long_run)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        table = app.query_one("#breaks-table", DataTable)
        target = f"faces_long.py:{helper}"
        while cursor_row(table)[0] != target:
            await pilot.press("down")
        await settle(pilot)
        pane = app.query_one("#break-detail", DetailPane)
        assert "if scale > 10:" in marked(visible_lines(pane))
        stack = app.query_one("#break-stack", OptionList)
        stack.focus()
        labels = [render(stack.get_option_at_index(i).prompt) for i in range(stack.option_count)]
        index = next(i for i, text in enumerate(labels) if f"faces_long.py:{caller}" in text)
        stack.highlighted = index
        await settle(pilot)
        shown = visible_lines(pane)
        assert f"faces_long.py:{caller}" in shown[0]
        row = marked(shown)
        assert str(caller) in row and "y = clamp_if_large(y)" in row
        loc = app.view("breaks").selected_location()
        assert loc is not None and (loc.file, loc.line) == (str(LONG), caller)
