"""A runnable repro of one Triton kernel: ``dyn-inspect kernel NAME --repro -o k.py``.

The script loads the kernel's own source (what Inductor generated, as the run recorded it)
with Inductor's ``PyCodeCache``, pins the config the run's autotuner chose (so it runs as
compiled, without autotuning again), builds seeded random inputs of one recorded launch's
shapes, strides and dtypes (``torch._dynamo.testing.rand_strided``, what Inductor's own
benchmark harness uses; integer tensors are zeros, which keeps indirect indexing in
bounds), passes the recorded scalar arguments, launches it, and times it with
``triton.testing.do_bench`` beside the time the run's profile measured per launch.

The launch comes from ``--profile``'s launch records (the most frequent signature), else
from the kernel's first launch (the engine records it without a profile). A kernel with
neither (one that never launched through Inductor's ``run``) has no repro, and ``repro``
says why. C++
kernels have no repro: the profiler records no arguments for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from dyn_inspect.inspector.analysis.kernel_compile import TORCH_DTYPE, KernelSignature, config_text, launches, same_signature
from dyn_inspect.inspector.model import KernelInfo
from dyn_inspect.inspector.reader import safe_text

_TENSOR_DTYPES = frozenset(TORCH_DTYPE.values())

_TEMPLATE = '''#!/usr/bin/env python3
"""Runs one Triton kernel as Inductor compiled it, on seeded random inputs of a recorded launch.

kernel:   {name_doc} (compile {cid}{bw})
run:      {run}
config:   {config}
launch:   {launch_text} ({origin})
profiled: {profiled}

Made by `dyn-inspect kernel {name_doc} --repro`. Needs the torch and Triton the run used (or
ones that read this source alike) and a GPU. Usage: python {file} [--iters N]
It runs the kernel source the run recorded: run it for runs you trust, as any repro.
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
    if not pinned:  # coordinate descent's winner is none of the source's configs
        from triton import Config

        pinned = [Config(CONFIG["kwargs"], num_warps=CONFIG["num_warps"] or 4, num_stages=CONFIG["num_stages"] or 1)]
    kernel.configs = pinned[:1]  # as compiled: no autotuning
    kernel.inductor_meta = {{**kernel.inductor_meta, "coordinate_descent_tuning": False}}
    args = make_args("cuda")

    def launch():
        kernel.run(*args, stream=torch.cuda.current_stream().cuda_stream)

    launch()
    torch.cuda.synchronize()
    # Replayed from a CUDA graph, a launch costs what the kernel costs: timed one by one
    # (do_bench), a kernel of a few microseconds measures Python's launch instead.
    from triton import testing

    try:
        ms, how = testing.do_bench_cudagraph(launch, rep=opts.iters), "CUDA graph replay"
    except Exception as err:  # a kernel or Triton that cannot be captured
        ms, how = testing.do_bench(launch, warmup=25, rep=opts.iters), f"do_bench ({{type(err).__name__}} under capture)"
    line = f"{{NAME}}: {{ms * 1e3:.2f}} us per launch, {{how}}"
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
    if dtype not in _TENSOR_DTYPES:
        return None  # a scalar whose value was not recorded, or an argument of no known kind
    if not stride:
        # The profiler records no strides on this torch: contiguous.
        stride, n = [], 1
        for d in reversed(shape):
            stride.insert(0, n)
            n *= max(d, 1)
    return ("tensor", list(shape), list(stride), dtype)


def _doc(text: str) -> str:
    """Text from the run, safe inside the script's docstring: one line, no backslash or
    quote run that could end it (a run is untrusted input; its values go in as reprs)."""
    return safe_text(" ".join(text.split())).replace("\\", "/").replace('"', "'")


def repro(k: KernelInfo, source: str, run_label: str, file_name: str = "k.py") -> Repro:
    """The script, or why there is none."""
    e = k.event
    if e.backend != "triton":
        return Repro(
            None, f"{e.name} is a {e.backend} kernel: repros are for Triton kernels (the profiler records no C++ kernel arguments)"
        )
    sig = KernelSignature.of(source)
    first = k.meta.first_launch if k.meta is not None else None
    profiled = launches(k, source) if k.profile is not None and k.profile.launches else []
    # The first launch's record is complete (the engine reads the tensors themselves); a
    # profiled one may lack what this torch's profiler does not record.
    launch = first if first is not None else (profiled[0] if profiled else None)
    if launch is None:
        return Repro(None, f"{e.name}: no launch recorded (it never launched through Inductor's `run`)")
    match = next((p for p in profiled if same_signature(p, launch)), None)
    args: list[tuple[str, object, list[int], str]] = []
    for i, dtype in enumerate(launch.dtypes):
        shape = launch.shapes[i] if i < len(launch.shapes) else []
        name = sig.args[i] if i < len(sig.args) else f"argument {i}"
        a = _arg(
            dtype,
            shape,
            launch.strides[i] if i < len(launch.strides) else [],
            launch.scalars[i] if i < len(launch.scalars) else None,
        )
        if a is None:
            return Repro(None, f"{e.name}: {name} of the recorded launch has no value (the profiler did not record it)")
        args.append(a)
    if sig.args and len(sig.args) != len(args):
        return Repro(None, f"{e.name}: the recorded launch has {len(args)} arguments, the source takes {len(sig.args)}")
    meta = k.meta
    chosen = meta.chosen if meta is not None else None
    config_dict = {
        "kwargs": dict(chosen.kwargs) if chosen else {},
        "num_warps": chosen.num_warps if chosen else None,
        "num_stages": chosen.num_stages if chosen else None,
    }
    profiled_us = round(match.total_us / match.calls, 3) if match is not None and match.calls and match.total_us else None
    launch_text = ", ".join(
        f"{a[3]}{list(a[1])}" if a[0] == "tensor" else f"{sig.args[i] if i < len(sig.args) else i}={a[1]}"  # type: ignore[call-overload]
        for i, a in enumerate(args)
    )
    origin = "the kernel's first launch" if launch is first else "the most frequent profiled launch"
    script = _TEMPLATE.format(
        name=e.name,
        name_doc=_doc(e.name),
        cid=_doc(k.compile.cid),
        bw=", backward" if e.backward else "",
        run=_doc(run_label),
        config=_doc(config_text(chosen)),
        launch_text=_doc(launch_text),
        origin=origin,
        profiled=f"{profiled_us} us per launch" if profiled_us else "not profiled",
        file=_doc(file_name),
        source=source,
        config_dict=config_dict,
        args=args,
        profiled_us=profiled_us,
    )
    return Repro(script)
