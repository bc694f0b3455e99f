"""Cache details on a real warm run (tests/corpus/cache/train.py, recorded twice with one
Inductor cache, the first time from a copy elsewhere): per compile, FX graph / AOTAutograd
hit, miss or bypass with torch's reason; ``dyn-inspect cache``; the TUI overview's "why a
warm run still compiled". What each function must do comes from the program: ``cached``
was compiled by the copy too (hit), ``bypassed`` calls an ``allow_in_graph`` function
(AOTAutograd cannot cache it), ``only_here`` is compiled by this checkout only (miss)."""

from __future__ import annotations

import json

import pytest

from dyn_inspect.cli import main
from dyn_inspect.inspector.analysis.cache import cache_report, miss_diff
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from tui_support import SIZE, flat, settle, static_text


def test_each_compile_says_hit_miss_or_bypass_with_torchs_reason(cache_warm_run: Run) -> None:
    report = cache_report(cache_warm_run)
    by_fn = {cc.function: cc for cc in report.compiles if cc.lookups}
    assert set(by_fn) == {"cached", "bypassed", "only_here"}
    cached, bypassed, only_here = by_fn["cached"], by_fn["bypassed"], by_fn["only_here"]
    assert [lk.state for lk in cached.lookup("fx_graph")] == ["hit"]
    assert [lk.state for lk in cached.lookup("aotautograd")] == ["hit"]
    assert cached.verdict == "hit" and cached.why_compiled() is None
    assert all(lk.time_saved_s and lk.time_saved_s > 0 for lk in cached.lookups)
    (aot,) = bypassed.lookup("aotautograd")
    assert aot.state == "bypass"
    assert aot.reason is not None and "Unsupported call_function target" in aot.reason and "opaque" in aot.reason
    assert " at 0x" not in aot.reason  # torch's reason has the function's address: not useful, not stable
    assert bypassed.verdict == "bypass"
    why = bypassed.why_compiled()
    assert why is not None and why.startswith("AOTAutograd cache bypassed: Unsupported call_function target")
    assert [lk.state for lk in only_here.lookup("fx_graph")] == ["miss"]
    assert only_here.verdict == "miss"
    why = only_here.why_compiled()
    assert why is not None and why.startswith("FX graph cache miss")
    diff = miss_diff(cache_warm_run, only_here)
    # The nearest graph of the run has other code: `gm` (the graph module) differs, its input does not.
    assert diff is not None and "gm" in diff.differs and "example_inputs[0]" not in diff.differs
    assert report.warm and report.time_saved_s > 0


def test_story_of_a_warm_run(cache_warm_run: Run) -> None:
    story = cache_report(cache_warm_run).story(dynamo_s=0.5)
    assert story[0].startswith("warm cache: 1 of 3 compiles served from the cache")
    assert "Dynamo still traced every frame" in story[0]
    assert any(line.startswith("compiled anyway: bypassed") and "AOTAutograd cache bypassed" in line for line in story[1:])
    assert any(line.startswith("compiled anyway: only_here") and "FX graph cache miss" in line for line in story[1:])
    assert not any("cached (" in line for line in story[1:])


def test_cli_cache_text_and_json(cache_warm_run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", str(cache_warm_run.path)]) == 0
    text = capsys.readouterr().out
    assert "warm cache: 1 of 3 compiles served from the cache" in text
    assert "Unsupported call_function target" in text and "served from the cache" in text
    assert "gm (the graph's code)" in text
    assert main(["cache", str(cache_warm_run.path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["warm"] is True
    verdicts = {c["function"]: c["verdict"] for c in data["compiles"] if c["lookups"]}
    assert verdicts == {"cached": "hit", "bypassed": "bypass", "only_here": "miss"}
    miss = next(c for c in data["compiles"] if c["function"] == "only_here")
    assert "gm" in miss["miss_differs_from"]["components"]


def test_cli_cache_on_a_bad_run_is_one_line(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x.jsonl").write_text("not json\n")
    assert main(["cache", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


async def test_overview_says_why_a_warm_run_still_compiled(cache_warm_run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    """The overview's lines are the story ``cache --json`` prints, Dynamo's seconds
    included (until issue 30 the overview took them from its own stage sums: equal here,
    but a second computation of the same figure)."""
    assert main(["cache", str(cache_warm_run.path), "--json"]) == 0
    story = json.loads(capsys.readouterr().out)["story"]
    app = InspectorApp(cache_warm_run.path, run=cache_warm_run, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = flat(static_text(app, "#overview-cache"))
        assert "warm cache: 1 of 3 compiles served from the cache" in text
        assert "compiled anyway: bypassed (1/0) — AOTAutograd cache bypassed" in text
        assert "compiled anyway: only_here (2/0) — FX graph cache miss" in text
        assert len(story) == 3 and all(flat(line) in text for line in story)


def test_triton_bundle_of_the_gpu_trace(gpu_trace_run: Run) -> None:
    """The H200 TORCH_TRACE fixture (cold cache, real Triton kernels): every FX graph lookup
    missed and bundled its Triton kernels — the kernels Inductor generated for that compile."""
    report = cache_report(gpu_trace_run)
    fx = [(cc, lk) for cc in report.compiles for lk in cc.lookup("fx_graph")]
    assert fx and all(lk.state == "miss" for _, lk in fx)
    assert not report.warm and report.story(1.0) == []
    bundled = [(cc, lk) for cc, lk in fx if lk.triton_kernels]
    assert bundled
    for cc, lk in bundled:
        names = {k.name for k in cc.compile.kernels}
        assert set(lk.triton_kernels) <= names, (lk.triton_kernels, names)
        assert f"{len(lk.triton_kernels)} Triton kernels bundled into the entry" in lk.describe()
