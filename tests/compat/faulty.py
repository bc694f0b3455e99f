"""A small Inductor program whose torch touchpoints tests/engine/test_torch_compat.py breaks.

    python faulty.py FAULT RUN_DIR     # break FAULT, start the recorder, run the program
    python faulty.py none -            # the plain run: no recorder

Each fault changes torch the way a newer release might (a new parameter, a method moved,
a config key refused, a version we never tested) or makes our own handler raise. It is
applied after ``import torch`` and before the recorder starts (``recorder.activate`` is
what the startup hook calls), so the recorder meets the changed torch as it would meet a
new release. Whatever breaks, the program's stdout and exit code must be a plain run's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch


def _replace_everywhere(original: Any, new: Any) -> None:
    for module in list(sys.modules.values()):
        try:
            if getattr(module, "trace_structured", None) is original:
                module.trace_structured = new
        except Exception:  # noqa: BLE001
            pass


def trace_signature() -> None:
    """trace_structured grows a keyword parameter (as torch does now and then)."""
    import torch._logging._internal as internal

    original = internal.trace_structured

    def trace_structured(name, metadata_fn=dict, *, payload_fn=lambda: None, suppress_context=False,  # type: ignore[no-untyped-def]
                         expect_trace_id=True, record_logging_overhead=True, compile_id=None, new_option=None):
        return original(name, metadata_fn, payload_fn=payload_fn, suppress_context=suppress_context,
                        expect_trace_id=expect_trace_id, record_logging_overhead=record_logging_overhead,
                        compile_id=compile_id)

    _replace_everywhere(original, trace_structured)


def trace_ours_raises() -> None:
    """Our lean trace code raises on the first record."""
    from dyn_inspect.engine import tracehook

    def broken(payload: object) -> str | None:
        raise RuntimeError("injected: our payload conversion failed")

    tracehook._payload_text = broken


def graph_breaks_moved() -> None:
    """log_graph_break moves off InstructionTranslatorBase (onto its subclasses)."""
    from torch._dynamo import symbolic_convert as sc

    method = sc.InstructionTranslatorBase.__dict__["log_graph_break"]
    for cls in (sc.InstructionTranslator, sc.InliningInstructionTranslator):
        cls.log_graph_break = method
    del sc.InstructionTranslatorBase.log_graph_break


def graph_breaks_signature() -> None:
    """log_graph_break grows a parameter."""
    from torch._dynamo import symbolic_convert as sc

    original = sc.InstructionTranslatorBase.log_graph_break

    def log_graph_break(self, code_options, reason, exc, extra=None):  # type: ignore[no-untyped-def]
        return original(self, code_options, reason, exc)

    sc.InstructionTranslatorBase.log_graph_break = log_graph_break


def graph_breaks_ours_raises() -> None:
    from dyn_inspect.engine.recorder import Recorder

    def broken(self: Any, exc: Any) -> None:
        raise RuntimeError("injected: our graph-break handler failed")

    Recorder.set_pending_break = broken  # type: ignore[method-assign]


def provenance_refused() -> None:
    """Inductor's provenance function takes other parameters (a newer Inductor): our wrapper
    is not installed, the compile goes on with torch's own."""
    from torch._inductor import debug

    original = debug.set_kernel_post_grad_provenance_tracing

    def set_kernel_post_grad_provenance_tracing(nodes: Any, name: Any, extern: bool = False) -> Any:
        return original(nodes, name, extern)

    debug.set_kernel_post_grad_provenance_tracing = set_kernel_post_grad_provenance_tracing


def profiler_ours_raises() -> None:
    """--profile-kernels: our per-call hook raises inside every compiled call."""
    from dyn_inspect.engine.profiler import StepProfiler

    def broken(self: Any, ctx_id: int) -> None:
        raise RuntimeError("injected: our step hook failed")

    StepProfiler._on_outer_call = broken  # type: ignore[method-assign]


def environment_raises() -> None:
    """Environment probes fail (a build without the CPU-capability call, odd config)."""
    from dyn_inspect.engine import environment

    def broken(*args: Any) -> Any:
        raise RuntimeError("injected: probe failed")

    torch.backends.cpu.get_cpu_capability = broken
    environment.compile_config = broken


def newer_torch() -> None:
    """A torch release newer than the newest we tested."""
    torch.__version__ = "2.99.0"  # type: ignore[assignment]


FAULTS: dict[str, Callable[[], None]] = {
    "none": lambda: None,
    "trace_signature": trace_signature,
    "trace_ours_raises": trace_ours_raises,
    "graph_breaks_moved": graph_breaks_moved,
    "graph_breaks_signature": graph_breaks_signature,
    "graph_breaks_ours_raises": graph_breaks_ours_raises,
    "provenance_refused": provenance_refused,
    "profiler_ours_raises": profiler_ours_raises,
    "environment_raises": environment_raises,
    "newer_torch": newer_torch,
}


def branchy(x: torch.Tensor) -> torch.Tensor:
    y = x.relu()
    if y.sum() > 0:  # BREAK:branch
        y = y + 1
    return y.sin()


def by_shape(x: torch.Tensor) -> torch.Tensor:
    return (x * 2).sum(dim=0)


def main() -> None:
    fault, run_dir = sys.argv[1], sys.argv[2]
    FAULTS[fault]()
    if run_dir != "-":
        import os

        from dyn_inspect.engine import recorder

        os.makedirs(os.path.join(run_dir, "blobs"), exist_ok=True)

        recorder.activate(run_dir)
    # Compiled after the recorder starts, as a program's torch.compile calls usually are.
    shape_fn, branchy_fn = torch.compile(by_shape), torch.compile(branchy)
    for n in (4, 8):  # a shape change: one recompile
        print("by_shape", n, shape_fn(torch.ones(n, 3)).tolist())
    x = torch.arange(6.0).reshape(2, 3) - 2
    for step in range(4):  # steady steps (what --profile-kernels profiles)
        print("branchy", step, round(float(branchy_fn(x + step).sum()), 4))


if __name__ == "__main__":
    main()
