"""Graph breaks from the ``dynamo_graph_break_reason`` artifact.

The text is the one source both live runs and imported TORCH_TRACE logs have. Live, the
recorder's hook on Dynamo's ``log_graph_break`` also hands over the exception (its
``gb_type`` and ``real_stack`` with columns on torch 2.13+), which refines the text.
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from collections.abc import Iterable

from dyn_inspect.engine.normalizers import Context, TraceOut, TraceRecord, emits, handles_artifact
from dyn_inspect.engine.normalizers.locations import loc_from_frame_summary, parse_traceback
from dyn_inspect.engine.schema import Event, GraphBreak, Loc

_AT_RE = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)\s*$", re.M)
_REASON_RE = re.compile(r"^Graph Break Reason: (?P<reason>.*)$", re.M)
_URL_RE = re.compile(r"(https?://\S+/gb/(?P<id>gb\d+)\.html)")
_EXC_TYPE_RE = re.compile(r"^torch\._dynamo\.exc\.\w+: (?P<type>.+)$", re.M)


def dedup_key(gb_type: str, loc: Loc) -> str:
    """Stable across recompiles, resume frames, runs and TORCH_TRACE round trips: type +
    innermost file:line. (Not the column: a traceback without carets — Python leaves them
    out when the expression is the whole line — gives none, so an imported log would key
    the same break differently. Two breaks on one line are one site with two hits, each
    hit keeping its own columns.)"""
    raw = f"{gb_type}\0{loc.file}\0{loc.line}".encode()
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


_NESTED = "*** While handling this graph break, another graph break occurred: ***"
_SECTION_ENDS = ("User code traceback:", "Stack variable source attribution:")


def _section(text: str) -> str:
    """The reason block: from 'Graph Break Reason' up to the user traceback."""
    start = text.find("Graph Break Reason:")
    if start < 0:
        return ""
    ends = [i for i in (text.find(e, start) for e in _SECTION_ENDS) if i > start]
    return text[start : min(ends) if ends else None]


def _parse_block(block: str, first: bool) -> dict[str, object]:
    """One break's part of torch's message: its type line, explanation, hints and link.

    torch writes one such block per break and, when handling a break raised another
    ("graph break in loop" after an ``.item()`` break), a second one after ``_NESTED``;
    each block carries its own gb id, so type and id are read from the same block.
    """
    lines = block.splitlines()
    reason = ""
    if first:
        reason_m = _REASON_RE.search(block)
        reason = reason_m["reason"].strip() if reason_m else ""
        lines = lines[1:]
    body = [ln.strip() for ln in lines if ln.strip()]
    # The type is the Unsupported message's first line. A reason ending in ":" is a prefix
    # ("Encountered graph break when attempting to trace CALL: ...:", "Failed to handle
    # graph break gracefully. ... encountered:"): the type is the next line.
    if first and reason and not reason.endswith(":"):
        gb_type = reason
    else:
        gb_type = body[0] if body else reason
    explanation_lines: list[str] = []
    context_lines: list[str] = []
    hints: list[str] = []
    section = ""  # the part of the block the current line continues
    for raw in lines:
        s = raw.strip()
        if s.startswith("Explanation:"):
            section = "explanation"
            explanation_lines.append(s[len("Explanation:") :].strip())
        elif s.startswith("Hint:"):
            section = ""
            hints.append(s[len("Hint:") :].strip())
        elif s.startswith("Developer debug context:"):
            # what torch actually hit: for GB0112 the exception itself ("TypeError <built-in
            # method sin ...>: sin() takes 1 positional argument but 2 were given")
            section = "context"
            context_lines.append(s[len("Developer debug context:") :].strip())
        elif s.startswith("For more details"):
            section = ""
        elif section == "explanation":
            # torch's layout is kept (a code listing under "computed as follows:"): the
            # continuation lines, dedented together below
            explanation_lines.append(raw.rstrip())
        elif section == "context":
            context_lines.append(raw.rstrip())
    url_m = _URL_RE.search(block)
    return {
        "reason": reason,
        "gb_type": gb_type,
        "explanation": _layout(explanation_lines),
        "context": _layout(context_lines),
        "hints": hints,
        "url": url_m[1] if url_m else None,
        "gb_id": url_m["id"].upper() if url_m else None,
    }


def _layout(lines: list[str]) -> str:
    """The explanation's first line, then its continuation lines dedented as a block,
    blank lines at either end dropped."""
    if not lines:
        return ""
    rest = textwrap.dedent("\n".join(lines[1:])).strip("\n")
    return (lines[0] + ("\n" + rest if rest.strip() else "")).strip()


def parse_break_text(text: str) -> dict[str, object]:
    """torch's break message: the first break's fields, every break's block under
    ``"blocks"``, and the user stack."""
    section = _section(text)
    blocks = [_parse_block(b, i == 0) for i, b in enumerate(section.split(_NESTED))] if section else []
    head = (
        dict(blocks[0])
        if blocks
        else {"reason": "", "gb_type": "", "explanation": "", "context": "", "hints": [], "url": None, "gb_id": None}
    )
    exc_m = _EXC_TYPE_RE.search(text)
    if exc_m:  # older torch: "torch._dynamo.exc.Unsupported: <type>"
        head["gb_type"] = exc_m["type"].strip()
    if not head["url"]:
        url_m = _URL_RE.search(text)
        if url_m:
            head["url"], head["gb_id"] = url_m[1], url_m["id"].upper()
    tb_start = text.find("User code traceback:")
    tb_end = text.find("Traceback (most recent call last):", tb_start)
    stack = parse_traceback(text[tb_start : tb_end if tb_end > 0 else None]) if tb_start >= 0 else []
    head["gb_type"] = head["gb_type"] or head["reason"] or "unknown"
    head["blocks"] = blocks
    head["stack"] = stack
    return head


def block_for(parsed: dict[str, object], gb_type: str) -> dict[str, object]:
    """The block of torch's message that describes ``gb_type`` (its id, explanation and
    hints), else the first one: a type is never paired with another break's id."""
    blocks: list[dict[str, object]] = parsed.get("blocks") or []  # type: ignore[assignment]
    for block in blocks:
        if block["gb_type"] == gb_type:
            return block
    return parsed


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
                loc = Loc(
                    file=loc.file,
                    line=loc.line,
                    name=loc.name or inner.name,
                    col=inner.col,
                    end_col=inner.end_col,
                    code=loc.code or inner.code,
                )
    if loc is None:
        loc = Loc(file="<unknown>", line=0)
    block = block_for(parsed, gb_type)
    cid = record.compile_id
    if cid:
        ctx.breaks_in_compile[cid] += 1
    yield GraphBreak(
        key=dedup_key(gb_type, loc),
        gb_type=gb_type,
        loc=loc,
        gb_id=block["gb_id"],  # type: ignore[arg-type]
        url=block["url"],  # type: ignore[arg-type]
        reason=str(parsed["reason"]),
        explanation=str(block["explanation"]),
        context=str(block["context"]),
        hints=[str(h) for h in block["hints"]],  # type: ignore[attr-defined]
        user_stack=stack,
        text=ctx.blobs.put(text),
    )


# -- back to TORCH_TRACE -----------------------------------------------------------------


@emits(GraphBreak)
def emit_graph_break(event: GraphBreak, out: TraceOut) -> None:
    text = out.text(event, "text", f"graph break text of {event.cid}")
    if text is None:
        # Rebuild torch's message from the parsed fields (enough for tlparse).
        text = (
            f"Graph break in user code at {event.loc.file}:{event.loc.line}\n"
            f"Graph Break Reason: {event.reason or event.gb_type}\n"
            + (f"  Explanation: {event.explanation}\n" if event.explanation else "")
            + "".join(f"  Hint: {h}\n" for h in event.hints)
            + (f"\n  Developer debug context: {event.context}\n" if event.context else "")
        )
    out.emit(event.t, out.envelope("artifact", {"name": "dynamo_graph_break_reason", "encoding": "string"}, event.cid), text)
