"""Cost verdicts a user can bet on (issue 57), on real CPU compiles.

tests/corpus/ab_same.py is a step compiling cannot speed up (three chained matmuls, nothing
to fuse: Inductor calls the same ATen matmul eager does). Recorded with ``--profile=10``,
its unprofiled steps run compiled and under ``torch.compiler.set_stance("force_eager")`` in
alternating blocks in the same process: `cost` must not call either faster — the ratio's
interval holds 1.0, or the verdict says "within noise" — also while a CPU hog loads both
CPUs beside the recording, which the report must notice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from corpus_support import CORPUS, DYN_INSPECT
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports import cost
from dyn_inspect.inspector.run import Run

PROGRAM = CORPUS / "ab_same.py"


def _only(report: typed.CostReport) -> typed.StepBreakdown:
    assert report.message is None and len(report.processes) == 1, report
    return report.processes[0]


def _no_faster_verdict(ab: typed.EagerComparison) -> None:
    v = ab.verdict
    assert v is not None and ab.in_process
    assert (v.low <= 1.0 <= v.high) or "within noise" in ab.text, ab.text
    if not v.resolved:
        assert "within noise (" in ab.text and "pays back" not in ab.text and ab.pays_back_after_steps is None


def test_same_speed_is_not_called_faster(ab_same_run: Run) -> None:
    p = _only(cost(ab_same_run))
    assert p.ab is not None, p.ab_note
    _no_faster_verdict(p.ab)
    # ten steps in each arm, in 2-step blocks (--profile=10), each timed on its own
    [(_, profile)] = ab_same_run.model.step_profiles
    assert len(profile.plain_samples_us) == len(profile.eager_samples_us) == 10 and profile.ab_block == 2
    assert p.ab.compiled_spread is not None and p.ab.eager_spread is not None and p.ab.compiled_spread.n == 10
    # A force_eager step compiles nothing and is no recompile: one compile, as without it
    m = ab_same_run.model
    assert [c.cid for c in m.compiles_in_order()] == ["0/0"] and m.recompiles == []
    # the noise is said, with the threads the program asked for
    assert p.noise is not None and p.noise.threads == 1 and p.noise.cpus >= 1
    assert p.noise.text.startswith("the machine was ")


def test_cost_json_carries_every_figures_spread(ab_same_run: Run, step_cost_run: Run) -> None:
    for run in (ab_same_run, step_cost_run):
        done = subprocess.run([str(DYN_INSPECT), "cost", str(run.path), "--json"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        [p] = json.loads(done.stdout)["processes"]
        whats = [f["what"] for f in p["figures"]]
        assert whats[0] == "step (profiled)" and {"compiled graphs", "guard checks", "outside compiled code"} <= set(whats)
        for f in p["figures"]:
            s = f["spread"]
            # the unprofiled steps: as many as ran before the program ended (step_cost.py: few)
            assert s["n"] == (p["plain_steps"] if f["what"] == "step without the profiler" else p["steps"]), f
            if s["n"] < 2:
                continue
            assert s["min_us"] <= s["q1_us"] <= s["median_us"] <= s["q3_us"] <= s["max_us"], f
            assert s["low_us"] <= s["median_us"] <= s["high_us"] and 0.9 < s["confidence"] < 1 and s["text"] in f["text"]
        for r in p["regions"] + p["backward"]:
            assert r["spread"]["n"] == p["steps"], r
        for b in p["breaks"]:
            v = b["verdict"]
            assert b["spread"]["n"] == p["steps"] and v["low"] <= v["value"] <= v["high"] and v["text"] == b["text"]
        if p["ab"] is not None:
            v = p["ab"]["verdict"]
            assert v["low"] <= v["value"] <= v["high"] and v["text"] == p["ab"]["text"] and 0.9 < v["confidence"] < 1
        else:
            assert p["ab_note"], p  # step_cost.py ends before its eager steps: said why
    assert json.loads(subprocess.run([str(DYN_INSPECT), "cost", str(step_cost_run.path), "--json"], capture_output=True, text=True).stdout)[
        "processes"
    ][0]["ab_note"] == "the program ended before the eager steps"


def _hogs(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def test_same_speed_under_a_cpu_hog(tmp_path: Path) -> None:
    """Two spinning processes load both CPUs while the program records with torch's default
    threads: the steps swing, both arms alike; the verdict stays "no faster", and the report
    says the machine was busy and how to fit the threads to the CPUs left."""
    env = {**os.environ, "DYN_INSPECT_RUNS_DIR": str(tmp_path / "runs")}
    env.pop("OMP_NUM_THREADS", None)
    hogs = _hogs(2)
    try:
        done = subprocess.run(
            [str(DYN_INSPECT), "run", "--profile=6", str(PROGRAM), "24"],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=tmp_path,
            env=env,
        )
    finally:
        for h in hogs:
            h.kill()
        for h in hogs:
            h.wait()
    assert done.returncode == 0, done.stderr[-3000:]
    [run_dir] = [d for d in (tmp_path / "runs").iterdir() if d.is_dir() and not d.is_symlink()]
    p = _only(cost(Run(run_dir)))
    assert p.ab is not None, p.ab_note
    _no_faster_verdict(p.ab)
    assert p.noise is not None and p.noise.busy, p.noise
    assert p.noise.others_busy_cpus is not None and p.noise.others_busy_cpus >= 0.5
    if p.noise.threads > 1:  # torch's default on a machine of several CPUs: more threads than free CPUs
        assert p.noise.oversubscribed and p.noise.fix is not None and "OMP_NUM_THREADS=" in p.noise.fix
        assert "torch.set_num_threads(" in p.noise.fix
