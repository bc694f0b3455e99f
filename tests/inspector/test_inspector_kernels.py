"""Kernels by compile and by source line, and the run's CPU vectorization coverage."""

from __future__ import annotations

import pytest

import inspector_program
from corpus_support import CORPUS, marker_line
from dyn_inspect.inspector.analysis.kernels import effective_isa, kernels_at, kernels_by_compile, kernels_by_line, vectorization
from dyn_inspect.inspector.locations import run_cwd
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.views.kernels import kernel_matches
from inspector_program import Recorded

RECOMPILES = CORPUS / "recompiles.py"

program, program_run = inspector_program.program, inspector_program.program_run  # the shared fixtures


def test_vectorization_coverage_counts_the_scalar_kernel(program: Recorded, program_run: Run) -> None:
    # program.py compiles `x.sin() + 1` normally and `x.cos() * 3` with cpp.simdlen = 1.
    m = program_run.model
    cov = vectorization(m)
    assert (cov.cpp_kernels, cov.vectorized, cov.share) == (2, 1, 0.5)
    vec_line, scalar_line = marker_line(program.program, "KERNEL:vec"), marker_line(program.program, "KERNEL:scalar")
    vec = kernels_at(m, str(program.program), vec_line)
    scalar = kernels_at(m, str(program.program), scalar_line)
    assert len(vec) == 1 and len(scalar) == 1
    assert cov.scalar == [scalar[0].name]
    # Cross-check with the generated C++ itself.
    assert "at::vec::Vectorized" in program_run.blob_text(vec[0].event.source)
    assert "at::vec" not in program_run.blob_text(scalar[0].event.source)
    assert effective_isa(m, scalar[0]) is None
    isa = effective_isa(m, vec[0])
    assert isa is not None and cov.by_isa == {isa: 1}
    if vec[0].event.vectorized == "vec":  # no ISA named in the source: the process's capability
        assert cov.cpu_isa is not None and isa == cov.cpu_isa.lower()
    assert {"aten.sin", "aten.add"} <= set(vec[0].event.fused_ops)
    assert {"aten.cos", "aten.mul"} <= set(scalar[0].event.fused_ops)


def test_kernels_by_source_line(recompiles_run: Run) -> None:
    # by_shape's body is the line after its def; it compiled twice (static, then dynamic).
    line = marker_line(RECOMPILES, "RECOMPILE:shape") + 1
    frame = next(f for f in recompiles_run.model.frames_in_order() if f.name == "by_shape")
    expected = [k for c in frame.compiles for k in c.kernels]
    assert len(expected) == 2
    cwd = run_cwd(recompiles_run.model)
    for spelling in (str(RECOMPILES), "recompiles.py", "tests/corpus/recompiles.py", "./recompiles.py"):
        assert kernels_at(recompiles_run.model, spelling, line) == expected, spelling
        # the TUI's kernel filter reads `file:line` the same way (locations.same_file)
        assert [k for k in recompiles_run.model.kernels if kernel_matches(k, f"{spelling}:{line}", cwd)] == expected, spelling
    assert kernels_at(recompiles_run.model, "../recompiles.py", line) == []  # one file, not every recompiles.py
    assert kernels_by_line(recompiles_run.model)[(str(RECOMPILES), line)] == expected
    assert kernels_at(recompiles_run.model, str(RECOMPILES), line + 100) == []


def test_kernels_by_compile_in_compile_order(recompiles_run: Run) -> None:
    groups = kernels_by_compile(recompiles_run.model)
    assert [c.cid for c, _ in groups] == ["0/0", "0/1", "1/0", "1/1"]
    assert all(len(ks) == 1 and ks[0].event.backend == "cpp" for _, ks in groups)


def test_gpu_run_has_no_cpu_coverage(gpu_trace_run: Run) -> None:
    cov = vectorization(gpu_trace_run.model)
    assert cov.cpp_kernels == 0 and cov.share is None
    assert {k.event.backend for k in gpu_trace_run.model.kernels} == {"triton"}


def test_kernel_command_on_a_cpp_kernel(program: Recorded, program_run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    """`dyn-inspect kernel` on the CPU (issue 33): what applies to C++ — source, ISA, no
    Triton metadata, IR stages or repro, each said in one line."""
    from dyn_inspect.cli import main

    m = program_run.model
    (scalar,) = kernels_at(m, str(program.program), marker_line(program.program, "KERNEL:scalar"))
    path = str(program_run.path)
    assert main(["kernel", scalar.name, path, "--compile", scalar.compile.cid]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{scalar.name} — compile {scalar.compile.cid}, cpp, ")
    assert "aten.cos" in out and "stages: source (" in out
    assert "compiled:" not in out and "launches" not in out  # no Triton metadata on a C++ kernel
    assert main(["kernel", scalar.name, path, "--compile", scalar.compile.cid, "--stage", "source"]) == 0
    assert "at::vec" not in capsys.readouterr().out  # the scalar kernel's own C++
    assert main(["kernel", scalar.name, path, "--compile", scalar.compile.cid, "--stage", "ptx"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dyn-inspect: {scalar.name}: no ptx kept") and len(err.strip().splitlines()) == 1
    assert main(["kernel", scalar.name, path, "--compile", scalar.compile.cid, "--repro"]) == 2
    err = capsys.readouterr().err
    assert "is a cpp kernel: repros are for Triton kernels" in err and len(err.strip().splitlines()) == 1
