"""What changed from one run to another: graph breaks, recompile causes and kernels added,
removed or changed in count, the kernels whose compile metadata or cost changed, and
compile time by stage and by frame (``inspector/analysis/diff.py``); a changed kernel as the
one line the text face prints."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from dyn_inspect.inspector.analysis.diff import Changes, KernelChange, KernelFacts, RunDiff, diff_runs
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.units import bytes_text, time_text

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


# -- a kernel's change as one line (the text face's) ----------------------------------------


def _bytes_change(a: int, b: int) -> str:
    """``18.3 KiB → 14.0 KiB``; in bytes where the KiB would read the same."""
    ta, tb = bytes_text(a), bytes_text(b)
    return f"{ta} → {tb}" if ta != tb else f"{a} B → {b} B"


def _us(v: float) -> str:
    return f"{v:.2f} µs" if v < 100 else time_text(v)


def value_change_text(c: KernelChange, what: str) -> str:
    """``registers 32 → 24``: one entry of ``c.changed`` as the text line shows it."""
    a, b = c.a, c.b
    if what.startswith("ir_bytes."):
        stage = what.removeprefix("ir_bytes.")
        return f"{stage} {_bytes_change(a.ir_bytes[stage], b.ir_bytes[stage])}"
    if what == "shared_bytes":
        return f"shared {_bytes_change(a.shared_bytes or 0, b.shared_bytes or 0)}"
    if what == "us_per_step":
        ta, tb = a.us_per_step or 0.0, b.us_per_step or 0.0
        share = f" ({(tb - ta) / ta:+.0%})" if ta else ""
        return f"time/step {_us(ta)} → {_us(tb)}{share}"
    return f"{what} {getattr(a, what)} → {getattr(b, what)}"


def kernel_change_text(c: KernelChange) -> str:
    return f"{c}: " + ", ".join(value_change_text(c, what) for what in c.changed)
