"""A runnable repro of one Triton kernel: ``dyn-inspect kernel NAME --repro -o k.py``.

The script loads the kernel's own source (what Inductor generated, as the run recorded it)
with Inductor's ``PyCodeCache``, pins the config the run's autotuner chose (so it runs as
compiled, without autotuning again), builds seeded random inputs of one recorded launch's
shapes, strides and dtypes (``torch._dynamo.testing.rand_strided``, what Inductor's own
benchmark harness uses; integer tensors are zeros, which keeps indirect indexing in
bounds), passes the recorded scalar arguments, launches it, and times it with
``triton.testing.do_bench`` beside the time the run's profile measured per launch.

The launch comes from ``--profile``'s launch records (the most frequent signature), else
from the one launch that autotuned (recorded without a profile). A kernel with neither
(a single-config kernel in an unprofiled run) has no repro, and ``repro`` says why. C++
kernels have no repro: the profiler records no arguments for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from dyn_inspect.inspector.analysis.kernel_compile import TORCH_DTYPE, KernelSignature, launches
from dyn_inspect.inspector.model import KernelInfo

_TEMPLATE = '''#!/usr/bin/env python3
"""Runs one Triton kernel as Inductor compiled it, on seeded random inputs of a recorded launch.

kernel:   {name} (compile {cid}{bw})
run:      {run}
config:   {config}
launch:   {launch_text} ({origin})
profiled: {profiled}

Made by `dyn-inspect kernel {name} --repro`. Needs the torch and Triton the run used (or
ones that read this source alike) and a GPU. Usage: python {file} [--iters N]
"""

import argparse

import torch
from torch._dynamo.testing import rand_strided
from torch._inductor.codecache import PyCodeCache

NAME = {name!r}
SOURCE = {source!r}
CONFIG = {config_dict!r}
# (kind, shape or value, stride, dtype) per launch argument, in order
ARGS = {args!r}
PROFILED_US = {profiled_us!r}


def make_args(device):
    torch.manual_seed(0)
    out = []
    for kind, value, stride, dtype in ARGS:
        if kind == "tensor":
            out.append(rand_strided(tuple(value), tuple(stride), dtype=getattr(torch, dtype), device=device))
        else:
            out.append(value)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=100, help="timing repetitions (ms budget for do_bench)")
    opts = parser.parse_args()
    kernel = getattr(PyCodeCache.load(SOURCE), NAME)
    pinned = [
        c
        for c in kernel.configs
        if dict(c.kwargs) == CONFIG["kwargs"] and c.num_warps == CONFIG["num_warps"] and c.num_stages == CONFIG["num_stages"]
    ]
    if pinned:
        kernel.configs = pinned[:1]  # as compiled: no autotuning
    else:
        print("note: the recorded config is not among this source's configs: Inductor autotunes again")
    args = make_args("cuda")
    stream = torch.cuda.current_stream().cuda_stream
    kernel.run(*args, stream=stream)
    torch.cuda.synchronize()
    from triton.testing import do_bench

    ms = do_bench(lambda: kernel.run(*args, stream=stream), warmup=25, rep=opts.iters)
    line = f"{{NAME}}: {{ms * 1e3:.2f}} us per launch"
    if PROFILED_US:
        line += f" (profiled in the run: {{PROFILED_US:.2f}} us, ratio {{ms * 1e3 / PROFILED_US:.2f}})"
    print(line)


if __name__ == "__main__":
    main()
'''


@dataclass
class Repro:
    script: str | None
    why_not: str | None = None  # one line, when there is no script


def _arg(launch_dtype: str, shape: list[int], stride: list[int], scalar: object) -> tuple[str, object, list[int], str] | None:
    if scalar is not None:
        return ("scalar", scalar, [], "")
    dtype = TORCH_DTYPE.get(launch_dtype, launch_dtype)
    if not dtype or dtype in ("Scalar", "int", "float") and not shape:
        return None  # a scalar whose value the profiler did not record
    if not stride:
        # The profiler records no strides on this torch: contiguous.
        stride, n = [], 1
        for d in reversed(shape):
            stride.insert(0, n)
            n *= max(d, 1)
    return ("tensor", list(shape), list(stride), dtype)


def repro(k: KernelInfo, source: str, run_label: str, file_name: str = "k.py") -> Repro:
    """The script, or why there is none."""
    e = k.event
    if e.backend != "triton":
        return Repro(
            None, f"{e.name} is a {e.backend} kernel: repros are for Triton kernels (the profiler records no C++ kernel arguments)"
        )
    found = launches(k)
    if not found:
        return Repro(None, f"{e.name}: no launch recorded — re-run with `dyn-inspect run --profile N` to record its launches")
    launch = found[0]
    args: list[tuple[str, object, list[int], str]] = []
    for i, dtype in enumerate(launch.dtypes):
        a = _arg(
            dtype,
            launch.shapes[i] if i < len(launch.shapes) else [],
            launch.strides[i] if i < len(launch.strides) else [],
            launch.scalars[i] if i < len(launch.scalars) else None,
        )
        if a is None:
            return Repro(None, f"{e.name}: argument {i} of the recorded launch has no value (the profiler did not record it)")
        args.append(a)
    sig = KernelSignature.of(source)
    if sig.args and len(sig.args) != len(args):
        return Repro(None, f"{e.name}: the recorded launch has {len(args)} arguments, the source takes {len(sig.args)}")
    meta = k.meta
    chosen = meta.chosen if meta is not None else None
    config_dict = {
        "kwargs": dict(chosen.kwargs) if chosen else {},
        "num_warps": chosen.num_warps if chosen else None,
        "num_stages": chosen.num_stages if chosen else None,
    }
    from dyn_inspect.inspector.analysis.kernel_compile import config_text

    profiled_us = None
    p = k.profile
    if p is not None and p.calls:
        profiled_us = round((launch.total_us / launch.calls) if launch.calls and launch.total_us else p.total_us / p.calls, 3)
    launch_text = ", ".join(
        f"{a[3]}{list(a[1])}" if a[0] == "tensor" else f"{sig.args[i] if i < len(sig.args) else i}={a[1]}"  # type: ignore[call-overload]
        for i, a in enumerate(args)
    )
    origin = "the most frequent profiled launch" if p is not None and p.launches else "the launch that autotuned"
    script = _TEMPLATE.format(
        name=e.name,
        cid=k.compile.cid,
        bw=", backward" if e.backward else "",
        run=run_label,
        config=config_text(chosen),
        launch_text=launch_text,
        origin=origin,
        profiled=f"{profiled_us} us per launch" if profiled_us else "not profiled",
        file=file_name,
        source=source,
        config_dict=config_dict,
        args=args,
        profiled_us=profiled_us,
    )
    return Repro(script)
