"""Placed findings → LSP diagnostics (and the short texts other features reuse).

Every diagnostic has ``source`` "dyn-inspect" and ``data`` = its kind and what names its
finding (a break's key, a function's name, a cause's title, a failure's compile id). By
kind, with the message as ``*_message`` builds it:

- graph break: the configured severity (Warning by default), on the breaking expression.
  Message: ``Graph break: <headline> — torch: <gb_type> — <explanation> (N hits)``, where
  the headline is the inspector's words for it (``BreakFinding.headline``), torch's gb
  type is added only where it differs from the headline, the explanation is the first
  sentence of torch's explanation (else its reason) on one line, left out where it only
  repeats the gb type, and a break inside a library reads ``Graph break inside <package
  path:line> (called from here): …``. ``code`` = torch's gb id (its gb type when it has
  none), ``codeDescription`` its page; related information = the user stack from the
  outermost user frame, each entry ``<depth>. <function>: <code>``, a run of frames
  inside torch/nn/modules collapsed to one.
- recompile: on the function's ``def`` line, Information, or Warning (code
  ``recompile-limit`` instead of ``recompile``) once the recompile limit made it fall back
  to eager. Message lines: ``Recompiled: `f` compiled N×`` (plus how often its code after
  a graph break recompiled, and the limit), ``Failed guard(s): …`` (the first three
  distinct, ``(+k more)``), ``Suggestion: …`` (the limit's own advice once it was hit);
  related information = the call site it recompiled from, when recorded.
- compile failure: Error on its line (the ``def`` line when torch names no line), code =
  the failure's type; ``Compile failure in `f` (<type>): <reason>`` (the reason on one
  line, at most 300 characters).
- root cause (``inspector.analysis.causes``, a recompile cause with a fix): one diagnostic
  at the fix site (where the variable is made), Information, code ``recompile-cause``:
  ``Recompiled N× in F frames from one cause: <title>`` then ``Fix: `<code>` <why> —
  <effect> (the quick fix makes the change | inserts it)``; related information = each
  frame it made recompile. Those recompiles are left out of the frames' own notes
  (``findings``), so the cause is said once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from lsprotocol import types

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.links import link_url
from dyn_inspect.inspector.locations import from_user, package_path
from dyn_inspect.inspector.outputs.lsp import DIAGNOSTIC_CODES
from dyn_inspect.inspector.reports.findings import BreakFinding, CauseFinding, FailureFinding, FunctionFindings, original_function
from dyn_inspect.lsp.documents import TextView, path_uri
from dyn_inspect.lsp.placement import Placed
from dyn_inspect.lsp.settings import Settings

SOURCE = "dyn-inspect"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
ONE_LINE_MAX = 200


def one_line(text: str, limit: int = ONE_LINE_MAX) -> str:
    """The first sentence of ``text`` on one line, at most ``limit`` characters."""
    flat = " ".join(text.split())
    first = _SENTENCE_END.split(flat, maxsplit=1)[0]
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def hits(n: int) -> str:
    return f"{n} hit" if n == 1 else f"{n} hits"


def short_location(loc: Loc) -> str:
    """A library location as people read it: the path after site-packages/, with the line."""
    path = package_path(loc.file) or loc.file.replace("\\", "/")
    return f"{path}:{loc.line}"


def break_message(b: BreakFinding) -> str:
    e = b.event
    explanation = one_line(e.explanation or e.reason or "")
    where = f" inside {short_location(b.origin)} (called from here)" if b.origin is not None else ""
    said = b.headline
    text = f"Graph break{where}: {said}" + (f" — torch: {e.gb_type}" if said != e.gb_type else "")
    if explanation and explanation != e.gb_type:
        text += f" — {explanation}"
    return f"{text} ({hits(b.count)})"


def recompile_message(fn: FunctionFindings) -> str:
    own = [s for s in fn.steps if s.part is None]
    parts = [s for s in fn.steps if s.part is not None]
    head = f"Recompiled: `{fn.name}` compiled {fn.compiles}×"
    if parts:
        lines = sorted({s.part_line for s in parts if s.part_line is not None})
        at = ", ".join(str(n) for n in lines)
        head += f"; its code after the graph break{'s' if len(lines) != 1 else ''} (line {at}) recompiled {len(parts)}×"
    if fn.limit_reason is not None:
        head += " — hit the recompile limit: it runs eagerly (uncompiled) from then on"
    out = [head]
    guards: list[str] = []
    for s in own + parts:
        if s.text and s.text not in guards:
            guards.append(s.text)
    if guards:
        shown = guards[:3]
        more = f" (+{len(guards) - 3} more)" if len(guards) > 3 else ""
        out.append(("Failed guard: " if len(shown) == 1 else "Failed guards: ") + "; ".join(shown) + more)
    suggestion = (
        fn.limit_text if fn.limit_reason is not None and fn.limit_text else next((s.suggestion for s in own + parts if s.suggestion), None)
    )
    if suggestion:
        out.append(f"Suggestion: {suggestion}")
    return "\n".join(out)


def _site_label(loc: Loc) -> str:
    """A frame the cause made recompile, as the user wrote it (resume functions are the
    rest of a function after a graph break)."""
    name = loc.name or "?"
    original = original_function(name)
    if original is not None:
        return f"recompiled here: `{original[0]}` after its graph break at line {original[1]}"
    return f"recompiled here: `{name}`"


def cause_message(c: CauseFinding) -> str:
    n = c.recompiles
    frames = len(c.sites)
    where = f" in {frames} frame{'s' if frames != 1 else ''}" if frames else ""
    return (
        f"Recompiled {n}×{where} from one cause: {c.title}\n"
        f"Fix: `{c.code}` {c.why} — {c.effect} (the quick fix {'makes the change' if c.replaces else 'inserts it'})"
    )


def failure_message(f: FailureFinding) -> str:
    reason = " ".join(f.fail_reason.split())
    if len(reason) > 300:
        reason = reason[:299] + "…"
    return f"Compile failure in `{f.name}` ({f.fail_type}): {reason}" if reason else f"Compile failure in `{f.name}` ({f.fail_type})"


def _loc_range(loc: Loc) -> types.Range:
    line = max(0, loc.line - 1)
    start = loc.col if loc.col is not None else 0
    end = loc.end_col if loc.end_col is not None and loc.end_col >= start else start
    return types.Range(types.Position(line, start), types.Position(line, end))


NN_MODULES = "/torch/nn/modules/"


@dataclass(frozen=True)
class StackEntry:
    """One line of a user stack as shown: a frame, or a run of frames inside
    torch/nn/modules (``Module.__call__``'s machinery, 2 frames per module call) collapsed."""

    loc: Loc  # the frame (the first of a collapsed run)
    depth: str  # "3" or "3–6"
    text: str
    collapsed: bool = False


def collapse_stack(stack: list[Loc]) -> list[StackEntry]:
    """From the outermost user frame on (``locations.from_user``: a notebook cell's stack starts in
    the kernel's event loop), runs of torch/nn/modules frames collapsed."""
    stack = from_user(stack)
    out: list[StackEntry] = []
    i = 0
    while i < len(stack):
        frame = stack[i]
        if NN_MODULES in frame.file.replace("\\", "/"):
            j = i
            while j < len(stack) and NN_MODULES in stack[j].file.replace("\\", "/"):
                j += 1
            names = list(dict.fromkeys(f.name or "?" for f in stack[i:j]))
            n = j - i
            depth = f"{i + 1}–{j}" if n > 1 else str(i + 1)
            out.append(
                StackEntry(frame, depth, f"{n} frame{'s' if n != 1 else ''} inside torch/nn/modules ({', '.join(names)})", collapsed=True)
            )
            i = j
            continue
        label = frame.name or "?"
        out.append(StackEntry(frame, str(i + 1), label + (f": {frame.code}" if frame.code else "")))
        i += 1
    return out


Locate = Callable[[str, types.Range], types.Location]


def at_file(file: str, rng: types.Range) -> types.Location:
    """A recorded location as the file's own: the default ``Locate``."""
    return types.Location(path_uri(file), rng)


def _stack_info(stack: list[Loc], locate: Locate) -> list[types.DiagnosticRelatedInformation]:
    return [
        types.DiagnosticRelatedInformation(locate(e.loc.file, _loc_range(e.loc)), f"{e.depth}. {e.text}") for e in collapse_stack(stack)
    ]


def to_diagnostic(p: Placed, view: TextView, settings: Settings, locate: Locate = at_file) -> types.Diagnostic:
    """``locate``: where the editor shows a recorded location, for the related locations (a
    notebook cell's file, ``/tmp/ipykernel_…``, never exists: it is the open cell holding
    it, or its lines in a notebook's virtual document)."""
    rng = view.range(p.span)
    if p.kind == "break":
        b = p.finding
        assert isinstance(b, BreakFinding)
        e = b.event
        return types.Diagnostic(
            range=rng,
            message=break_message(b),
            severity=settings.graph_break_severity,
            code=e.gb_id or e.gb_type,
            code_description=types.CodeDescription(href=href) if (href := link_url(e.url)) else None,
            source=SOURCE,
            related_information=_stack_info(e.user_stack, locate) or None,
            data={"kind": "break", "key": b.key},
        )
    if p.kind == "recompile":
        fn = p.finding
        assert isinstance(fn, FunctionFindings)
        related = None
        if fn.call_site is not None:
            related = [
                types.DiagnosticRelatedInformation(
                    locate(fn.call_site.file, _loc_range(fn.call_site)), "called from here when it recompiled"
                )
            ]
        return types.Diagnostic(
            range=rng,
            message=recompile_message(fn),
            severity=types.DiagnosticSeverity.Warning if fn.limit_reason is not None else types.DiagnosticSeverity.Information,
            code=DIAGNOSTIC_CODES["recompileLimit"] if fn.limit_reason is not None else DIAGNOSTIC_CODES["recompile"],
            source=SOURCE,
            related_information=related,
            data={"kind": "recompile", "name": fn.name},
        )
    if p.kind == "cause":
        c = p.finding
        assert isinstance(c, CauseFinding)
        related = [types.DiagnosticRelatedInformation(locate(loc.file, _loc_range(loc)), _site_label(loc)) for loc in c.sites]
        return types.Diagnostic(
            range=rng,
            message=cause_message(c),
            severity=types.DiagnosticSeverity.Information,
            code=DIAGNOSTIC_CODES["recompileCause"],
            source=SOURCE,
            related_information=related or None,
            data={"kind": "cause", "title": c.title},
        )
    f = p.finding
    assert isinstance(f, FailureFinding)
    return types.Diagnostic(
        range=rng,
        message=failure_message(f),
        severity=types.DiagnosticSeverity.Error,
        code=f.fail_type,
        source=SOURCE,
        data={"kind": "failure", "cid": f.cid},
    )


def build(placed: list[Placed], view: TextView, settings: Settings, locate: Locate = at_file) -> list[types.Diagnostic]:
    return [to_diagnostic(p, view, settings, locate) for p in placed]
