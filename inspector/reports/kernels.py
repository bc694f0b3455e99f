"""Which kernels a run generated and what each one is: one kernel's answer (fused ops,
backend, vectorization, user lines, profile, what Triton made of it, its launches) for
``kernels``, ``kernel``, the bundle and the editor, and the run's vectorization coverage."""

from __future__ import annotations

from dyn_inspect.engine.schema import KernelProfile
from dyn_inspect.inspector.analysis.costs import SORTS, KernelCost, cost_of, kernel_cost, sort_key
from dyn_inspect.inspector.analysis.kernel_compile import (
    IR_STAGES,
    KernelSignature,
    compile_output,
    ir_text,
    launch_findings,
    launch_outputs,
    launch_text,
    launches,
    stages_kept,
)
from dyn_inspect.inspector.analysis.kernel_ir_lines import MAPPED_STAGES, line_map
from dyn_inspect.inspector.analysis.kernel_repro import Repro, repro
from dyn_inspect.inspector.analysis.kernels import Vectorization, effective_isa, kernels_at, kernels_by_compile, vectorization
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import file_line
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


# -- one kernel in full (``dyn-inspect kernel``) ---------------------------------------------

KERNEL_STAGES = IR_STAGES  # what ``--stage`` takes: the kernel's source, then Triton's IR in compile order


def find_kernel(model: RunModel, name: str, cid: str | None, backward: bool) -> KernelInfo:
    """The one kernel the arguments name, or an error listing the candidates."""
    found = [k for k in model.kernels if k.name == name]
    if not found:
        raise InspectorError(f"no kernel named {name!r} in this run (`dyn-inspect kernels` lists them)")
    if cid is not None:
        found = [k for k in found if k.compile.cid == cid]
        if not found:
            raise InspectorError(f"no kernel {name!r} in compile {cid}")
    if len(found) > 1:
        narrowed = [k for k in found if k.event.backward == backward]
        found = narrowed or found
    if len(found) > 1:
        where = ", ".join(f"{k.compile.cid}{' bw' if k.event.backward else ''}" for k in found)
        raise InspectorError(f"{len(found)} kernels named {name!r} (compiles {where}): pick one with --compile")
    return found[0]


def kernel_stage(run: Run, k: KernelInfo, stage: str) -> str:
    """One stage of a kernel (``source``, or an IR ``run --kernel-ir`` kept), or an error that
    says which stages this run has and how to keep the others."""
    text = ir_text(run, k, stage)
    if text is None:
        kept = ", ".join(stages_kept(k))
        hint = " (record with `dyn-inspect run --kernel-ir` on a GPU)" if k.event.backend == "triton" else " (IR stages are Triton's)"
        raise InspectorError(f"{k.name}: no {stage} kept; this run has: {kept}{hint}")
    return text


def kernel_stages(k: KernelInfo) -> list[str]:
    """The stages ``kernel_stage`` can show for ``k``, in compile order."""
    return stages_kept(k)


def user_lines(k: KernelInfo) -> str:
    """``train.py:26, train.py:27``: the user lines a kernel came from ("" when none)."""
    return ", ".join(dict.fromkeys(file_line(loc.file, loc.line) for loc in k.lines))


def stage_beside_source(stage: str, text: str, source: str) -> list[tuple[int | None, str, str]] | None:
    """Each run of ``stage``'s lines beside the kernel source line it came from, in IR order:
    (line, that line of the source, the IR lines); None for a stage without line information
    (SASS) and for the source itself."""
    if stage not in MAPPED_STAGES:
        return None
    src_lines = source.splitlines()
    return [
        (line, src_lines[line - 1].strip() if line is not None and 0 < line <= len(src_lines) else "", "\n".join(ir))
        for line, ir in line_map(stage, text)
    ]


def launch_lines(k: KernelInfo, source: str | None) -> tuple[str, list[str]]:
    """Where the launches come from ("profiled launches", "the first launch") and one line per
    launch signature: ``12× in_ptr0 fp32[64, 256], xnumel=16384, 3.1 µs each``."""
    found = launches(k, source)
    if not found:
        return "", []
    names = KernelSignature.of(source or "").args
    origin = "profiled launches" if k.profile is not None and k.profile.launches else "the first launch"
    lines = []
    for launch, rec in zip(found, launch_outputs(k, source), strict=False):
        per = f", {rec.us_per_launch:.1f} µs each" if rec.us_per_launch else ""
        lines.append(f"{rec.calls}× {launch_text(launch, names)}{per}")
    return origin, lines


def kernel_repro(k: KernelInfo, source: str, run: Run, file_name: str) -> Repro:
    """A script that runs and times ``k`` as compiled, or why there is none."""
    return repro(k, source, str(run.path), file_name)
