"""Kernel costs from ``--profile-kernels``: each profiled kernel's steady-state time per
step, calls per step, share of the step, and achieved bandwidth / FLOP rate where the
profiler knew the bytes or FLOPs (``KernelProfile``, engine/profiler.py). Shared by
``dyn-inspect kernels`` and the TUI's Kernels view; ``sort_key`` is their one ordering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dyn_inspect.engine.schema import KernelProfile
from dyn_inspect.inspector.model import KernelInfo

SortBy = Literal["time", "calls", "bandwidth", "flops", "name", "compile"]
SORTS: tuple[str, ...] = ("time", "calls", "bandwidth", "flops", "registers", "spills", "shared", "name", "compile")
_META_SORTS = {"registers": "n_regs", "spills": "n_spills", "shared": "shared"}


@dataclass(frozen=True)
class KernelCost:
    us_per_step: float
    calls_per_step: float
    share: float | None  # of the profiled step's wall time
    gbps: float | None  # achieved GB/s (bytes per call from Inductor's estimate)
    tflops: float | None  # achieved TFLOP/s (the profiler's FLOP count: matmuls, convolutions)
    peak_gbps: float | None
    peak_tflops: float | None

    @property
    def gflops(self) -> float | None:
        return self.tflops * 1e3 if self.tflops is not None else None


def cost_of(p: KernelProfile | None) -> KernelCost | None:
    if p is None or not p.steps:
        return None
    per_step = p.total_us / p.steps
    seconds = p.total_us * 1e-6
    # From the per-call counts rather than the event's rounded rates: those keep 3
    # decimals of TFLOP/s, which is every CPU matmul rounded to a whole GFLOP/s.
    gbps = p.gb * p.calls / seconds if p.gb and seconds > 0 else p.bandwidth_gbps
    tflops = p.flop * p.calls / seconds / 1e12 if p.flop and seconds > 0 else p.tflops
    return KernelCost(
        us_per_step=per_step,
        calls_per_step=p.calls / p.steps,
        share=per_step / p.step_us if p.step_us else None,
        gbps=gbps,
        tflops=tflops,
        peak_gbps=p.peak_gbps,
        peak_tflops=p.peak_tflops,
    )


def kernel_cost(k: KernelInfo) -> KernelCost | None:
    return cost_of(k.profile)


def sort_key(by: str, k: KernelInfo) -> tuple[object, ...]:
    """Most expensive first for the cost orders; unprofiled kernels last."""
    c = kernel_cost(k)
    if by == "name":
        return (k.name,)
    if by == "compile":
        return (k.compile.cid, k.name)
    if by in _META_SORTS:  # Triton compile metadata: most first, kernels without it last
        chosen = k.meta.chosen if k.meta is not None else None
        got = getattr(chosen, _META_SORTS[by], None) if chosen is not None else None
        return (1, 0, k.name) if got is None else (0, -got, k.name)
    if c is None:
        return (1, 0.0, k.name)
    value = {"time": c.us_per_step, "calls": c.calls_per_step, "bandwidth": c.gbps or 0.0, "flops": c.tflops or 0.0}.get(by, c.us_per_step)
    return (0, -value, k.name)
