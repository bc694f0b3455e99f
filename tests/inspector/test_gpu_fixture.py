"""The Triton path without a GPU: native dyn-inspect runs recorded on an NVIDIA H200.

``fixtures/h200_example_runs.tar.gz`` holds two run directories recorded by
``bench/gpu/run_all.sh record`` (torch 2.11 + triton 3.6, CUDA 13.0):

- ``h200_example``: ``dyn-inspect --profile-kernels 3 train.py --device cuda --steps 8``;
- ``h200_example_autotune``: the same with ``TORCHINDUCTOR_MAX_AUTOTUNE=1`` (4 steps).

The device's checkout lived elsewhere, so source lines are compared by file name and line
number, with the numbers taken from the markers in examples/train.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corpus_support import EXAMPLES, marker_line
from dyn_inspect.engine.schema import Chromium
from dyn_inspect.inspector.run import Run
from fixture_support import unpacked

FIXTURE = Path(__file__).parents[1] / "fixtures" / "h200_example_runs.tar.gz"
TRAIN = EXAMPLES / "train.py"
HELPERS = EXAMPLES / "model_utils.py"
BRANCH = marker_line(TRAIN, "# data-dependent branch: graph break")
PRINT = marker_line(TRAIN, "# print(): graph break")
RELU = BRANCH - 1  # h = torch.relu(self.fc1(x))
FC2 = PRINT + 1  # return self.fc2(h)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    out = unpacked(tmp_path_factory, FIXTURE, "h200")
    return {name: Run(out / name) for name in ("h200_example", "h200_example_autotune")}


def _where(loc) -> tuple[str, int]:
    return Path(loc.file).name, loc.line


def test_recorded_on_the_gpu_stack(runs: dict[str, Run]) -> None:
    start = next(iter(runs["h200_example"].model.processes.values())).start
    assert start.torch.startswith("2.11") and start.triton == "3.6.0" and start.cuda == "13.0"
    assert start.argv[1:] == ["--device", "cuda", "--steps", "8"]
    assert runs["h200_example"].model.status == "finished"


def test_every_triton_kernel_has_source_fused_ops_and_source_lines(runs: dict[str, Run]) -> None:
    run = runs["h200_example"]
    kernels = run.model.kernels
    assert kernels and all(k.event.backend == "triton" for k in kernels)
    lines_seen: set[tuple[str, int]] = set()
    for k in kernels:
        src = run.blob_text(k.event.source)
        assert "@triton.jit" in src and f"def {k.name}(" in src, k.name
        assert k.event.fused_ops and all(op.startswith("aten.") for op in k.event.fused_ops), k.name
        assert k.lines, f"{k.name}: no provenance"
        for loc in k.lines:
            lines_seen.add(_where(loc))
            # The recorded text is the line the marker names in today's file.
            assert loc.code == TRAIN.read_text().splitlines()[loc.line - 1].strip()
    assert lines_seen == {("train.py", RELU), ("train.py", BRANCH), ("train.py", FC2)}
    fused = next(k for k in kernels if "aten.relu" in k.event.fused_ops and "aten.mean" in k.event.fused_ops)
    assert {_where(loc) for loc in fused.lines} == {("train.py", RELU), ("train.py", BRANCH)}


def test_graph_breaks_and_recompiles(runs: dict[str, Run]) -> None:
    m = runs["h200_example"].model
    sites = {(Path(g.loc.file).name, g.loc.line, g.first.gb_id) for g in m.break_groups()}
    assert sites == {
        ("train.py", BRANCH, "GB0170"),
        ("train.py", PRINT, "GB0059"),
        ("model_utils.py", marker_line(HELPERS, "# graph break inside an inlined helper"), "GB0059"),
    }
    assert len(m.recompiles) == 5
    assert all("size mismatch at index 0. expected 16, actual 32" in r.event.reasons[0] for r in m.recompiles)


def test_kernel_profile_on_cuda(runs: dict[str, Run]) -> None:
    m = runs["h200_example"].model
    profiles = [p for _, p in m.kernel_profiles]
    triton = [p for p in profiles if p.name.startswith("triton_")]
    assert len(triton) == 3 and all(p.calls == 3 and p.steps == 3 and p.device == "cuda:0" for p in triton)
    assert all(p.total_us > 0 and p.op is None for p in triton)
    # cuBLAS kernels Inductor called through extern_kernels.mm/addmm, with the profiler's FLOPs.
    extern = [p for p in profiles if p.op in ("aten::mm", "aten::addmm")]
    assert extern and any(p.tflops for p in extern)
    # Each Triton profile joins the kernel of the dynamic (steady-state) compile.
    joined = [k for k in m.kernels if k.profile is not None]
    assert sorted(k.name for k in joined) == sorted(p.name for p in triton)
    assert all(k.compile.cid.endswith("/1") for k in joined)
    per_line = {(Path(lp.file).name, lp.line): lp for lp in m.line_profile()}
    assert set(per_line) == {("train.py", RELU), ("train.py", BRANCH), ("train.py", FC2)}
    assert per_line[("train.py", RELU)].describe().endswith("in 2 kernels")


def test_max_autotune_choices_recorded(runs: dict[str, Run]) -> None:
    run = runs["h200_example_autotune"]
    stats = [
        json.loads(e.args["autotune_choices_stats"])
        for _, e in run.events()
        if isinstance(e, Chromium) and "autotune_choices_stats" in e.args
    ]
    assert stats and all(s["num_choices"] >= 2 and s["best_kernel"].startswith("triton_mm_") for s in stats)
    templates = [k for k in run.model.kernels if k.name.startswith("triton_tem_")]
    assert templates and all("@triton.jit" in run.blob_text(k.event.source) for k in templates)
