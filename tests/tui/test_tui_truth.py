"""The TUI shows what torch did on realistic programs (issue 12): the source pane marks
the right line for breaks far down a long file and for user-stack frames, and compile
failures have their own count and view.

Lines come from the corpus programs' markers, never from the code under test."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, OptionList

from corpus_support import CORPUS, marker_line
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.widgets import DetailPane
from tui_support import cursor_to, flat, opened, press, render, rows, select_frame

LONG = CORPUS / "faces_long.py"
pytestmark = pytest.mark.corpus


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
    async with opened(faces_long_run, "2") as (app, pilot):
        table = app.query_one("#breaks-table", DataTable)
        target = f"faces_long.py:{line}"
        assert target in [r[0] for r in rows(table)]
        await cursor_to(pilot, table, target)
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
    async with opened(faces_long_run, "2") as (app, pilot):
        table = app.query_one("#breaks-table", DataTable)
        await cursor_to(pilot, table, f"faces_long.py:{helper}")
        pane = app.query_one("#break-detail", DetailPane)
        assert "if scale > 10:" in marked(visible_lines(pane))
        await select_frame(pilot, app.query_one("#break-stack", OptionList), f"faces_long.py:{caller}")
        shown = visible_lines(pane)
        assert f"faces_long.py:{caller}" in shown[0]
        row = marked(shown)
        assert str(caller) in row and "y = clamp_if_large(y)" in row
        loc = app.view("breaks").selected_location()
        assert loc is not None and (loc.file, loc.line) == (str(LONG), caller)


# -- compile failures ------------------------------------------------------------------------

FAILURE = CORPUS / "faces_failure.py"


async def test_fullgraph_failure_is_counted_and_has_its_own_view(faces_failure_run: Run) -> None:
    line = marker_line(FAILURE, "FAIL:fullgraph")
    async with opened(faces_failure_run) as (app, pilot):
        counts = flat(render(app.query_one("#overview-counts").content))
        assert "1 compile failures" in counts
        offenders = flat(render(app.query_one("#overview-offenders").content))
        assert "Compile failures" in offenders and f"faces_failure.py:{line}" in offenders
        assert "Unsupported: Data-dependent branching" in offenders
        await press(pilot, "7")
        assert "Failures (1)" in render(app.query_one("TabbedContent").get_tab("failures").label)
        table = app.query_one("#failures-table", DataTable)
        (row,) = rows(table)
        assert row[0] == f"faces_failure.py:{line}" and row[1].strip() == "1" and row[2] == "strict"
        assert row[3].startswith("Unsupported: Data-dependent branching")
        pane = app.query_one("#failure-detail", DetailPane)
        assert "if y.sum() > 0:" in marked(visible_lines(pane))
        detail = flat(pane.text())
        # torch's own exception text, hints and link included
        assert "Detected data-dependent branching" in detail and "gb0170.html" in detail
        loc = app.view("failures").selected_location()
        assert loc is not None and (loc.file, loc.line) == (str(FAILURE), line)
        hits = app.search("data-dependent")
        assert any(h.view == "failures" for h in hits)


async def test_run_without_failures_shows_zero(faces_long_run: Run) -> None:
    async with opened(faces_long_run, "7") as (app, pilot):
        assert rows(app.query_one("#failures-table", DataTable)) == []
        assert "No compile failed." in app.query_one("#failure-detail", DetailPane).text()


async def test_recompile_timeline_lists_a_few_older_cache_entries(faces_recompiles_run: Run) -> None:
    async with opened(faces_recompiles_run, "3") as (app, pilot):
        table = app.query_one("#recompiles-table", DataTable)
        await cursor_to(pilot, table, "by_dtypes", column=2)
        text = flat(app.query_one("#recompile-timeline", DetailPane).text())
        assert text.startswith("by_dtypes") and "… and 1 older cache entry failed too" in text
        assert text.count("failed guard") == 1 + 2 + 3 + 3  # compiles #1..#4: 1, 2, 3, then 3 of 4
