"""Which kernels a run generated and what each one is: one kernel's answer (fused ops,
backend, vectorization, user lines, profile, what Triton made of it, its launches) for
``kernels``, ``kernel``, the bundle and the editor, and the run's vectorization coverage."""

from __future__ import annotations

from dyn_inspect.engine.schema import KernelProfile
from dyn_inspect.inspector.analysis.costs import SORTS, KernelCost, cost_of, kernel_cost, sort_key
from dyn_inspect.inspector.analysis.kernel_compile import compile_output, launch_findings, launch_outputs, launches, stages_kept
from dyn_inspect.inspector.analysis.kernels import Vectorization, effective_isa, kernels_at, kernels_by_compile, vectorization
from dyn_inspect.inspector.model import KernelInfo, RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import source_loc
from dyn_inspect.inspector.run import Run


def kernel(model: RunModel, k: KernelInfo, source: str | None = None) -> typed.Kernel:
    """One kernel for ``kernels --json``, ``kernel`` (text and JSON). ``source``: the kernel's source text, for the launch findings (read it only when
    the kernel has launches)."""
    e = k.event
    return typed.Kernel(
        name=k.name,
        compile_id=k.compile.cid,
        log=k.compile.log,
        backend=e.backend,
        backward=e.backward,
        fused_ops=list(e.fused_ops),
        source_nodes=list(e.source_nodes),
        vectorized=e.vectorized,
        isa=effective_isa(model, k),
        lines_of_code=e.lines,
        source_lines=[source_loc(loc) for loc in k.lines],
        profile=kernel_profile(k),
        compile=compile_output(k),
        launches=launch_outputs(k, source),
        launch_findings=launch_findings(k, source),
    )


def run_kernels(model: RunModel) -> list[typed.Kernel]:
    """Every kernel of the run in the order recorded (the bundle's pages)."""
    return [kernel(model, k) for k in model.kernels]


__all__ = ["SORTS"]  # the orders ``listed_kernels`` knows (``kernels --sort``)


def kernel_profile(k: KernelInfo) -> typed.KernelProfile | None:
    p, c = k.profile, kernel_cost(k)
    if p is None or c is None:
        return None
    return _profile(p, c)


def _profile(p: KernelProfile, c: KernelCost) -> typed.KernelProfile:
    return typed.KernelProfile(
        calls=p.calls,
        total_us=p.total_us,
        steps=p.steps,
        us_per_step=round(c.us_per_step, 3),
        calls_per_step=c.calls_per_step,
        share_of_step=round(c.share, 4) if c.share is not None else None,
        bandwidth_gbps=c.gbps,
        tflops=c.tflops,
        peak_gbps=c.peak_gbps,
        peak_tflops=c.peak_tflops,
    )


def vectorization_coverage(v: Vectorization) -> typed.Vectorization:
    return typed.Vectorization(
        cpp_kernels=v.cpp_kernels,
        vectorized=v.vectorized,
        share=round(v.share, 4) if v.share is not None else None,
        by_isa=dict(v.by_isa),
        cpu_isa=v.cpu_isa,
        scalar_kernels=list(v.scalar),
    )


def listed_kernels(model: RunModel, at: tuple[str, int] | None = None, sort: str | None = None) -> tuple[list[KernelInfo], str | None]:
    """The kernels ``kernels`` lists and the order they are in: those generated from the
    line ``at`` (``(file, line)``), else every compile's in compile order; sorted by
    ``sort``, by time when none is given and a kernel was profiled (else ``None``)."""
    if at is not None:
        found = kernels_at(model, *at)
    else:
        found = [k for _, ks in kernels_by_compile(model) for k in ks]
    profiled = any(k.profile is not None for k in found)
    order = sort or ("time" if profiled else None)
    if order is not None:
        found = sorted(found, key=lambda k: sort_key(order, k))
    return found, order


def library_kernel_name(name: str) -> str:
    """``void sgemm<true, 5>(float*, int)`` → ``sgemm<true, 5>``: a demangled kernel's name
    without its return type and parameter list (template arguments kept: they say which
    variant ran)."""
    out = name.removeprefix("void ")
    depth = 0
    for i, ch in enumerate(out):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0 and out[i - 1] != " ":  # not "Memset (Device)"
            return out[:i]
    return out


def library_kernels(model: RunModel) -> list[typed.LibraryKernel]:
    """The profiled library kernels, most time per step first."""
    out = []
    for _, p in model.kernel_profiles:
        c = cost_of(p)
        if p.op is not None and c is not None:
            out.append(
                typed.LibraryKernel(
                    name=library_kernel_name(p.name), compile_id=p.cid, backward=p.backward, op=p.op, profile=_profile(p, c)
                )
            )
    return sorted(out, key=lambda lk: -lk.profile.us_per_step)


def kernels_report(run: Run, found: list[KernelInfo], at: str | None, order: str | None) -> typed.KernelsReport:
    """What ``kernels`` prints: ``found`` and ``order`` (``listed_kernels``); ``at``: the
    line they were asked for, as given."""
    m = run.model
    return typed.KernelsReport(
        run=str(run.path),
        at=at,
        sort=order,
        kernels=[kernel(m, k, run.blob_text(k.event.source) if launches(k) else None) for k in found],
        vectorization=vectorization_coverage(vectorization(m)),
        library_kernels=library_kernels(m) if at is None and any(k.profile is not None for k in found) else [],
    )


def kernel_report(run: Run, k: KernelInfo, source: str, stage: str | None = None, text: str | None = None) -> typed.KernelReport:
    """What ``kernel NAME --json`` prints: kernel ``k`` (``source``: its source text), and
    with ``stage`` that stage's ``text``."""
    return typed.KernelReport(run=str(run.path), kernel=kernel(run.model, k, source), stages_kept=stages_kept(k), stage=stage, text=text)
