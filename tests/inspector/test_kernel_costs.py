"""Kernel costs on screen (``--profile-kernels``) on a real CPU profile: ``dyn-inspect
kernels`` and the TUI's Kernels view get time/step, calls/step, GB/s and GFLOP/s columns,
sortable, plus the compile id; kernel names are never folded; Kineto's ``USDT: …
profiler_start`` lines never reach the program's terminal. The program (written below) is
a Linear+ReLU trained for 6 steps, 2 of them profiled; its matmul runs in a library kernel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from corpus_support import CACHE_ENV, DYN_INSPECT
from dyn_inspect.cli import main
from dyn_inspect.inspector.analysis.costs import cost_of, kernel_cost
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from inductor_pool import seed
from tui_support import SIZE, kernel_names, rows, settle

STEPS = 2
PROGRAM = textwrap.dedent(
    """
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU())
    step = torch.compile(model)
    for _ in range(6):
        step(torch.randn(32, 64)).sum().backward()
    print("trained", flush=True)
    """
)


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, str]:
    """The recording and everything the program's terminal got (stdout + stderr)."""
    cache = os.environ.get(CACHE_ENV)
    base = Path(cache) / "kernel-costs" if cache else tmp_path_factory.mktemp("kernel-costs")
    done = base / "terminal.txt"
    if not (cache and done.is_file() and (base / "prog.py").read_text() == PROGRAM):  # (kept: the same program only)
        shutil.rmtree(base, ignore_errors=True)  # an earlier program's run would be read first
        base.mkdir(parents=True, exist_ok=True)
        (base / "prog.py").write_text(PROGRAM)
        env = {k: v for k, v in os.environ.items() if k not in ("DYN_INSPECT_RUNS_DIR", "KINETO_LOG_LEVEL")}
        env["TORCHINDUCTOR_CACHE_DIR"] = seed(base / "inductor-cache")
        cmd = [str(DYN_INSPECT), "run", "--no-tui", "--runs-dir", str(base / "runs"), "--profile-kernels", str(STEPS), "prog.py"]
        proc = subprocess.run(cmd, cwd=base, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        done.write_text(proc.stdout + proc.stderr)
    run_dir = next(p for p in sorted((base / "runs").iterdir()) if p.is_dir() and not p.is_symlink())
    return Run(run_dir), done.read_text()


def test_profiler_noise_never_reaches_the_terminal(profiled) -> None:
    run, terminal = profiled
    assert "trained" in terminal
    assert run.model.kernel_profiles  # the profiler did run
    assert "USDT" not in terminal and "profiler_start" not in terminal and "profiler_stop" not in terminal


def test_cli_kernels_has_cost_columns_sorted_by_time(profiled, capsys: pytest.CaptureFixture[str]) -> None:
    run, _ = profiled
    assert main(["kernels", str(run.path)]) == 0
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if line.startswith("compile"))
    assert header.split()[:6] == ["compile", "kernel", "time/step", "calls/step", "GB/s", "GFLOP/s"]
    for k in run.model.kernels:  # whole names, never folded across lines
        assert any(k.name in line.split() for line in text.splitlines()), k.name
    assert "library kernels (profiled)" in text and "aten::addmm" in text
    assert main(["kernels", str(run.path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sort"] == "time"
    times = [k["profile"]["us_per_step"] if k["profile"] else -1.0 for k in data["kernels"]]
    assert times == sorted(times, reverse=True) and times[0] > 0
    first = data["kernels"][0]["profile"]
    assert first["calls_per_step"] == first["calls"] / first["steps"] == 1
    assert first["steps"] == STEPS
    assert main(["kernels", str(run.path), "--json", "--sort", "name"]) == 0
    names = [k["name"] for k in json.loads(capsys.readouterr().out)["kernels"]]
    assert names == sorted(names)


def test_costs_are_per_step_and_rates_agree_with_the_profile(profiled) -> None:
    run, _ = profiled
    for k in run.model.kernels:
        c, p = kernel_cost(k), k.profile
        if p is None:
            assert c is None
            continue
        assert c is not None
        assert c.us_per_step == pytest.approx(p.total_us / STEPS)
        if p.step_us:
            assert 0 < c.share < 1  # a kernel is a part of the step
    addmm = next(p for _, p in run.model.kernel_profiles if p.op == "aten::addmm" and not p.backward)
    assert addmm.flop == pytest.approx(2 * 32 * 64 * 64)  # nn.Linear(64, 64) on a batch of 32
    c = cost_of(addmm)
    assert c is not None and c.gflops is not None
    # FLOPs per call × calls over the measured time; the event's own rate agrees to its 3 decimals of TFLOP/s
    assert c.gflops == pytest.approx(addmm.flop * addmm.calls / addmm.total_us / 1e3)
    assert addmm.tflops is not None and abs(c.tflops - addmm.tflops) <= 0.0005 + 1e-12


async def test_tui_kernels_table_cost_and_compile_columns_sortable(profiled) -> None:
    run, _ = profiled
    app = InspectorApp(run.path, run=run, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("5")
        await settle(pilot)
        table = app.query_one("#kernels-table")
        labels = [str(c.label) for c in table.columns.values()]  # type: ignore[attr-defined]
        assert labels[:6] == ["Kernel", "Compile", "Time/step", "Calls/step", "GB/s", "GFLOP/s"]
        by_name = {k.name + (" (bw)" if k.event.backward else ""): k for k in run.model.kernels}
        for name, r in zip(kernel_names(table), rows(table), strict=True):  # type: ignore[arg-type]
            k = by_name[name]
            assert r[1] == k.compile.cid
            assert (r[2] == "-") == (k.profile is None)
        await pilot.press("s")  # sort by time per step, most first
        await settle(pilot)
        ordered = [by_name[name] for name in kernel_names(table)]  # type: ignore[arg-type]
        costs = [kernel_cost(k).us_per_step if kernel_cost(k) else -1.0 for k in ordered]  # type: ignore[union-attr]
        assert costs == sorted(costs, reverse=True) and costs[0] > 0
        await pilot.press("s")  # then by calls
        await settle(pilot)
        calls = [kernel_cost(by_name[n]).calls_per_step if kernel_cost(by_name[n]) else -1.0 for n in kernel_names(table)]  # type: ignore[arg-type,union-attr]
        assert calls == sorted(calls, reverse=True)
