"""The GPU format without a GPU: Triton kernels from a real H200 TORCH_TRACE log."""

from __future__ import annotations

from dyn_inspect.inspector.run import Run


def test_triton_kernels_parsed_with_source_and_fused_ops(gpu_trace_run: Run) -> None:
    kernels = gpu_trace_run.model.kernels
    assert len(kernels) == 28
    assert all(k.event.backend == "triton" for k in kernels)
    first = kernels[0]
    src = gpu_trace_run.blob_text(first.event.source)
    assert "@triton.jit" in src and f"def {first.name}(" in src
    assert first.event.fused_ops == ["aten._to_copy"] and first.event.source_nodes == ["linear"]
    assert any(k.event.backward for k in kernels)


def test_breaks_and_recompiles_from_trace(gpu_trace_run: Run) -> None:
    m = gpu_trace_run.model
    assert {g.first.gb_id for g in m.break_groups()} == {"GB0170", "GB0059"}
    assert m.total_break_hits() == 4
    assert len(m.recompiles) == 3
    assert all("size mismatch at index 0. expected 32, actual 64" in r.event.reasons[0] for r in m.recompiles)
