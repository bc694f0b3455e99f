"""The compile timeline on real recordings: each compile's what/why (compiled, recompiled
with the failed guard, cache hit), its nested breakdown from torch's own spans, the TUI's
Timeline view, and ``trace.json`` in every export bundle (whole run and partial)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from dyn_inspect.inspector.analysis.timeline import compile_breakdowns, timeline_entries
from dyn_inspect.inspector.export import export_run
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from dyn_inspect.tui.display import duration
from tui_support import SIZE, cursor_row, flat, rows, settle, show_view, static_text


def test_entries_say_compiled_recompiled_and_cache_hit(shapes_run: Run, cache_warm_run: Run) -> None:
    entries = {(e.function, e.compile.cid): e for e in timeline_entries(shapes_run)}
    # shapes.py calls `auto` with 4 then 7 elements: the second call recompiles.
    assert entries[("auto", "1/0")].what == "compiled"
    again = entries[("auto", "1/1")]
    assert again.what == "recompiled" and "size mismatch at index 0. expected 4, actual 7" in again.why
    times = [e.t for e in timeline_entries(shapes_run)]
    assert times == sorted(times) and all(t >= 0 for t in times)
    warm = {e.function: e for e in timeline_entries(cache_warm_run)}
    assert warm["cached"].what == "compiled, cache hit" and warm["cached"].cache == "hit"
    assert warm["bypassed"].cache == "bypass" and warm["only_here"].cache == "miss"


def _path_to(roots, name: str) -> list[str] | None:
    for root in roots:
        if root.name == name:
            return [root.name]
        below = _path_to(root.children, name)
        if below is not None:
            return [root.name, *below]
    return None


def test_breakdown_is_nested_from_torchs_spans(cache_warm_run: Run) -> None:
    spans = compile_breakdowns(cache_warm_run)
    by_fn = {c.capture.co_name: c for c in cache_warm_run.model.compiles.values() if c.capture}
    hit = spans[(by_fn["cached"].log, by_fn["cached"].cid)]
    # A warm hit: the backend's time is loading the cached module, inside the frame's compile.
    path = _path_to(hit, "AOTAutogradCache.inductor_load")
    assert path is not None and path[:2] == ["dynamo", "entire_frame_compile"] and "backend_compile" in path
    miss = spans[(by_fn["only_here"].log, by_fn["only_here"].cid)]
    path = _path_to(miss, "fx_codegen_and_compile")
    assert path is not None and "backend_compile" in path and "inductor_compile" in path
    for roots in spans.values():  # every child lies inside its parent
        stack = list(roots)
        while stack:
            node = stack.pop()
            for child in node.children:
                assert node.ts <= child.ts and child.ts + child.dur <= node.ts + node.dur + 1e-3
                stack.append(child)


async def test_tui_timeline_view(shapes_run: Run) -> None:
    app = InspectorApp(shapes_run.path, run=shapes_run, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await show_view(pilot, "9")
        table = app.query_one("#timeline-table")
        got = rows(table)  # type: ignore[arg-type]
        assert [r[1] for r in got] == ["0/0", "1/0", "1/1"]
        assert [r[3] for r in got] == ["compiled", "compiled", "recompiled"]
        while cursor_row(table)[1] != "1/1":  # type: ignore[arg-type]
            await pilot.press("down")
        await settle(pilot)
        detail = flat(static_text(app, "#timeline-detail"))
        assert "failed guard: tensor 'x' size mismatch at index 0. expected 4, actual 7" in detail
        assert "automatic dynamic: x.shape[0] (s" in detail and ") now dynamic" in detail  # why it will not recompile again
        assert "where the time went" in detail and "backend (AOTAutograd + Inductor)" in detail and "Inductor" in detail
        # One figure (issue 28 #10): the pane's compile time is the row's, Recompiles' and the summary's.
        c = next(c for c in shapes_run.model.compiles_in_order() if c.cid == "1/1")
        assert f"compile time {duration(c.compile_time_s)}" in detail and cursor_row(table)[-1] == duration(c.compile_time_s)  # type: ignore[arg-type]
        loc = app.view("timeline").selected_location()
        assert loc is not None and loc.name == "auto" and loc.file.endswith("shapes.py")


def test_every_bundle_holds_the_trace(shapes_run: Run, tmp_path: Path) -> None:
    export_run(shapes_run, tmp_path / "whole.zip")
    with zipfile.ZipFile(tmp_path / "whole.zip") as z:
        trace = json.loads(z.read("trace.json"))
        assert "`trace.json`" in z.read("index.md").decode()
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["args"].get("compile_id") for e in spans} >= {"0/0", "1/0", "1/1"}
    assert any(e["name"] == "recompile: auto" for e in trace["traceEvents"])
    export_run(shapes_run, tmp_path / "part.zip", compile_ids=["1/1"])
    with zipfile.ZipFile(tmp_path / "part.zip") as z:
        part = json.loads(z.read("trace.json"))
    ids = {e["args"].get("compile_id") for e in part["traceEvents"] if e["ph"] != "M"}
    assert "1/1" in ids and "0/0" not in ids and "1/0" not in ids
