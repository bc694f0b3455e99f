"""engine/kernel_meta.py's readers that need no GPU: a launch's argument record from real
tensors, and the IR files found in a Triton cache folder laid out as Triton writes it
(``<cache>/<path key>/<name cut to 150 characters>.<stage>``). The hook itself runs on the
H200 (tests/inspector/test_kernel_compile.py reads what it recorded there)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import torch

from dyn_inspect.engine import kernel_meta
from dyn_inspect.engine.schema import Blob


def test_launch_record_of_real_arguments() -> None:
    x = torch.zeros(4, 6).t()  # a transposed view: strides (1, 6)
    flag = torch.tensor(True)  # a 0-d tensor, as `if h.mean() > 0` hands a kernel
    launch = kernel_meta.launch_of([x, flag, 24, 1.5, None])
    assert launch.shapes == [[6, 4], [], [], [], []]
    assert launch.strides == [[1, 6], [], [], [], []]
    assert launch.dtypes == ["float32", "bool", "int", "float", "NoneType"]
    assert launch.scalars == [None, None, 24, 1.5, None]


@pytest.mark.parametrize("length", [40, 170])
def test_ir_files_found_in_the_triton_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, length: int) -> None:
    name = ("triton_red_fused_" + "x" * length)[:length]
    key = "FL6225JEYTBBEB7W4GKUFKB4Z37B76XKD5BEE2AOIEKMAAX67WFQ"
    folder = tmp_path / key
    folder.mkdir()
    stem = name[:150]  # Triton's compiler cuts file names there
    (folder / f"{stem}.ttir").write_text("module { tt.func @k() }\n")
    (folder / f"{stem}.ptx").write_text(".version 9.0\n")
    (folder / f"{stem}.cubin").write_bytes(b"\x7fELF....")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    kept: list[str | bytes] = []

    def put(data: str | bytes) -> Blob:
        kept.append(data)
        return Blob(digest=str(len(kept)), size=len(data))

    args = {
        "name": name,
        "backward": False,
        "target": "cuda sm_90",
        "warp_size": 32,
        "chosen": None,
        "tried": [],
        "autotune": None,
        "triton_hash": key,
        "module_path": None,
        "first_launch": None,
    }
    ev = kernel_meta._event(args, "0/0", name, None, put)
    assert ev.ir_bytes == {"ttir": 24, "ptx": 13, "cubin": 8}
    assert ev.ir == {} and kept == []  # without --kernel-ir only the sizes are kept


def test_an_armed_kernel_pickles_as_torch_pickles_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inductor pickles autotuners into its FX-graph cache (DDPOptimizer's split graphs hold
    theirs) after ``precompile`` armed our one-shot ``run`` and before the first launch. Found
    on an H100: the save failed on our local function ("fx graph cache unable to serialize
    compiled graph"), which the plain run does not print. Torch's real ``CachingAutotuner``
    class (importable without Triton), patched as a recording patches it, on an instance
    carrying only what its ``__getstate__`` reads."""
    from torch._inductor.runtime import triton_heuristics

    cls = triton_heuristics.CachingAutotuner
    for name in ("precompile", "benchmark_all_configs", "coordinate_descent_tuning", "__getstate__"):
        if name in cls.__dict__:
            monkeypatch.setattr(cls, name, cls.__dict__[name])  # put back after the test
    errors: list[str] = []
    assert kernel_meta._patch(triton_heuristics, errors.append), errors
    monkeypatch.setattr(kernel_meta, "_state", kernel_meta._State(lambda build: None, lambda: 0, keep_ir=False))

    tuner = object.__new__(cls)
    tuner.launchers = [object()]  # what precompile made: arming needs launchers
    tuner.fn_name = "triton_poi_fused_add_0"
    kernel_meta._arm(tuner, errors.append)
    assert "run" in vars(tuner)  # armed: the first launch goes through us
    tuner.launchers = []  # what Inductor's prepare_for_pickle leaves before it pickles
    plain = object.__new__(cls)
    plain.__dict__.update({k: v for k, v in vars(tuner).items() if k != "run"})

    state = tuner.__getstate__()
    assert "run" not in state and state == plain.__getstate__()
    assert b"dyn_inspect" not in pickle.dumps(state)  # a cache entry never names our code
    assert "run" in vars(tuner)  # pickling did not disarm the live kernel
    assert not errors
