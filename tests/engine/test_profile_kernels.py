"""`dyn-inspect run --profile-kernels N` on a real CPU compile of the example.

The example (examples/train.py) compiles a static graph at batch 16, recompiles dynamic
at 32, and from then on runs the dynamic graphs: with 8 steps and N=3 the profiler opens
after the first quiet step and covers steps 3, 4, 5 (batch sizes 16, 32, 48).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_support import CACHE_ENV, DYN_INSPECT, EXAMPLES, marker_line, records
from dyn_inspect.engine.schema import KernelProfile
from dyn_inspect.inspector.run import Run
from inductor_pool import seed

TRAIN = EXAMPLES / "train.py"
STEPS = 3
PROFILED_BATCHES = (16, 32, 48)  # steps 3, 4, 5 of batch_sizes = [16, 32, 48]


def _record(runs_dir: Path, cwd: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["DYN_INSPECT_NO_TUI"] = "1"
    env.pop("DYN_INSPECT_RUNS_DIR", None)
    env["TORCHINDUCTOR_CACHE_DIR"] = seed(runs_dir / "inductor-cache")
    cmd = [str(DYN_INSPECT), "run", "--no-tui", "--runs-dir", str(runs_dir), *argv]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def _run_dir(runs_dir: Path) -> Path:
    runs = sorted(p for p in runs_dir.iterdir() if p.is_dir() and not p.is_symlink() and p.name[0].isdigit())
    assert len(runs) == 1, runs
    return runs[0]


@pytest.fixture(scope="module")
@records
def profiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, subprocess.CompletedProcess[str] | None]:
    cache = os.environ.get(CACHE_ENV)
    runs_dir = Path(cache) / "profile-kernels" if cache else tmp_path_factory.mktemp("profiled")
    done = runs_dir / "result.json"
    if cache and done.is_file():
        return Run(_run_dir(runs_dir)), None
    if runs_dir.exists():
        import shutil

        shutil.rmtree(runs_dir)
    runs_dir.mkdir(parents=True)
    proc = _record(runs_dir, EXAMPLES, ["--profile-kernels", str(STEPS), "train.py", "--steps", "8"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    if cache:
        done.write_text(json.dumps({"returncode": proc.returncode}))
    return Run(_run_dir(runs_dir)), proc


def _profiles(run: Run) -> list[KernelProfile]:
    return [p for _, p in run.model.kernel_profiles]


def test_cpp_kernels_profiled_once_per_step(profiled) -> None:
    run, _ = profiled
    profiles = _profiles(run)
    cpp = [p for p in profiles if p.name.startswith("cpp_")]
    # Forward: the relu+mean kernel; backward: threshold_backward and the bias-grad sums.
    assert {p.name for p in cpp} >= {"cpp_fused_gt_mean_relu_threshold_backward_0", "cpp_fused_threshold_backward_0"}
    for p in cpp:
        assert p.calls == STEPS and p.steps == STEPS, p
        assert p.total_us > 0 and p.device == "cpu" and p.op is None
        assert p.graph and p.graph.startswith("f")  # the FX-graph cache key of the compiled graph
    assert any(p.backward for p in cpp) and any(not p.backward for p in cpp)
    step_us = {p.step_us for p in profiles}
    assert len(step_us) == 1 and next(iter(step_us)) > 0  # one window, one step time
    assert sum(p.total_us for p in profiles) / STEPS < next(iter(step_us))


def test_profiles_join_the_steady_state_compiles_only(profiled) -> None:
    run, _ = profiled
    joined = [k for k in run.model.kernels if k.profile is not None]
    assert joined
    # The static batch-16 graphs (x/0) never run once the dynamic ones exist: names repeat
    # across the two compiles (cpp_fused_..._0 in both), the FX-graph key tells them apart.
    assert all(k.compile.cid.endswith("/1") for k in joined), [(k.compile.cid, k.name) for k in joined]
    static = [k for k in run.model.kernels if k.compile.cid.endswith("/0")]
    assert static and all(k.profile is None for k in static)
    for k in joined:
        assert k.profile.name == k.name
        assert any(ce.cache == "fx_graph" and ce.key == k.profile.graph for ce in k.compile.caches)


def test_extern_matmuls_carry_their_flops(profiled) -> None:
    run, _ = profiled
    addmm = [p for p in _profiles(run) if p.op == "aten::addmm" and not p.backward]
    assert len(addmm) == 2  # fc1 (forward graph) and fc2 (the graph resumed after the breaks)
    mean_batch = sum(PROFILED_BATCHES) / len(PROFILED_BATCHES)
    fc1 = next(p for p in addmm if p.cid and p.cid.startswith("0/"))
    fc2 = next(p for p in addmm if p is not fc1)
    assert fc1.flop == pytest.approx(2 * mean_batch * 32 * 64)  # nn.Linear(32, 64)
    assert fc2.flop == pytest.approx(2 * mean_batch * 64 * 10)  # nn.Linear(64, 10)
    assert fc1.calls == STEPS and fc1.tflops is not None and fc1.tflops >= 0


def test_time_per_source_line(profiled) -> None:
    run, _ = profiled
    branch = marker_line(TRAIN, "# data-dependent branch: graph break")
    relu = branch - 1  # `h = torch.relu(self.fc1(x))`
    lines = {(lp.file, lp.line): lp for lp in run.model.line_profile()}
    for line in (relu, branch):
        lp = lines[(str(TRAIN), line)]
        assert lp.us_per_step > 0
        assert "cpp_fused_gt_mean_relu_threshold_backward_0" in {k.name for k in lp.kernels}
        assert lp.describe().startswith("this line: ") and "ms/step in" in lp.describe()
    # The relu line also gets the backward's threshold_backward kernel: more time than the branch.
    assert lines[(str(TRAIN), relu)].us_per_step > lines[(str(TRAIN), branch)].us_per_step


@pytest.mark.corpus  # records a real compile inline
def test_off_by_default_nothing_patched(tmp_path: Path) -> None:
    program = tmp_path / "probe.py"
    program.write_text(
        "import sys, torch\n"
        "f = torch.compile(lambda x: x.relu() + 1)\n"
        "f(torch.randn(4)); f(torch.randn(4))\n"
        "from torch._dynamo import eval_frame\n"
        "print('profiler imported:', 'dyn_inspect.engine.profiler' in sys.modules)\n"
        "print('patched:', getattr(eval_frame.OptimizeContext.__init__, '_dyn_inspect', False))\n"
    )
    proc = _record(tmp_path / "runs", tmp_path, ["probe.py"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "profiler imported: False" in proc.stdout and "patched: False" in proc.stdout
    run = Run(_run_dir(tmp_path / "runs"))
    assert run.model.kernels and not run.model.kernel_profiles


@pytest.mark.corpus  # records a real program inline
def test_a_program_that_calls_nothing_compiled_is_told_so(tmp_path: Path) -> None:
    """One process, a compiled function it never calls: `--profile-kernels` has nothing to
    profile and says so (torchrun's agent, which also compiles nothing, does not: its ranks
    answer for the run, tests/inspector/test_step_costs.py)."""
    (tmp_path / "never.py").write_text("import torch\nf = torch.compile(lambda x: x + 1)\nprint('never called')\n")
    proc = _record(tmp_path / "runs", tmp_path, ["--profile-kernels", "2", "never.py"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "dyn-inspect: --profile: no compiled callable was called: nothing to profile" in proc.stderr, proc.stderr[-2000:]


@pytest.mark.parametrize("value", ["0", "-2", "many"])
def test_bad_step_counts_are_refused(value: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dyn_inspect.cli", "run", "--profile-kernels", value, "x.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "--profile-kernels" in proc.stderr and "Traceback" not in proc.stderr


def test_lsp_hover_shows_the_line_profile(profiled) -> None:
    """The language server's hover on a marked line carries the profiled time of that line."""
    from dyn_inspect.inspector.reports.findings import build_index
    from dyn_inspect.inspector.workspace import Workspace
    from dyn_inspect.lsp.hover import profile_at

    run, _ = profiled
    index = build_index(run, Workspace([EXAMPLES]))
    ff = index.files[str(TRAIN)]
    source = TRAIN.read_text().splitlines()
    branch = marker_line(TRAIN, "# data-dependent branch: graph break")
    text = profile_at(ff, source, branch)
    expected = {(lp.file, lp.line): lp.describe() for lp in run.model.line_profile()}[(str(TRAIN), branch)]
    assert text == expected and "ms/step" in text
    assert profile_at(ff, source, 1) is None  # a line no kernel came from


