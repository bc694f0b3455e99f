"""Getting around (``NavigationMixin``, a part of ``InspectorApp``): a view's key and the
focus it puts in the view, search across every view (``/``), the selected line in
``$EDITOR`` (``o``) and the key panel (``?``)."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

from textual import events

from dyn_inspect.tui.app_state import AppState
from dyn_inspect.tui.display import display_loc, run_cwd
from dyn_inspect.tui.view_list import VIEW_IDS
from dyn_inspect.tui.views.base import SearchHit

if TYPE_CHECKING:
    from textual.widget import Widget

    from dyn_inspect.inspector.events import Loc


class NavigationMixin(AppState):
    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        from textual.widgets import Input

        if not self.cursor_blink and isinstance(event.widget, Input):
            event.widget.cursor_blink = False

    def _focus_view(self, view_id: str) -> None:
        """Focus the view's main widget. (Leaving focus inside the previous tab would make
        TabbedContent switch back to it.)"""
        from textual.widgets import DataTable, OptionList, Tree

        view = self.view(view_id)
        target: Widget | None = None
        if view_id == "output":
            stdin = view.query_one("#stdin")
            target = stdin if stdin.display else view.query_one("#output-log")
        else:
            for widget_type in (DataTable, Tree, OptionList):
                found = list(view.query(widget_type))
                if found:
                    target = found[0]
                    break
            else:
                target = next((w for w in view.query("*") if w.can_focus), None)
        if target is not None:
            # At once, not ``focus()``'s next turn: the pane shown a moment ago is new, and
            # the screen moves a focus left in the hidden pane to the tabs meanwhile.
            self.set_focus(target)

    async def action_show(self, view_id: str) -> None:
        """A view's key (``VIEWS``), or its label clicked in the view bar."""
        await self.show_view(view_id)
        self._focus_view(view_id)

    def action_search(self) -> None:
        if self.loaded_run is None:
            return

        async def done(hit: SearchHit | None) -> None:
            if hit is not None:
                view = await self.show_view(hit.view)
                view.reveal(hit.key)

        from dyn_inspect.tui.screens import SearchScreen

        self.push_screen(SearchScreen(self.search), done)

    def search(self, query: str) -> list[SearchHit]:
        """Every view's matches for ``query``, in view order."""
        if self.loaded_run is None:
            return []
        hits: list[SearchHit] = []
        with self.lock:
            ctx = self.context()
            for view_id in VIEW_IDS:
                hits.extend(self.view(view_id).search(ctx, query))
        return hits

    def action_open_editor(self) -> None:
        loc = self.view(self.active_view).selected_location()
        if loc is None:
            self.notify("Nothing with a source line is selected.", severity="warning")
            return
        self.open_in_editor(loc)

    def open_in_editor(self, loc: Loc) -> None:
        # A run names what it likes: only a regular file goes to the editor (no FIFO or
        # device to hang it), and always by its absolute path (editor_command).
        if not os.path.isfile(loc.file):
            self.notify(f"{loc.file} is not a file on this machine.", severity="error")
            return
        from dyn_inspect.tui.source import editor_command

        command = editor_command(loc.file, loc.line)
        try:
            with self.suspend():
                subprocess.call(command)  # noqa: S603 - the user's own $EDITOR
        except FileNotFoundError:
            self.notify(f"cannot start the editor: {command[0]} (set $EDITOR)", severity="error")
        except Exception as exc:  # noqa: BLE001 - e.g. SuspendNotSupported when headless
            self.notify(f"cannot open an editor here: {exc}", severity="error")
        else:
            cwd = run_cwd(self.loaded_run.model) if self.loaded_run is not None else None
            self.notify(f"Opened {display_loc(loc, cwd)}", timeout=2)

    def action_toggle_help(self) -> None:
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()
