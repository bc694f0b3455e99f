"""Why the run recompiled: the recompiles in order, and per frame the timeline of its
compiles — which guard failed on what value, the suggestion, where the recompile limit was
hit (``inspector/analysis/recompiles.py``, ``inspector/analysis/guard_failures.py``)."""

from __future__ import annotations

from dyn_inspect.inspector.model import RecompileInfo
from dyn_inspect.inspector.outputs import reports as typed


def recompile_row(r: RecompileInfo) -> typed.RecompileRow:
    c = r.compile
    cap = c.capture
    return typed.RecompileRow(
        compile_id=c.cid,
        function=cap.co_name if cap else None,
        file=cap.co_filename if cap else None,
        line=cap.co_firstlineno if cap else None,
        reasons=list(r.event.reasons),
        cache_size=cap.cache_size if cap else None,
    )
