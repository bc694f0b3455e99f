"""The narrow screen's list of views (``ViewBar``), in a module of its own: the app imports it
for its first frame, which waits for nothing the views' shared widgets need."""

from __future__ import annotations

from collections.abc import Iterable

from rich.style import Style
from rich.text import Text
from textual.events import Resize
from textual.widgets import Static


class ViewBar(Static):
    """Every view's key and tab label, on as many lines as the screen needs: shown instead of
    the tab row under 110 columns (the screen's class -narrow), where the row scrolled every
    tab after Output off an 80-column screen and nothing said there were more. A label is
    clicked as a tab is; the shown view's is highlighted."""

    SCOPED_CSS = False
    DEFAULT_CSS = """
    ViewBar { height: auto; padding: 0 1; display: none; border-bottom: hkey $foreground 20%; }
    .-narrow ViewBar { display: block; }
    .-narrow TabbedContent Tabs { display: none; }
    """

    _views: list[tuple[str, str | None, str]]
    _active = ""

    def show_views(self, views: Iterable[tuple[str, str | None, str]], active: str) -> None:
        """``views``: (id, key or None, tab label) of each view shown, in the tabs' order.
        Items are packed into lines whole (a label is never broken inside)."""
        self._views = list(views)
        self._active = active
        self._pack()

    def on_resize(self, _event: Resize) -> None:
        if getattr(self, "_views", None):
            self._pack()

    def _pack(self) -> None:
        width = max(20, self.app.size.width - 2)
        text = Text(no_wrap=True)
        used = 0
        for view_id, key, label in self._views:
            item = f"{key} {label}" if key else label
            if used and used + 2 + len(item) > width:
                text.append("\n")
                used = 0
            elif used:
                text.append("  ")
                used += 2
            click = Style(meta={"@click": f"app.show({view_id!r})"})
            if key:
                text.append(key, Style(bold=True) + click)
                text.append(" ", click)
            text.append(label, (Style(reverse=True, bold=True) if view_id == self._active else Style()) + click)
            used += len(item)
        self.update(text)
