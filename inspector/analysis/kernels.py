"""Generated kernels: by compile, by user source line (Inductor provenance), and how well
the CPU kernels are vectorized.

Inductor's C++ kernels use ``at::vec::Vectorized<T>`` when vectorized; the recorder marks
each kernel's ``vectorized`` with the ISA named in its source (``avx512``, ``avx2``, ...) or
``vec`` when the source uses ``at::vec`` without naming one — then the ISA is the build's,
i.e. the process's CPU capability (``ProcessStart.cpu_isa``, from
``torch.backends.cpu.get_cpu_capability()``). ``vectorization(model)`` is the run's
coverage figure: the share of C++ kernels that are vectorized.

Public API: ``kernels_by_compile(model)``, ``kernels_by_line(model)``,
``kernels_at(model, file, line)``, ``vectorization(model) -> Vectorization``,
``effective_isa(model, kernel)``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from dyn_inspect.inspector.locations import run_cwd, same_file
from dyn_inspect.inspector.model import CompileInfo, KernelInfo, RunModel


def kernels_by_compile(model: RunModel) -> list[tuple[CompileInfo, list[KernelInfo]]]:
    """Compiles that produced kernels, in compile order, with their kernels."""
    return [(c, list(c.kernels)) for c in model.compiles_in_order() if c.kernels]


def kernels_by_line(model: RunModel) -> dict[tuple[str, int], list[KernelInfo]]:
    """(file, line) of user source → the kernels generated from it (provenance)."""
    out: dict[tuple[str, int], list[KernelInfo]] = defaultdict(list)
    for k in model.kernels:
        for loc in dict.fromkeys((loc.file, loc.line) for loc in k.lines):
            out[loc].append(k)
    return dict(out)


def kernels_at(model: RunModel, file: str, line: int) -> list[KernelInfo]:
    """Kernels whose provenance includes ``file:line`` (``file`` as ``locations.same_file`` reads it)."""
    cwd = run_cwd(model)
    return [k for k in model.kernels if any(loc.line == line and same_file(loc.file, file, cwd) for loc in k.lines)]


def cpu_isa(model: RunModel, log: str) -> str | None:
    proc = model.processes.get(log)
    return proc.start.cpu_isa if proc is not None and proc.start is not None else None


def effective_isa(model: RunModel, kernel: KernelInfo) -> str | None:
    """The ISA a CPU kernel is vectorized for; None for a scalar (or non-CPU) kernel."""
    v = kernel.event.vectorized
    if not v:
        return None
    if v == "vec":
        isa = cpu_isa(model, kernel.compile.log)
        return isa.lower() if isa and isa.upper() not in ("DEFAULT", "NONE") else "vec"
    return v


@dataclass
class Vectorization:
    """How many of the run's C++ kernels are vectorized, and for which ISA."""

    cpp_kernels: int = 0
    vectorized: int = 0
    by_isa: dict[str, int] = field(default_factory=dict)  # effective ISA -> kernels
    cpu_isa: str | None = None  # the CPU capability of the (first) recorded process
    scalar: list[str] = field(default_factory=list)  # names of the scalar kernels

    @property
    def share(self) -> float | None:
        """Vectorized / C++ kernels (None when the run has no C++ kernel, e.g. on GPU)."""
        return self.vectorized / self.cpp_kernels if self.cpp_kernels else None


def vectorization(model: RunModel) -> Vectorization:
    """The run's vectorization coverage over its C++ kernels (forward and backward)."""
    out = Vectorization()
    isas: Counter[str] = Counter()
    for k in model.kernels:
        if k.event.backend != "cpp":
            continue
        out.cpp_kernels += 1
        isa = effective_isa(model, k)
        if isa:
            out.vectorized += 1
            isas[isa] += 1
        else:
            out.scalar.append(k.name)
    out.by_isa = dict(isas)
    out.cpu_isa = next((p.start.cpu_isa for p in model.processes.values() if p.start and p.start.cpu_isa), None)
    return out
