"""Which diagnostics sit on code edited since the run: "edited since the run — verify to
confirm".

The log keeps each location's line text but not the files. ``build_index`` snapshots the
lines of every file with findings while the file on disk is still as the run saw it (not
modified since the run started: ``RunIndex.baselines``). A placed finding is *edited* when
the lines around it now (the line, the one before and the one after) differ from the lines
around its recorded line in that snapshot: a fix inserted next to it, the line re-indented
or rewritten around the same text. Files changed before the server first read the run have
no snapshot and are never marked (nothing to compare with, so no guess).
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from dyn_inspect.inspector.reports.findings import BreakFinding, CauseFinding, FailureFinding, FunctionFindings
from dyn_inspect.lsp.placement import Placed

EDITED = "edited since the run — verify to confirm"
WINDOW = 1  # lines compared on each side of the finding's line


def recorded_line(p: Placed) -> int:
    f = p.finding
    if isinstance(f, BreakFinding):
        return f.loc.line
    if isinstance(f, CauseFinding):
        return f.loc.line
    if isinstance(f, FunctionFindings):
        return f.def_line
    assert isinstance(f, FailureFinding)
    return f.line


def _window(lines: Sequence[str], line1: int) -> list[str]:
    lo, hi = max(0, line1 - 1 - WINDOW), min(len(lines), line1 + WINDOW)
    return [text.rstrip() for text in lines[lo:hi]]


def edited(p: Placed, baseline: Sequence[str] | None, lines: Sequence[str]) -> bool:
    if baseline is None:
        return False
    return _window(baseline, recorded_line(p)) != _window(lines, p.span.line + 1)


def annotate(
    placed: Sequence[Placed], diagnostics: list[types.Diagnostic], baseline: Sequence[str] | None, lines: Sequence[str]
) -> list[types.Diagnostic]:
    """Append the note to each diagnostic (built from ``placed``, in the same order) whose
    code was edited since the run."""
    for p, d in zip(placed, diagnostics, strict=True):
        if edited(p, baseline, lines) and EDITED not in d.message:
            d.message += f"\n({EDITED})"
    return diagnostics
