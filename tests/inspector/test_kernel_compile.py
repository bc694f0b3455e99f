"""What Triton made of each kernel, on real H200 recordings (issue 33): compile metadata,
autotuning, IR stages with their line maps, launch records and the repro script.

``fixtures/h200_kernel_runs.tar.gz`` holds two run directories recorded by
``bench/gpu/run_all.sh kernels`` (torch 2.11 + triton 3.6, CUDA 13.0, an H200):

- ``h200_kernels``: ``dyn-inspect run --profile 3 --kernel-ir train.py --device cuda --steps 10``;
- ``h200_kernels_autotune``: ``--kernel-ir`` under ``TORCHINDUCTOR_MAX_AUTOTUNE_POINTWISE=1``
  and ``TORCHINDUCTOR_COORDINATE_DESCENT_TUNING=1`` (4 steps).

The expected values were read from the recorded events (kernel_meta, kernel_profile) and
checked against the kernels' sources; the repro scripts made from this fixture ran on the
H200 within 1.14× of the profiled time per launch (docs/kernels.md).
"""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path

import msgspec
import pytest

from dyn_inspect.cli import main
from dyn_inspect.engine.schema import KernelLaunch
from dyn_inspect.inspector.analysis.kernel_compile import (
    KernelSignature,
    compile_output,
    launch_findings,
    launches,
    stages_kept,
)
from dyn_inspect.inspector.analysis.kernel_ir_lines import line_map
from dyn_inspect.inspector.analysis.kernel_repro import repro
from dyn_inspect.inspector.model import KernelInfo
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.run import Run
from fixture_support import unpacked

FIXTURE = Path(__file__).parents[1] / "fixtures" / "h200_kernel_runs.tar.gz"
SUM = "triton_red_fused_sum_0"  # compile 5/1, backward: the dynamic-batch sum in train.py:31


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    out = unpacked(tmp_path_factory, FIXTURE, "h200-kernels")
    return {name: Run(out / name) for name in ("h200_kernels", "h200_kernels_autotune")}


def kernel(run: Run, name: str) -> KernelInfo:
    (k,) = [k for k in run.model.kernels if k.name == name]
    return k


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- the recording ---------------------------------------------------------------------------


def test_every_triton_kernel_has_metadata_and_every_ir_stage(runs: dict[str, Run]) -> None:
    for run in runs.values():
        start = next(iter(run.model.processes.values())).start
        assert start.torch.startswith("2.11") and start.triton == "3.6.0"
        assert start.hooks["kernel_meta"] == "active"
        kernels = run.model.kernels
        assert len(kernels) == 6 and all(k.event.backend == "triton" for k in kernels)
        for k in kernels:
            assert k.meta is not None, k.name
            assert (k.meta.target, k.meta.warp_size) == ("cuda sm_90", 32)
            assert k.meta.chosen is not None and k.meta.chosen.n_regs and k.meta.chosen.n_spills == 0
            assert stages_kept(k) == ["source", "ttir", "ttgir", "llir", "ptx", "sass"], k.name
            assert k.meta.first_launch is not None, k.name  # what a repro builds its inputs from


def test_the_benchmarked_config_and_what_was_tried(runs: dict[str, Run]) -> None:
    k = kernel(runs["h200_kernels"], SUM)
    assert (k.compile.cid, k.event.backward) == ("5/1", True)
    c = compile_output(k)
    assert c is not None
    assert c.config == "XBLOCK=16 R0_BLOCK=32 num_warps=4 num_stages=1"
    assert (c.registers, c.spills, c.shared_bytes) == (32, 0, 256)
    assert c.autotune.startswith("benchmarked 4 configs: best ")
    assert len(c.tried) == 4 and all(t.time_ms and t.registers for t in c.tried)
    assert c.tried == sorted(c.tried, key=lambda t: t.time_ms or 0)  # fastest first
    assert c.config in {t.config for t in c.tried}
    # A kernel with one config did not autotune, and says so.
    one = compile_output(kernel(runs["h200_kernels"], "triton_red_fused_addmm_gt_mean_relu_threshold_backward_0"))
    assert one is not None and one.autotune == "one config (no autotuning)" and not one.tried


