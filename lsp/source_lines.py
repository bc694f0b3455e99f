"""Where a recorded line is now, and which columns of it to mark.

The log records each location's line text (``Loc.code``, stripped). When the document has
changed since the run, a finding moves to the line that now holds that text — the same line
if it still matches, else the unique match nearby, else the unique match in the file — or it
is dropped: a finding is never shown on an unrelated line.

Columns: torch gives 0-based UTF-8 byte offsets into the original line (CPython's
``co_positions``); they are converted to code points here and to the client's position
encoding by the caller. Without columns the mark covers the line's code without its
indentation and without a trailing comment.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass

NEARBY = 30  # lines searched on each side before the whole file


@dataclass(frozen=True)
class Span:
    """A 0-based line and a [start, end) column range in code points."""

    line: int
    start: int
    end: int


def _norm(text: str) -> str:
    return text.strip()


def relocate_by(lines: Sequence[str], line: int, matches: Callable[[str], bool]) -> int | None:
    """The 1-based line that now satisfies ``matches``: ``line`` itself, else the unique
    match within ``NEARBY`` lines, else the unique match in the file; None when ambiguous
    or absent."""
    if 1 <= line <= len(lines) and matches(lines[line - 1]):
        return line
    lo, hi = max(0, line - 1 - NEARBY), min(len(lines), line + NEARBY)
    near = [i + 1 for i in range(lo, hi) if matches(lines[i])]
    if len(near) == 1:
        return near[0]
    if len(near) > 1:
        return None  # several candidates close by: guessing could pick an unrelated line
    everywhere = [i + 1 for i, text in enumerate(lines) if matches(text)]
    return everywhere[0] if len(everywhere) == 1 else None


def relocate(lines: Sequence[str], line: int, code: str | None) -> int | None:
    """Where the line recorded as ``code`` at ``line`` is now (1-based), or None."""
    if code is None or not code.strip():
        # Nothing recorded to compare with: trust the line while it exists.
        return line if 1 <= line <= len(lines) else None
    want = _norm(code)
    return relocate_by(lines, line, lambda text: _norm(text) == want)


def def_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*[\(\[]")


def relocate_def(lines: Sequence[str], line: int, name: str) -> int | None:
    """Where ``def name`` is now, starting from its recorded 1-based line."""
    pattern = def_pattern(name)
    return relocate_by(lines, line, lambda text: pattern.match(text) is not None)


def code_bounds(text: str) -> tuple[int, int]:
    """The line's code without indentation and without a trailing comment."""
    start = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    comment = _comment_start(text)
    if comment is not None and comment > start:
        end = len(text[:comment].rstrip())
    return start, max(start, end)


def _comment_start(text: str) -> int | None:
    """Column of a trailing ``#`` comment (tokenize, so a ``#`` inside a string is not one)."""
    if "#" not in text:
        return None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text.strip() + "\n").readline):
            if tok.type == tokenize.COMMENT:
                return tok.start[1] + (len(text) - len(text.lstrip()))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return None


def byte_to_char(text: str, byte_col: int) -> int:
    """A UTF-8 byte offset into ``text`` as a code-point offset (clamped to the line)."""
    data = text.encode("utf-8")
    if byte_col >= len(data):
        return len(text)
    return len(data[: max(0, byte_col)].decode("utf-8", "ignore"))


def span_for(
    text: str,
    line0: int,
    code: str | None,
    col: int | None,
    end_col: int | None,
    clip_to_code: bool = False,
    recorded_indent: int | None = None,
) -> Span:
    """The columns to mark on ``text`` (the current line, 0-based ``line0``).

    ``col``/``end_col`` were recorded against the original line, whose indentation may have
    changed since (the stripped text matched); they are shifted by the indentation change.
    ``recorded_indent`` is that line's indentation when known (the file on disk still holds
    the recorded text while the editor's copy was re-indented).
    ``clip_to_code`` ends the mark where the code ends (user-stack frames carry an end
    column at the end of the physical line, comment included).
    """
    code_start, code_end = code_bounds(text)
    if col is None:
        return Span(line0, code_start, code_end)
    shift = 0
    if recorded_indent is not None:
        shift = code_start - recorded_indent
    elif code:
        stripped = code.strip()
        # The recorded line was indentation + stripped code; its indentation is unknown but
        # lies in [end_col - len(code), col]. Assume unchanged when that fits, else the
        # nearest value that does.
        lo = max(0, (end_col if end_col is not None else col) - len(stripped.encode("utf-8")))
        old_indent = min(max(code_start, lo), col)
        shift = code_start - old_indent
    start = byte_to_char(text, col + shift) if col + shift >= 0 else code_start
    if end_col is None or end_col <= col:
        end = code_end
    else:
        end = byte_to_char(text, end_col + shift)
    if clip_to_code:
        end = min(end, code_end)
    start = min(max(start, 0), len(text))
    end = min(max(end, start), len(text))
    if end == start:
        return Span(line0, code_start, code_end)
    return Span(line0, start, end)
