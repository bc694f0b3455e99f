"""Graph breaks from the ``dynamo_graph_break_reason`` artifact.

The text is the one source both live runs and imported TORCH_TRACE logs have. Live, the
recorder's hook on Dynamo's ``log_graph_break`` also hands over the exception (its
``gb_type`` and ``real_stack`` with columns on torch 2.13+), which refines the text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from dyn_inspect.engine.normalizers import Context, TraceRecord, handles_artifact
from dyn_inspect.engine.normalizers.locations import loc_from_frame_summary, parse_traceback
from dyn_inspect.engine.schema import Event, GraphBreak, Loc

_AT_RE = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)\s*$", re.M)
_REASON_RE = re.compile(r"^Graph Break Reason: (?P<reason>.*)$", re.M)
_URL_RE = re.compile(r"(https?://\S+/gb/(?P<id>gb\d+)\.html)")
_EXC_TYPE_RE = re.compile(r"^torch\._dynamo\.exc\.\w+: (?P<type>.+)$", re.M)


def dedup_key(gb_type: str, loc: Loc) -> str:
    """Stable across recompiles, resume frames and runs: type + innermost file:line."""
    raw = f"{gb_type}\0{loc.file}\0{loc.line}".encode()
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def _section(text: str) -> str:
    """The reason block: from 'Graph Break Reason' up to the user traceback."""
    start = text.find("Graph Break Reason:")
    end = text.find("User code traceback:")
    return text[start:end if end > start else None] if start >= 0 else ""


def parse_break_text(text: str) -> dict[str, object]:
    section = _section(text)
    reason_m = _REASON_RE.search(section)
    reason = reason_m["reason"].strip() if reason_m else ""
    explanation_lines: list[str] = []
    hints: list[str] = []
    in_expl = False
    for line in section.splitlines():
        s = line.strip()
        if s.startswith("Explanation:"):
            in_expl = True
            explanation_lines.append(s[len("Explanation:"):].strip())
        elif s.startswith("Hint:"):
            in_expl = False
            hints.append(s[len("Hint:"):].strip())
        elif s.startswith("Developer debug context:") or s.startswith("For more details"):
            in_expl = False
        elif in_expl and s:
            explanation_lines.append(s)
    # gb_type: the first line of the Unsupported message. With "Encountered graph break when
    # attempting to trace X:" prefixes it is the first non-empty line after that one.
    gb_type = ""
    exc_m = _EXC_TYPE_RE.search(text)
    if exc_m:
        gb_type = exc_m["type"].strip()
    else:
        body = [ln.strip() for ln in section.splitlines()[1:] if ln.strip()]
        if reason.startswith("Encountered graph break") and body:
            gb_type = body[0]
        else:
            gb_type = reason
    url_m = _URL_RE.search(text)
    tb_start = text.find("User code traceback:")
    tb_end = text.find("Traceback (most recent call last):", tb_start)
    stack = parse_traceback(text[tb_start:tb_end if tb_end > 0 else None]) if tb_start >= 0 else []
    return {
        "reason": reason,
        "gb_type": gb_type or reason or "unknown",
        "explanation": " ".join(explanation_lines).strip(),
        "hints": hints,
        "url": url_m[1] if url_m else None,
        "gb_id": url_m["id"].upper() if url_m else None,
        "stack": stack,
    }


@handles_artifact("dynamo_graph_break_reason")
def graph_break(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    text = record.payload or ""
    parsed = parse_break_text(text)
    stack: list[Loc] = parsed["stack"]  # type: ignore[assignment]
    at = _AT_RE.search(text)
    loc = stack[-1] if stack else None
    if at:
        file, line = at["file"], int(at["line"])
        if loc is None or (loc.file, loc.line) != (file, line):
            match = next((f for f in reversed(stack) if (f.file, f.line) == (file, line)), None)
            loc = match or Loc(file=file, line=line)
    gb_type = str(parsed["gb_type"])
    pending, ctx.pending_break = ctx.pending_break, None
    if pending is not None:
        gb_type = pending.gb_type or gb_type
        live = [loc_from_frame_summary(fs) for fs in pending.stack]
        if live and loc is not None:
            inner = live[-1]
            if (inner.file, inner.line) == (loc.file, loc.line) and inner.col is not None:
                loc = Loc(file=loc.file, line=loc.line, name=loc.name or inner.name,
                          col=inner.col, end_col=inner.end_col, code=loc.code or inner.code)
    if loc is None:
        loc = Loc(file="<unknown>", line=0)
    cid = record.compile_id
    if cid:
        ctx.breaks_in_compile[cid] += 1
    yield GraphBreak(
        key=dedup_key(gb_type, loc),
        gb_type=gb_type,
        loc=loc,
        gb_id=parsed["gb_id"],  # type: ignore[arg-type]
        url=parsed["url"],  # type: ignore[arg-type]
        reason=str(parsed["reason"]),
        explanation=str(parsed["explanation"]),
        hints=list(parsed["hints"]),  # type: ignore[arg-type]
        user_stack=stack,
        text=ctx.blobs.put(text),
    )
