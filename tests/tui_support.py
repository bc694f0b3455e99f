"""Helpers for the TUI tests (no tests here): what a widget shows as plain text, a table's
rows, and letting a headless app (Textual pilot) settle after input."""

from __future__ import annotations

import io

from rich.console import Console
from textual.widgets import DataTable

from dyn_inspect.tui.app import InspectorApp
from dyn_inspect.tui.views.base import View
from dyn_inspect.tui.widgets import DetailPane

SIZE = (140, 40)


def render(renderable: object, width: int = 200) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def static_text(app: InspectorApp, selector: str) -> str:
    """What a Static or a detail pane shows, as plain text."""
    widget = app.query_one(selector)
    if isinstance(widget, DetailPane):
        return widget.text()
    return render(widget.content)


def flat(text: str) -> str:
    """Text with its line wrapping undone (panes wrap long sentences to their width)."""
    return " ".join(text.split())


def rows(table: DataTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def cursor_row(table: DataTable) -> list[str]:
    return [str(cell) for cell in table.get_row_at(table.cursor_row)]


async def settle(pilot, seconds: float = 0.05) -> None:
    """Let the app process what was sent, including details shown once the cursor rests."""
    await pilot.pause(seconds)
    await pilot.wait_for_scheduled_animations()
    for _ in range(100):
        if not any(view.detail_pending for view in pilot.app.query(View)):
            break
        await pilot.pause(0.02)
    await pilot.pause(0)


async def show_view(pilot, key: str) -> None:
    """Let the app draw, press a view's key, and let the view draw."""
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)
