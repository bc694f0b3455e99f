"""Putting a file's findings onto the document as it is now: each finding relocated
(``source_lines``) and given the columns to mark, filtered by the settings. Diagnostics,
hover and code actions all read the same placements, so they always agree on lines."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from dyn_inspect.inspector.reports.findings import BreakFinding, CauseFinding, FailureFinding, FileFindings, FunctionFindings
from dyn_inspect.lsp.settings import Settings
from dyn_inspect.lsp.source_lines import Span, code_bounds, relocate, relocate_def, span_for

Kind = Literal["break", "recompile", "failure", "cause"]


@dataclass(frozen=True)
class Placed:
    kind: Kind
    span: Span  # 0-based line, code-point columns in the current text
    finding: BreakFinding | FunctionFindings | FailureFinding | CauseFinding


def _line_span(lines: Sequence[str], line1: int) -> Span:
    start, end = code_bounds(lines[line1 - 1])
    return Span(line1 - 1, start, end)


def place_function(lines: Sequence[str], fn: FunctionFindings) -> int | None:
    """The 1-based line of the function's ``def`` in the current text, or None."""
    return relocate_def(lines, fn.def_line, fn.name)


DiskLines = Callable[[str], "Sequence[str] | None"]


def _recorded_indent(disk: DiskLines | None, file: str, line1: int, code: str | None) -> int | None:
    """The indentation the recorded line had, read from the file on disk when that line
    still holds the recorded text (the editor's copy may have been re-indented since)."""
    if disk is None or not code:
        return None
    lines = disk(file)
    if lines is None or not 1 <= line1 <= len(lines) or lines[line1 - 1].strip() != code.strip():
        return None
    text = lines[line1 - 1]
    return len(text) - len(text.lstrip())


def place(ff: FileFindings | None, lines: Sequence[str], settings: Settings, disk: DiskLines | None = None) -> list[Placed]:
    if ff is None:
        return []
    out: list[Placed] = []
    for b in ff.breaks:
        if b.origin is not None and not settings.show_library_breaks:
            continue
        line = relocate(lines, b.loc.line, b.loc.code)
        if line is None:
            continue
        indent = _recorded_indent(disk, b.loc.file, b.loc.line, b.loc.code)
        span = span_for(lines[line - 1], line - 1, b.loc.code, b.loc.col, b.loc.end_col, b.from_stack, indent)
        out.append(Placed("break", span, b))
    if settings.show_recompiles:
        for fn in ff.functions:
            if not fn.steps and fn.limit_reason is None:
                continue
            line = place_function(lines, fn)
            if line is not None:
                out.append(Placed("recompile", _line_span(lines, line), fn))
        for c in ff.causes:
            line = relocate(lines, c.loc.line, c.loc.code)
            if line is not None:
                out.append(Placed("cause", _line_span(lines, line), c))
    for f in ff.failures:
        line = relocate_def(lines, f.line, f.name) if f.at_def else relocate(lines, f.line, f.code)
        if line is not None:
            out.append(Placed("failure", _line_span(lines, line), f))
    out.sort(key=lambda p: (p.span.line, p.span.start, p.kind))
    return out


def at_line(placed: list[Placed], line0: int) -> list[Placed]:
    return [p for p in placed if p.span.line == line0]