def test_library_kernel_names_lose_their_signature() -> None:
    """Names as the H200 run's profiler reported them (torch 2.11, cuBLAS/CUTLASS): the
    parameter list and return type go, the template arguments and spaced names stay."""
    from dyn_inspect.inspector.reports.kernels import library_kernel_name

    assert (
        library_kernel_name("void sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>(float*, float const*, float const*, int, int)")
        == "sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>"
    )
    assert (
        library_kernel_name(
            "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>(cutlass_80_simt_sgemm_64x64_8x5_tn_align1::Params)"
        )
        == "cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>"
    )
    assert library_kernel_name("Memset (Device)") == "Memset (Device)"
    assert library_kernel_name("aten::addmm") == "aten::addmm"


def test_step_profile_of_the_example(profiled) -> None:
    """The same window's step breakdown: each of the example's three break sites gets a
    time per step, break causes are ranked by it, and the batch-size recompile's frames get
    their guard checks."""
    from dyn_inspect.inspector.analysis.causes import causes
    from dyn_inspect.inspector.analysis.step_costs import break_costs

    run, _ = profiled
    [(_, profile)] = run.model.step_profiles
    assert profile.steps == STEPS and profile.regions and profile.backward
    costs = break_costs(run.model)
    assert {g.key for g in run.model.break_groups()} == set(costs)
    assert all(c.us > 0 and c.share is not None and 0 < c.share < 1 for c in costs.values())
    found = causes(run.model)
    breaks = [c for c in found if c.kind == "graph_break"]
    assert [c.step_us for c in breaks] == sorted((c.step_us for c in breaks), reverse=True)
    [batch] = [c for c in found if c.kind == "recompile"]
    g = batch.guard_cost
    assert g is not None and g.us > 0 and g.entries == 2 and 1 <= g.frames <= len(batch.frames)
    assert batch.run_time == g.text and g.text.startswith(f"guard checks of its {g.frames} frames: ")
    # with their spread over the profiled steps (issue 57)
    assert g.spread is not None and g.spread.n == STEPS and g.spread.text in g.text


def test_lsp_hover_on_the_fix_site_gives_the_guard_checks(profiled) -> None:
    from dyn_inspect.inspector.analysis.causes import causes
    from dyn_inspect.inspector.reports.findings import build_index
    from dyn_inspect.inspector.workspace import Workspace
    from dyn_inspect.lsp.hover import _cause_md

    run, _ = profiled
    [batch] = [c for c in causes(run.model) if c.kind == "recompile"]
    index = build_index(run, Workspace([EXAMPLES]))
    [finding] = index.files[str(TRAIN)].causes
    assert finding.run_time == batch.run_time is not None
    assert f"**At run time:** {batch.run_time}" in "\n".join(_cause_md(finding)).replace("\\", "")