def test_coordinate_descent_winner(runs: dict[str, Run]) -> None:
    k = kernel(runs["h200_kernels_autotune"], SUM)
    assert k.meta is not None and k.meta.autotune == "coordesc"
    c = compile_output(k)
    assert c is not None
    assert c.config == "XBLOCK=1 R0_BLOCK=32 num_warps=1 num_stages=1"
    assert (c.registers, c.shared_bytes) == (24, 0)
    assert c.autotune.startswith("coordinate descent 12 configs: best ")
    assert all(t.time_ms for t in c.tried)


# -- launches ----------------------------------------------------------------------------------


def test_profiled_launches_completed_from_the_first_launch_and_the_signature(runs: dict[str, Run]) -> None:
    run = runs["h200_kernels"]
    k = kernel(run, SUM)
    source = run.blob_text(k.event.source)
    sig = KernelSignature.of(source)
    assert sig.args == ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"]
    assert sig.size_hints == {"x": 16, "r0_": 32} and sig.grid_type == "Grid1D"
    found = launches(k, source)
    # The batch sizes 16, 32, 48 of train.py: one signature each, 10 columns summed over the batch.
    assert [(f.shapes[0], f.scalars[2:]) for f in found] == [([16, 10], [10, 16]), ([32, 10], [10, 32]), ([48, 10], [10, 48])]
    assert all(f.dtypes[:2] == ["float32", "float32"] for f in found)  # torch 2.11's profiler records no dtypes
    # Inductor's 1-D grid: ceil(xnumel / XBLOCK) programs of num_warps × 32 threads.
    assert all((f.grid, f.block) == ([1, 1, 1], [128, 1, 1]) for f in found)
    findings = launch_findings(k, source)
    assert "r0_numel=48 in 1 launch(es): past the size hint r0_=32 its config was tuned for" in findings
    assert "launched with 3 different argument shapes (a dynamic-shape kernel)" in findings


def test_a_launch_of_another_dtype_is_named(runs: dict[str, Run]) -> None:
    run = runs["h200_kernels"]
    k = kernel(run, SUM)
    assert k.profile is not None
    half = [msgspec.structs.replace(launch, dtypes=["c10::Half", "c10::Half", "int", "int"]) for launch in k.profile.launches]
    k2 = KernelInfo(k.event, k.compile, k.lines, msgspec.structs.replace(k.profile, launches=half), k.meta)
    findings = launch_findings(k2, run.blob_text(k.event.source))
    assert "in_ptr0 launched as fp16, compiled for *fp32" in findings


def test_a_zero_dim_tensor_argument_is_kept(runs: dict[str, Run]) -> None:
    """out_ptr2 of the fused relu/mean/gt kernel is the 0-d bool of `if h.mean() > 0`."""
    run = runs["h200_kernels"]
    k = kernel(run, "triton_red_fused_addmm_gt_mean_relu_threshold_backward_0")
    first = k.meta.first_launch if k.meta is not None else None
    assert isinstance(first, KernelLaunch)
    assert first.shapes[3] == [] and first.dtypes[3] == "bool" and first.scalars[3] is None
    # A size Inductor made constant ('xnumel': 'constexpr') is still passed; XBLOCK is not.
    sig = KernelSignature.of(run.blob_text(k.event.source))
    assert sig.args == ["in_out_ptr0", "in_ptr0", "out_ptr0", "out_ptr2", "ks0", "xnumel", "r0_numel"]
    assert len(first.shapes) == len(sig.args)
    script = repro(k, run.blob_text(k.event.source), "run").script
    assert script is not None and "('tensor', [], [], 'bool')" in script


# -- IR and its line map --------------------------------------------------------------------------


