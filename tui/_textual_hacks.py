"""Every use of Textual's private API, in one place (as engine/torch_compat.py fences torch).

Three things the TUI needs that Textual has no public API for:

- ``DisplayHook``: a mixin for the App that sees each renderable Textual writes to the
  terminal (it overrides ``App._display``), so the first full frame can be kept and replayed
  at the next open of the run (tui/last_frame.py);
- ``full_frame_text``: what that renderable writes (text with escape sequences) when it is a
  whole-screen ``textual._compositor.LayoutUpdate``; None for anything else;
- ``size_known``: whether a ``RichLog`` has been laid out (``RichLog._size_known``), so a
  resize re-wraps text only once there is a width.

Each degrades to "not available" (no replayed frame, no re-wrap) when another Textual moved
what it reaches for; tests/tui/test_textual_hacks.py checks the installed Textual still has each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from textual.app import App
from textual.geometry import Region

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from textual.screen import Screen
    from textual.widgets import RichLog

ReturnType = TypeVar("ReturnType")


class DisplayHook(App[ReturnType]):
    """An App whose ``on_terminal_write`` sees every renderable Textual displays."""

    def _display(self, screen: Screen[object], renderable: RenderableType | None) -> None:
        super()._display(screen, renderable)
        if renderable is not None:
            self.on_terminal_write(renderable)

    def on_terminal_write(self, renderable: RenderableType) -> None:
        """Called after Textual wrote ``renderable`` (in the app's thread; keep it short)."""


def full_frame_text(renderable: RenderableType, width: int, height: int, console: Console) -> str | None:
    """What ``renderable`` writes to the terminal, when it redraws the whole ``width`` ×
    ``height`` screen; None for a partial update or another kind of renderable."""
    try:
        from textual._compositor import LayoutUpdate
    except ImportError:
        return None
    if not isinstance(renderable, LayoutUpdate) or renderable.region != Region(0, 0, width, height):
        return None
    return renderable.render_segments(console)


def size_known(log: RichLog) -> bool:
    """Whether ``log`` has a size yet (False where this Textual does not say)."""
    return bool(getattr(log, "_size_known", False))
