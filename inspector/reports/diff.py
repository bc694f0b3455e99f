"""What changed from one run to another: graph breaks, recompile causes and kernels added,
removed or changed in count, the kernels whose compile metadata or cost changed, and
compile time by stage and by frame (``inspector/analysis/diff.py``)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from dyn_inspect.inspector.analysis.diff import Changes, KernelChange, KernelFacts, RunDiff, diff_runs
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.outputs import reports as typed

# What counts as changed: compile time moving by more than this (seconds), a kernel's time
# per step moving by more than this share of A's.
COMPILE_TIME_CHANGE_S = 0.05
KERNEL_TIME_CHANGE = 0.05


def run_diff(a: RunModel, b: RunModel) -> RunDiff:
    """Run A → run B, with the thresholds every face shows."""
    return diff_runs(a, b, min_time_change_s=COMPILE_TIME_CHANGE_S, min_kernel_time_change=KERNEL_TIME_CHANGE)


def changes_output(c: Changes[Any], kinds: tuple[type[Any], type[Any], type[Any]], **extra: Any) -> Any:
    """``kinds``: the Structs of the whole changes, of an added/removed item, of a changed one;
    ``extra``: more fields of the whole."""
    whole, counted, changed = kinds
    return whole(
        added=[counted(**asdict(item), count=n) for item, n in c.added],
        removed=[counted(**asdict(item), count=n) for item, n in c.removed],
        changed=[changed(**asdict(item), count_a=a, count_b=b) for item, a, b in c.changed],
        unchanged=c.same,
        **extra,
    )


def facts_output(f: KernelFacts) -> typed.DiffKernelFacts:
    return typed.DiffKernelFacts(
        config=f.config,
        registers=f.registers,
        spills=f.spills,
        shared_bytes=f.shared_bytes,
        ir_bytes=dict(f.ir_bytes),
        target=f.target,
        us_per_step=round(f.us_per_step, 3) if f.us_per_step is not None else None,
    )


def kernel_change_output(c: KernelChange) -> typed.DiffKernelMetaChange:
    return typed.DiffKernelMetaChange(
        **asdict(c.item),
        compile_id=c.compile_id,
        backward=c.backward,
        a=facts_output(c.a),
        b=facts_output(c.b),
        changed=list(c.changed),
    )


def diff_report(d: RunDiff, a: str, b: str) -> typed.DiffReport:
    """What ``diff A B --json`` prints: ``d`` (``run_diff``); ``a``, ``b``: the runs' paths."""
    return typed.DiffReport(
        a=a,
        b=b,
        graph_breaks=changes_output(d.breaks, (typed.BreakChanges, typed.DiffBreakCount, typed.DiffBreakChange)),
        recompiles=changes_output(d.recompiles, (typed.RecompileChanges, typed.DiffRecompileCount, typed.DiffRecompileChange)),
        kernels=changes_output(
            d.kernels,
            (typed.KernelChanges, typed.DiffKernelCount, typed.DiffKernelChange),
            meta_changed=[kernel_change_output(c) for c in d.kernel_changes],
        ),
        compile_time=typed.CompileTimeDiff(
            a_s=round(d.compile_time_a_s, 4),
            b_s=round(d.compile_time_b_s, 4),
            delta_s=round(d.compile_time_delta_s, 4),
            by_stage=[
                typed.StageTime(stage=s.name, a_s=round(s.a_s, 4), b_s=round(s.b_s, 4), delta_s=round(s.delta_s, 4)) for s in d.stages
            ],
            by_frame=[
                typed.FrameTime(frame=f.name, a_s=round(f.a_s, 4), b_s=round(f.b_s, 4), delta_s=round(f.delta_s, 4)) for f in d.frames
            ],
        ),
    )
