"""tui/_textual_hacks.py against the installed Textual: each private thing it reaches for is
still there and still does what the TUI relies on (a Textual upgrade that moves one fails
here, by name, rather than as a silently missing first-frame replay or re-wrap)."""

from __future__ import annotations

import inspect

from rich.console import RenderableType
from textual.app import App, ComposeResult
from textual.widgets import Label, RichLog

from dyn_inspect.tui._textual_hacks import DisplayHook, full_frame_text, size_known


def test_app_display_is_still_the_terminal_write() -> None:
    params = list(inspect.signature(App._display).parameters)
    assert params == ["self", "screen", "renderable"], params


class _Seen(DisplayHook[None]):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[RenderableType] = []

    def compose(self) -> ComposeResult:
        yield Label("hello from the fence test")
        yield RichLog(id="log")

    def on_terminal_write(self, renderable: RenderableType) -> None:
        self.written.append(renderable)


async def test_the_hook_sees_a_whole_first_frame_and_the_log_learns_its_size() -> None:
    app = _Seen()
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        log = app.query_one("#log", RichLog)
        assert size_known(log)
        assert app.written, "Textual wrote frames without calling App._display"
        width, height = app.size
        frames = [f for f in (full_frame_text(r, width, height, app.console) for r in app.written) if f is not None]
        assert frames, [type(r).__name__ for r in app.written]
        assert "hello from the fence test" in frames[0]


def test_a_partial_update_or_other_renderable_is_no_frame() -> None:
    app = App[None]()
    assert full_frame_text("just text", 80, 24, app.console) is None