@pytest.mark.parametrize("stage", ["ttir", "ttgir", "llir", "ptx"])
def test_ir_lines_map_to_the_kernel_source(runs: dict[str, Run], stage: str) -> None:
    run = runs["h200_kernels"]
    k = kernel(run, SUM)
    assert k.meta is not None
    text = run.blob_text(k.meta.ir[stage])
    source = run.blob_text(k.event.source).splitlines()
    groups = line_map(stage, text)
    assert sum(len(ir) for _, ir in groups) <= len(text.splitlines())
    lines = {line for line, _ in groups if line is not None}
    # Every mapped line is a line of the kernel's body, and the load, the sum and the store
    # (the kernel's work) are among them.
    body = {i + 1 for i, t in enumerate(source) if t.startswith("    ")}
    assert lines and lines <= body | {i + 1 for i, t in enumerate(source) if t.startswith("def ")}
    for needle in ("tl.load(in_ptr0", "tl.sum(", "tl.store(out_ptr0"):
        (at,) = [i + 1 for i, t in enumerate(source) if needle in t]
        assert at in lines, (stage, needle)


def test_kernel_cli_detail(runs: dict[str, Run], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "kernel", SUM, str(runs["h200_kernels"].path))
    assert code == 0
    assert "compiled: cuda sm_90 · XBLOCK=16 R0_BLOCK=32 num_warps=4 num_stages=1 · 32 registers, 0 spills, 256 B shared memory" in out
    assert "autotune: benchmarked 4 configs" in out
    assert "in_ptr0 fp32[48, 10], out_ptr0 fp32[1, 10], xnumel=10, r0_numel=48, grid (1, 1, 1) × 128 threads" in out
    assert "! r0_numel=48 in 1 launch(es): past the size hint r0_=32" in out
    assert "stages: source, ttir, ttgir, llir, ptx, sass" in out


def test_kernel_cli_stages(runs: dict[str, Run], capsys: pytest.CaptureFixture[str]) -> None:
    path = str(runs["h200_kernels"].path)
    code, out, _ = cli(capsys, "kernel", SUM, path, "--stage", "ptx")
    assert code == 0 and ".target sm_90a" in out and f".visible .entry {SUM}(" in out
    code, out, _ = cli(capsys, "kernel", SUM, path, "--stage", "sass")
    assert code == 0 and "code for sm_90" in out
    code, out, _ = cli(capsys, "kernel", SUM, path, "--stage", "ttgir", "--side-by-side")
    assert code == 0
    row = next(line for line in out.splitlines() if "tl.sum(" in line)
    assert "tt.reduce" in out and row.split()[0].isdigit()
    code, out, err = cli(capsys, "kernel", SUM, path, "--stage", "sass", "--side-by-side")
    assert code == 0 and "no line information" in err and "code for sm_90" in out
    code, _, err = cli(capsys, "kernel", "triton_no_such_kernel", path)
    assert code != 0 and err.startswith("dyn-inspect: no kernel named 'triton_no_such_kernel'") and len(err.splitlines()) == 1


def test_kernel_json_is_the_typed_report(runs: dict[str, Run], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "kernel", SUM, str(runs["h200_kernels"].path), "--json")
    assert code == 0
    report = msgspec.json.decode(out.encode(), type=typed.KernelReport)
    k = report.kernel
    assert k.compile is not None and k.compile.registers == 32 and k.compile.ir_kept == ["ttir", "ttgir", "llir", "ptx", "sass"]
    assert [launch.shapes[0] for launch in k.launches] == [[16, 10], [32, 10], [48, 10]]
    assert all(launch.grid_computed for launch in k.launches)


def test_kernels_table_and_sorts(runs: dict[str, Run], capsys: pytest.CaptureFixture[str]) -> None:
    path = str(runs["h200_kernels_autotune"].path)
    code, out, _ = cli(capsys, "kernels", path, "--sort", "registers")
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("compile"))
    assert all(col in header for col in ("config", "regs", "spills", "smem"))
    rows = [line for line in out.splitlines() if "triton_" in line]
    # Most registers first: the fused relu/mean/gt reduction (39) leads.
    assert "triton_red_fused_addmm_gt_mean_relu_threshold_backward_0" in rows[0] and " 39 " in rows[0]
    code, out, _ = cli(capsys, "kernels", path, "--json")
    data = json.loads(out)
    assert all(k["compile"]["registers"] for k in data["kernels"])


# -- the repro -------------------------------------------------------------------------------------


