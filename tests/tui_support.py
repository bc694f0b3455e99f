"""Helpers for the TUI tests (no tests here): the app on a recorded run, what a widget
shows as plain text, a table's rows, and letting a headless app (Textual pilot) settle
after input."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import DataTable, OptionList

from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from dyn_inspect.tui.views.base import View
from dyn_inspect.tui.widgets import DetailPane

SIZE = (140, 40)


def app_for(run: Run, **kwargs) -> InspectorApp:
    """The app on a recorded run, its clock stopped."""
    return InspectorApp(run.path, run=run, clock=lambda: 0.0, **kwargs)


@asynccontextmanager
async def opened(
    run: Run, key: str | None = None, size: tuple[int, int] = SIZE, **kwargs
) -> AsyncIterator[tuple[InspectorApp, Pilot]]:
    """``app_for(run)`` driven headless at ``size`` and settled, with ``key`` pressed (a
    view's key, say) when one is given: yields the app and its pilot."""
    app = app_for(run, **kwargs)
    async with app.run_test(size=size) as pilot:
        if key is None:
            await settle(pilot)
        else:
            await press(pilot, key)
        yield app, pilot


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


def by_column(table: DataTable) -> list[dict[str, str]]:
    """Each row's cells as text, by column key (a table's columns may come in another order)."""
    keys = [str(key.value) for key in table.columns]
    return [dict(zip(keys, row, strict=True)) for row in rows(table)]


def kernel_names(table: DataTable) -> list[str]:
    """The Kernels table's rows by kernel: the full name (the cell shows a long one cut, and
    sorts by the whole), with " (bw)" for a backward kernel as the cell shows it."""
    out = []
    for i in range(table.row_count):
        cell = table.get_row_at(i)[0]
        out.append(str(getattr(cell, "value", cell)) + (" (bw)" if str(cell).endswith(" (bw)") else ""))
    return out


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


async def press(pilot, key: str) -> None:
    """Press a key and let the app settle."""
    await pilot.press(key)
    await settle(pilot)


async def cursor_to(pilot, table: DataTable, value: str, column: int = 0) -> None:
    """Move the table's cursor down to the row whose ``column`` says ``value``, and settle."""
    while cursor_row(table)[column] != value:
        await pilot.press("down")
    await settle(pilot)


async def select_frame(pilot, stack: OptionList, where: str) -> None:
    """Focus a user-stack list and select the first frame whose label names ``where``."""
    stack.focus()
    labels = [render(stack.get_option_at_index(i).prompt) for i in range(stack.option_count)]
    stack.highlighted = next(i for i, text in enumerate(labels) if where in text)
    await settle(pilot)
