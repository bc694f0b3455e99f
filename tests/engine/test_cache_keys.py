"""A warm Inductor cache stays warm under dyn-inspect (issue 28 item 9): provenance
tracking, on by default, must not change the FX graph / AOTAutograd cache keys, and
``dyn-inspect cache`` calls a run cold only when the cache directory held nothing.

One tiny program (tests/corpus/cache/keys.py, two graphs) with real Inductor compiles:
run plainly twice into a fresh cache, then recorded into that warm cache; and recorded
first into another fresh cache, then run plainly there. torch's own counters (printed by
the program) and the recorded run's cache analysis must agree."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest

from corpus_support import CORPUS, DYN_INSPECT, records
from dyn_inspect.cli import main
from dyn_inspect.inspector.analysis.cache import cache_report
from dyn_inspect.inspector.run import Run

PROGRAM = CORPUS / "cache" / "keys.py"
_COUNTS_RE = re.compile(r"^fxgraph hit=(\d+) miss=(\d+)$", re.M)


@dataclass
class Step:
    hits: int  # torch's fxgraph_cache_hit, as the program printed it
    misses: int
    run: Run | None = None  # the recorded run (None for a plain one)


@dataclass
class Steps:
    plain_cold: Step
    plain_warm: Step
    recorded_warm: Step  # under dyn-inspect, on the cache the plain runs filled
    recorded_cold: Step  # under dyn-inspect, on a fresh cache
    plain_after_recorded: Step  # plainly, on the cache the recorded run filled
    warm_cache: Path
    fresh_cache: Path


def _step(cache: Path, runs: Path | None) -> Step:
    env = dict(os.environ)
    for var in ("DYN_INSPECT_RUNS_DIR", "DYN_INSPECT_RUN_DIR", "TORCH_LOGS", "TORCH_TRACE", "DYN_INSPECT_PROVENANCE"):
        env.pop(var, None)
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    env["DYN_INSPECT_NO_TUI"] = "1"
    cmd = [sys.executable, str(PROGRAM)]
    if runs is not None:
        cmd = [str(DYN_INSPECT), "run", "--no-tui", "--runs-dir", str(runs), str(PROGRAM)]
    proc = subprocess.run(cmd, cwd=PROGRAM.parent, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    m = _COUNTS_RE.search(proc.stdout)
    assert m, proc.stdout[-2000:] + proc.stderr[-2000:]
    run = None
    if runs is not None:
        run = Run(next(p for p in sorted(runs.iterdir()) if p.is_dir() and not p.is_symlink()))
    return Step(int(m[1]), int(m[2]), run)


@pytest.fixture(scope="module")
@records
def steps(tmp_path_factory: pytest.TempPathFactory) -> Steps:
    root = tmp_path_factory.mktemp("cache-keys")
    warm, fresh = root / "inductor-warm", root / "inductor-fresh"
    plain_cold = _step(warm, None)
    plain_warm = _step(warm, None)
    recorded_warm = _step(warm, root / "runs-warm")
    recorded_cold = _step(fresh, root / "runs-fresh")
    plain_after = _step(fresh, None)
    return Steps(plain_cold, plain_warm, recorded_warm, recorded_cold, plain_after, warm, fresh)


@pytest.mark.corpus
def test_a_warm_cache_stays_warm_under_dyn_inspect(steps: Steps) -> None:
    assert (steps.plain_cold.hits, steps.plain_cold.misses) == (0, 2)
    assert (steps.plain_warm.hits, steps.plain_warm.misses) == (2, 0)
    rec = steps.recorded_warm
    assert (rec.hits, rec.misses) == (steps.plain_warm.hits, steps.plain_warm.misses)
    assert rec.run is not None
    report = cache_report(rec.run)
    assert report.count("fx_graph", "hit") == steps.plain_warm.hits
    assert report.count("fx_graph", "miss") == 0 and report.count("aotautograd", "miss") == 0
    assert report.warm and report.cold() is None
    # The kernel → line hook was on (installed once Inductor was imported, so the process's
    # end says it): the keys were kept, not by turning it off.
    (process,) = rec.run.model.processes.values()
    assert process.end is not None and process.end.hooks["provenance"] == "active"


@pytest.mark.corpus
def test_what_dyn_inspect_compiled_serves_a_plain_run(steps: Steps) -> None:
    assert (steps.recorded_cold.hits, steps.recorded_cold.misses) == (0, 2)
    assert (steps.plain_after_recorded.hits, steps.plain_after_recorded.misses) == (2, 0)


@pytest.mark.corpus
def test_the_cache_directory_is_noted_when_the_first_compile_starts(steps: Steps) -> None:
    assert steps.recorded_warm.run is not None and steps.recorded_cold.run is not None
    warm = cache_report(steps.recorded_warm.run).before
    assert warm is not None and Path(warm.path) == steps.warm_cache
    assert (warm.fx_graph_entries, warm.aotautograd_entries) == (2, 2)  # the plain runs' two graphs
    fresh = cache_report(steps.recorded_cold.run).before
    assert fresh is not None and Path(fresh.path) == steps.fresh_cache
    assert (fresh.fx_graph_entries, fresh.aotautograd_entries) == (0, 0)


@pytest.mark.corpus
def test_cache_command_never_calls_a_warm_run_cold(steps: Steps, capsys: pytest.CaptureFixture[str]) -> None:
    assert steps.recorded_warm.run is not None and steps.recorded_cold.run is not None
    assert main(["cache", str(steps.recorded_warm.run.path)]) == 0
    text = capsys.readouterr().out
    assert "warm cache: 2 of 2 compiles served from the cache" in text
    assert "cold" not in text and "first run" not in text
    # A really fresh cache is cold, and says why from the fact.
    assert main(["cache", str(steps.recorded_cold.run.path)]) == 0
    text = capsys.readouterr().out
    assert "cold cache: nothing came from the cache" in text and "held no entries when the run started" in text
    assert main(["cache", str(steps.recorded_cold.run.path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["warm"] is False and "held no entries" in data["cold"]


@pytest.mark.corpus
def test_misses_in_a_cache_with_entries_are_not_a_first_run(steps: Steps) -> None:
    """The fresh run's real misses, had the directory held other programs' entries."""
    assert steps.recorded_cold.run is not None
    report = cache_report(steps.recorded_cold.run)
    assert report.before is not None
    other = dataclasses.replace(report, before=msgspec.structs.replace(report.before, fx_graph_entries=3, aotautograd_entries=1))
    cold = other.cold()
    assert cold is not None and "first run" not in cold and not cold.startswith("cold cache")
    assert "held 3 FX graph entries and 1 AOTAutograd entry when the run started: none had this run's keys" in cold
