"""The views in their tabs (``TabsMixin``, a part of ``InspectorApp``): each view made when
first needed (its module imported then), mounted when first shown, and synced from the
model when shown and stale; which tabs the run has (``VIEWS``' ``shown_for``: the others
are hidden and their keys do nothing); the tab labels and the narrow screen's view bar.

Only the visible view is synced on an update: the others are marked stale and caught up
when shown, so the cost of an update is the visible view's.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.widgets import TabbedContent, TabPane

from dyn_inspect.tui.app_state import AppState
from dyn_inspect.tui.display import run_cwd
from dyn_inspect.tui.view_bar import ViewBar
from dyn_inspect.tui.view_list import TITLES, VIEW_IDS, VIEWS, RunFacts, shown_views
from dyn_inspect.tui.views.base import Context, View

if TYPE_CHECKING:
    from dyn_inspect.tui.views.output import OutputView


def view_class(view_id: str) -> type[View]:
    """The class of a tab's view, its module imported now if it was not."""
    module, name = next(v.where for v in VIEWS if v.id == view_id).split(":")
    cls: type[View] = getattr(importlib.import_module(f"dyn_inspect.tui.views.{module}"), name)
    return cls


class TabsMixin(AppState):
    def view(self, view_id: str) -> View:
        """The view of a tab, mounted or not (``search`` and ``tab_label`` read the run,
        not the view's widgets); made the first time it is asked for."""
        view = self._views.get(view_id)
        if view is None:
            cls = view_class(view_id)
            if view_id == "output":
                view = cls(id=f"view-{view_id}", interactive=self.launch is not None)  # type: ignore[call-arg]
            else:
                view = cls(id=f"view-{view_id}")
            self._views[view_id] = view
        return view

    def mounted(self, view_id: str) -> bool:
        view = self._views.get(view_id)
        return view is not None and view.is_mounted

    async def show_view(self, view_id: str) -> View:
        """Make the view's tab the active one, mounted (the first time it is shown) and up
        to date."""
        view = await self._mount_view(view_id)
        tabs = self.query_one(TabbedContent)
        if tabs.active != view_id:
            tabs.active = view_id
        if view_id in self._stale:
            self._sync()
        return view

    async def _mount_view(self, view_id: str) -> View:
        view = self.view(view_id)
        if not view.is_mounted:
            await self.query_one(f"TabPane#{view_id}", TabPane).mount(view)
            self._stale.add(view_id)
        return view

    @property
    def output_view(self) -> OutputView:
        from dyn_inspect.tui.views.output import OutputView

        view = self.view("output")
        assert isinstance(view, OutputView)
        return view

    @property
    def active_view(self) -> str:
        return self.query_one(TabbedContent).active or "overview"

    def _make_views(self) -> None:
        """Every view, once the first frame is on the screen: their tab labels count what
        they show (their modules' imports took a fifth of the time to the first frame)."""
        if len(self._views) < len(VIEWS):
            for view_id in VIEW_IDS:
                self.view(view_id)
            self._sync()

    def context(self) -> Context:
        assert self.loaded_run is not None
        return Context(self.loaded_run, self.scope, run_cwd(self.loaded_run.model))

    def _sync(self, all_views: bool = False) -> None:
        """Bring the header, the tab labels and the visible view up to date."""
        if self.loaded_run is None:
            return
        with self.lock:
            ctx = self.context()
            model = ctx.run.model
            self._sync_header(ctx)
            tabs = self.query_one(TabbedContent)
            for view_id, title, *_ in VIEWS:
                # A view not made yet has its plain title (``_make_views`` follows the first frame).
                view = self._views.get(view_id)
                tabs.get_tab(view_id).label = Text(view.tab_label(ctx) if view is not None else title)
            self._show_tabs_for(RunFacts(ranks=len(model.ranks()), profiled=bool(model.step_profiles)))
            self._show_view_bar()
            targets = VIEW_IDS if all_views else [self.active_view]
            for view_id in targets:
                if not self.mounted(view_id):
                    continue  # synced when first shown
                if view_id in self._stale and view_id != "output":
                    self.view(view_id).sync(ctx)
                self._stale.discard(view_id)
            self.synced_events = model.event_count

    # -- which tabs the run has ------------------------------------------------------------

    def _show_tabs_for(self, run: RunFacts) -> None:
        """Show the tabs of the views ``run`` has, hide the others' (``VIEWS``' ``shown_for``)."""
        shown = shown_views(run)
        if shown == self._shown:
            return
        tabs = self.query_one(TabbedContent)
        for view_id in VIEW_IDS:
            if (view_id in shown) != (view_id in self._shown):
                (tabs.show_tab if view_id in shown else tabs.hide_tab)(view_id)
        self._shown = shown
        self.refresh_bindings()  # (the keys of the views hidden, or shown again: ``check_action``)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A view's key does nothing, and is not listed, while its tab is hidden."""
        if action == "show" and parameters and parameters[0] not in self._shown:
            return False
        return super().check_action(action, parameters)

    @on(TabbedContent.TabActivated)
    async def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        view_id = event.pane.id
        if view_id is None or view_id not in TITLES:
            return
        # The tab is active already (a click, or ``show_view``): never set it again here,
        # the active tab may have moved on since this message was sent.
        await self._mount_view(view_id)
        self._show_view_bar()
        if view_id in self._stale and view_id == self.active_view:
            self._sync()

    def _show_view_bar(self) -> None:
        """The narrow screen's list of views (``ViewBar``): the tabs shown, as labelled now."""
        tabs = self.query_one(TabbedContent)
        shown = [(v.id, v.key, str(tabs.get_tab(v.id).label)) for v in VIEWS if v.id in self._shown]
        self.query_one(ViewBar).show_views(shown, self.active_view)
