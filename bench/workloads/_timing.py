"""Timing one training step the same way in every benchmark workload.

A workload takes its common options from ``workload_parser`` and calls
``run_steps(step, ...)``: the first call (compile + first step) and the steady-state steps
are timed here, with the device synchronized around each step, and the
result is printed as one ``BENCH {json}`` line that ``bench/bench_overhead.py`` parses.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

import torch


def workload_parser(*, device: str, steps: int, warmup: int) -> argparse.ArgumentParser:
    """The options every workload takes (``--device``, ``--steps``, ``--warmup``) with its
    defaults; a workload adds its own. Seeds torch: every workload starts from one state."""
    torch.manual_seed(0)
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default=device)
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--warmup", type=int, default=warmup)
    return parser


def classifier_step(
    compiled: Callable[[torch.Tensor], torch.Tensor], opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor
) -> Callable[[int], None]:
    """A classifier's training step on one batch, for ``run_steps``: the cross-entropy of
    ``compiled(x)`` against the labels ``y``, backward, then ``opt``'s step."""

    def step(_: int) -> None:
        loss = torch.nn.functional.cross_entropy(compiled(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_steps(step: Callable[[int], None], device: str, steps: int, warmup: int, name: str, **extra: object) -> dict[str, object]:
    """Step 0 is compile + first step; then ``warmup`` untimed steps; then ``steps`` timed."""
    _sync(device)
    t0 = time.perf_counter()
    step(0)
    _sync(device)
    first = time.perf_counter() - t0
    for i in range(warmup):
        step(1 + i)
    _sync(device)
    times: list[float] = []
    for i in range(steps):
        t = time.perf_counter()
        step(1 + warmup + i)
        _sync(device)
        times.append(time.perf_counter() - t)
    result: dict[str, object] = {
        "workload": name,
        "device": device,
        "compile_first_step_s": round(first, 4),
        "steady_step_ms": round(statistics.median(times) * 1e3, 4) if times else None,
        "steady_steps": len(times),
        "torch": torch.__version__,
        **extra,
    }
    print("BENCH " + json.dumps(result), flush=True)
    return result
