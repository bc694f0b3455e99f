"""Work the TUI does in threads so that a big run's overview is on the screen first (issue
18): the cache story and the Causes count. Forced onto the thread path here (thresholds at
0) on real recordings, the screen must end up saying what the synchronous path says."""

from __future__ import annotations

import pytest
from textual.widgets import TabbedContent

from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from dyn_inspect.tui.views import causes as causes_view
from dyn_inspect.tui.views import overview
from tui_support import SIZE, flat, settle, static_text


async def _wait(pilot, condition, timeout: float = 30.0) -> None:  # noqa: ANN001
    for _ in range(int(timeout / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("the background work never showed")


async def test_the_cache_story_read_in_a_thread_is_the_story(cache_warm_run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(overview, "READ_AT_ONCE", 0)
    app = InspectorApp(cache_warm_run.path, run=cache_warm_run, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _wait(pilot, lambda: "warm cache:" in static_text(app, "#overview-cache"))
        text = flat(static_text(app, "#overview-cache"))
        assert "warm cache: 1 of 3 compiles served from the cache" in text
        assert "compiled anyway: only_here (2/0) — FX graph cache miss" in text


async def test_the_causes_count_ranked_in_a_thread_is_the_count(example_run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(causes_view, "RANK_IN_THREAD_ABOVE", 0)
    app = InspectorApp(example_run.path, run=example_run, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tab = app.query_one(TabbedContent).get_tab("causes")
        await _wait(pilot, lambda: tab.label.plain != "Causes (…)")
        # the example's 5 batch-size recompiles (one cause) and its three break sites
        assert tab.label.plain == "Causes (4)"
        await pilot.press("c")
        await settle(pilot)
        assert app.query_one("#causes-table").row_count == 4
