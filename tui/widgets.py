"""Widgets shared by the views."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import RenderableType
from rich.syntax import Syntax
from textual.events import Resize
from textual.widgets import RichLog

from dyn_inspect.tui._textual_hacks import size_known


class DetailPane(RichLog):
    """The pane beside a table or tree: highlighted source, explanations, code.

    A RichLog rather than a Static: content is rendered once into lines when shown and then
    drawn line by line as it scrolls, instead of being re-measured and re-rendered by every
    layout pass — a 4000-line output code or a long kernel scrolls as cheaply as a short one.
    Code (``Syntax``) keeps its full width (scroll sideways) while text wraps to the pane.
    """

    # A permanent vertical scrollbar: one that came and went with the content would change
    # the width at every selection and make the text re-wrap (render twice).
    # Global selectors: every view's pane carries the class ``detail``, and under 110
    # columns (the screen's class -narrow) it sits below its table instead of beside it.
    SCOPED_CSS = False
    DEFAULT_CSS = """
    DetailPane { background: $surface 0%; overflow-y: scroll; }
    .detail { width: 1fr; padding: 0 1; border-left: vkey $foreground 20%; }
    .-narrow View > Horizontal > .detail { border-left: none; border-top: hkey $foreground 20%; height: 1fr; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        # min_width=1: RichLog renders at least 78 columns by default, wider than a side pane.
        super().__init__(id=id, classes=classes, wrap=True, markup=False, highlight=False, auto_scroll=False, min_width=1)
        self._parts: list[RenderableType] = []
        self._shown_width = 0

    def show(self, *parts: RenderableType | Iterable[RenderableType]) -> None:
        flat: list[RenderableType] = []
        for part in parts:
            if isinstance(part, list | tuple):
                flat.extend(part)
            else:
                flat.append(part)  # type: ignore[arg-type]
        self._parts = flat
        self._render_parts()
        self.scroll_home(animate=False)

    def _render_parts(self) -> None:
        self.clear()
        self._shown_width = self.scrollable_content_region.width
        for part in self._parts:
            if isinstance(part, Syntax):
                self.write(part, expand=True, shrink=False)
            else:
                self.write(part, expand=True, shrink=True)

    def on_resize(self, event: Resize) -> None:
        super().on_resize(event)
        if self._parts and size_known(self) and self.scrollable_content_region.width != self._shown_width:
            self._render_parts()  # text re-wraps to the new width

    def text(self) -> str:
        """What the pane shows, as plain text (tests, search)."""
        return "\n".join(strip.text.rstrip() for strip in self.lines)
