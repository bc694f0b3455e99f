"""What the version matrix compares per torch version: breaks, recompiles, kernels, lines.

``digest(run)`` reduces a recorded or imported run to the facts that must not change
when torch changes (compile-id strings, timings and graph text are left out). Used by
``summarize.py`` (after a recording) and by tests/engine/test_compat_matrix.py (after a replay).
"""

from __future__ import annotations

import os
from typing import Any

from dyn_inspect.inspector.run import Run

# The corpus programs' own files: kernel lines and breaks outside them are torch's or a library's.
USER_FILES = frozenset({"breaks.py", "corpus_helpers.py", "recompiles.py", "train.py", "model_utils.py"})


def _where(file: str, line: int) -> str:
    return f"{os.path.basename(file)}:{line}"


def digest(run: Run) -> dict[str, Any]:
    m = run.model
    groups = m.break_groups()
    breaks = sorted({_where(g.first.loc.file, g.first.loc.line) for g in groups if g.first.loc})
    kernel_lines: set[str] = set()
    with_lines = 0
    for k in m.kernels:
        user = {_where(loc.file, loc.line) for loc in k.lines if os.path.basename(loc.file) in USER_FILES}
        if user:
            with_lines += 1
        kernel_lines |= user
    return {
        "breaks": breaks,
        "break_hits": m.total_break_hits(),
        "break_columns": sum(1 for g in groups if g.first.loc and g.first.loc.col is not None),
        "break_types": sum(1 for g in groups if g.first.gb_type),
        "recompiles": len(m.recompiles),
        "recompiled": sorted({(r.compile.capture.co_name if r.compile.capture else "?") for r in m.recompiles}),
        "recompile_reasons": sorted({_reason_kind(r.event.reasons[0]) for r in m.recompiles if r.event.reasons}),
        "kernels": len(m.kernels),
        "kernels_with_lines": with_lines,
        "kernel_lines": sorted(kernel_lines),
    }


def _reason_kind(text: str) -> str:
    """'tensor 'x' size mismatch at index 0. expected 4, actual 8' -> 'size mismatch'."""
    for kind in ("size mismatch", "dtype mismatch", "stride mismatch", "type mismatch", "id mismatch"):
        if kind in text:
            return kind
    return text.strip().splitlines()[0][:60] if text.strip() else "?"