def test_repro_script(runs: dict[str, Run], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The script as the H200 ran it: it parses, carries the source, pins the chosen config
    and the recorded launch (the GPU run itself is in docs/kernels.md; no GPU here)."""
    run = runs["h200_kernels_autotune"]
    out = tmp_path / "k.py"
    code, text, _ = cli(capsys, "kernel", SUM, str(run.path), "--repro", "-o", str(out))
    assert code == 0 and str(out) in text
    script = out.read_text()
    tree = ast.parse(script)
    consts = {
        t.id: ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name) and t.id in ("NAME", "CONFIG", "ARGS")
    }
    assert consts["NAME"] == SUM
    assert consts["CONFIG"] == {"kwargs": {"XBLOCK": 1, "R0_BLOCK": 32}, "num_warps": 1, "num_stages": 1}
    first = kernel(run, SUM).meta.first_launch  # type: ignore[union-attr]
    assert first is not None
    assert consts["ARGS"] == [
        ("tensor", first.shapes[0], first.strides[0], "float32"),
        ("tensor", first.shapes[1], first.strides[1], "float32"),
        ("scalar", 10, [], ""),
        ("scalar", first.scalars[3], [], ""),
    ]
    assert "do_bench_cudagraph" in script and '"coordinate_descent_tuning": False' in script
    # An existing file is kept unless --force; an unwritable path is one line.
    code, _, err = cli(capsys, "kernel", SUM, str(run.path), "--repro", "-o", str(out))
    assert code == 2 and err.strip() == f"dyn-inspect: {out} exists: pass --force to overwrite it"
    assert cli(capsys, "kernel", SUM, str(run.path), "--repro", "-o", str(out), "--force")[0] == 0
    code, _, err = cli(capsys, "kernel", SUM, str(run.path), "--repro", "-o", str(tmp_path / "no" / "k.py"))
    assert code == 2 and err.startswith("dyn-inspect: cannot write ") and len(err.strip().splitlines()) == 1
    assert f"def {SUM}(" in script


def test_export_of_one_kernel_carries_its_repro(runs: dict[str, Run], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = runs["h200_kernels"]
    out = tmp_path / "bundle.zip"
    code, _, _ = cli(capsys, "export", str(run.path), "--kernel", SUM, "-o", str(out), "--no-pictures")
    assert code == 0
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
        manifest = json.loads(z.read("manifest.json"))
        script = z.read(f"compiles/p812/5_1/kernels/backward/{SUM}.repro.py").decode()
    # Only the compile that made the kernel; its source and repro side by side.
    assert [c["compile_id"] for c in manifest["compiles"]] == ["5/1"]
    assert f"compiles/p812/5_1/kernels/backward/{SUM}.py" in names
    ast.parse(script)
    assert f"NAME = {SUM!r}" in script and "XBLOCK': 16, 'R0_BLOCK': 32" in script
    code, _, err = cli(capsys, "export", str(run.path), "--kernel", "triton_nope", "-o", str(tmp_path / "x.zip"))
    assert code != 0 and "no kernel named 'triton_nope'" in err and not (tmp_path / "x.zip").exists()


def test_repro_of_a_crafted_run_is_still_one_valid_script(runs: dict[str, Run]) -> None:
    """A run is untrusted input: a name that would end the script's docstring or escape a
    string goes in as a repr, and the docstring stays one docstring."""
    run = runs["h200_kernels"]
    k = kernel(run, SUM)
    crafted = 'x"""\nimport os; os.system("echo owned") #\x1b[2J\\'
    k2 = KernelInfo(msgspec.structs.replace(k.event, name=crafted), k.compile, k.lines, k.profile, k.meta)
    script = repro(k2, run.blob_text(k.event.source), 'run"""', "k.py").script
    assert script is not None
    tree = ast.parse(script)
    (doc, *_) = tree.body
    assert isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
    assert "import os" not in {ast.unparse(n) for n in tree.body}  # no statement smuggled out of the docstring
    names = [n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "NAME"]
    assert ast.literal_eval(names[0].value) == crafted
    assert "\x1b" not in script  # no terminal escape reaches a `cat k.py`
