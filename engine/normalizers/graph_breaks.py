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

import msgspec

from dyn_inspect.engine.normalizers import Context, TraceOut, TraceRecord, emits, handles_artifact
from dyn_inspect.engine.normalizers.locations import loc_from_frame_summary, parse_traceback
from dyn_inspect.engine.schema import Event, GraphBreak, Loc

_AT_RE = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)\s*$", re.M)
_REASON_RE = re.compile(r"^Graph Break Reason: (?P<reason>.*)$", re.M)
_URL_RE = re.compile(r"(https?://\S+/gb/(?P<id>gb\d+)\.html)")
_EXC_TYPE_RE = re.compile(r"^torch\._dynamo\.exc\.\w+: (?P<type>.+)$", re.M)
# torch's warning before a break it takes for a backend's exception (GB0219,
# ``unimplemented_with_warning``): "WON'T CONVERT f /path/x.py line 14", then the traceback
_WONT_CONVERT_RE = re.compile(r"^WON'T CONVERT (?P<name>\S+) (?P<file>.+) line (?P<line>\d+)$", re.M)
# the exception a traceback ends with: "torch._subclasses.fake_tensor.UnsupportedOperatorException: aten.sin.default"
_RAISED_RE = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Unsupported)): ", re.M)
# the frame torch skips after a break it cannot resume from (``convert_frame``, logged
# with TORCH_LOGS=graph_breaks): its user stack follows this line instead of "User code traceback:"
_SKIP_STACK = "The graph break occurred in the following user code:"


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
    if tb_start < 0:
        tb_start = text.find(_SKIP_STACK)
    tb_end = text.find("Traceback (most recent call last):", tb_start)
    stack = parse_traceback(text[tb_start : tb_end if tb_end > 0 else None]) if tb_start >= 0 else []
    # A break torch took for an exception outside the traced code (GB0219: the backend
    # raised on the captured graph) has a user stack that ends at the compiled function's
    # caller; where tracing stood in the function is in the debug context's "Traceback:"
    # (``format_frame_summary``). Those frames continue the stack: the user's line.
    context = str(head.get("context") or "")
    if "Traceback:" in context:
        inner = parse_traceback(context[context.find("Traceback:") :])
        if inner and not any((f.file, f.line) == (inner[-1].file, inner[-1].line) for f in stack):
            stack = stack + inner
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


def warned_break(text: str) -> GraphBreak | None:
    """torch's warning before a break it takes for an exception raised outside the traced
    code (GB0219, "Backend compiler exception": ``unimplemented_with_warning`` logs the
    exception's traceback as a graph-break record, then torch logs the break itself). It is
    not a break of its own; it becomes one, typed by the exception and placed at the frame
    it names, only where torch logged no break after it (``pending_warning``). None for any
    other record."""
    m = _WONT_CONVERT_RE.search(text)
    if m is None or not text.startswith("WON'T CONVERT "):
        return None
    raised = [r["type"] for r in _RAISED_RE.finditer(text)]
    gb_type = raised[-1].rsplit(".", 1)[-1] if raised else "WON'T CONVERT"
    loc = Loc(file=m["file"], line=int(m["line"]), name=m["name"])
    return GraphBreak(key=dedup_key(gb_type, loc), gb_type=gb_type, loc=loc, user_stack=[loc])


@handles_artifact("dynamo_graph_break_reason")
def graph_break(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    text = record.payload or ""
    cid = record.compile_id
    warned = warned_break(text)
    if warned is not None:
        if cid:
            ctx.pending_warning[cid] = msgspec.structs.replace(warned, text=ctx.blobs.put(text))
        return
    ctx.break_records += 1
    if cid:
        ctx.pending_warning.pop(cid, None)  # torch logged the break it warned of
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


# -- older torch: breaks known only from restart reasons -----------------------------------

_RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d+)$")


def restart_break(reason: str, file: str, line: int, name: str | None) -> GraphBreak:
    """One restart reason of a compile as the break it was. Older torch wrote no
    graph-break record, only the reason Dynamo restarted its analysis (tlparse lists them
    as "RestartAnalysis"): 2.9's is the break's message ("Failed to trace builtin
    operator\n  Explanation: ..."), older ones a sentence ("'skip function graph_break in
    file .../decorators.py'")."""
    text = reason.strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    parsed = _parse_block(f"Graph Break Reason: {text}", first=True)
    gb_type = str(parsed["gb_type"]) or "restart"
    loc = Loc(file=file, line=line, name=name)
    return GraphBreak(
        key=dedup_key(gb_type, loc),
        gb_type=gb_type,
        loc=loc,
        gb_id=parsed["gb_id"],  # type: ignore[arg-type]
        url=parsed["url"],  # type: ignore[arg-type]
        reason=str(parsed["reason"]),
        explanation=str(parsed["explanation"]),
        context=str(parsed["context"]),
        hints=[str(h) for h in parsed["hints"]],  # type: ignore[attr-defined]
        user_stack=[loc],
    )


def hold_restart_breaks(ctx: Context, cid: str, t: float, reasons: list[str], frame: tuple[object, object, object]) -> None:
    """A compile restarted for ``reasons`` and torch logged no break for it: they are its
    breaks, placed once the frame's resume function says at which line
    (``resumed_restart_breaks``)."""
    name, file, first = frame
    if not reasons or not isinstance(file, str) or not isinstance(name, str):
        return
    line = int(first) if isinstance(first, int) else 0
    held = ctx.pending_restarts.setdefault((ctx.epoch, file, name), [])
    held.extend(msgspec.structs.replace(restart_break(r, file, line, name), cid=cid, t=t) for r in reasons)


def resumed_restart_breaks(ctx: Context, resume: Loc) -> list[GraphBreak]:
    """A resume function starts compiling (``torch_dynamo_resume_in_<fn>_at_<line>``): the
    held breaks of ``fn`` in its file happened at that line — where Dynamo split the frame."""
    m = _RESUME_RE.match(resume.name or "")
    if m is None:
        return []
    held = ctx.pending_restarts.pop((ctx.epoch, resume.file, m["fn"]), [])
    out = []
    for b in held:
        if ctx.breaks_in_compile.get(str(b.cid), 0):
            continue  # a record of the break came after all (a log written back by `export`)
        loc = Loc(file=b.loc.file, line=int(m["line"]), name=b.loc.name)
        out.append(msgspec.structs.replace(b, loc=loc, key=dedup_key(b.gb_type, loc), user_stack=[loc]))
    return out


def unresumed_restart_breaks(ctx: Context) -> Iterable[GraphBreak]:
    held, ctx.pending_restarts = ctx.pending_restarts, {}
    if ctx.break_records:
        return
    for breaks in held.values():
        yield from (b for b in breaks if not ctx.breaks_in_compile.get(str(b.cid), 0))


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
