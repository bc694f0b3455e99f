"""Hover on a marked line: the whole story in Markdown — full reason, explanation, hints and
link for a graph break; compiles, failed guards and suggestions for a recompile; the failure
for a compile error; and the kernels this line was fused into (name, backend, fused ops and,
for Triton, the compile headline: target, config, registers, spills, shared memory)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from lsprotocol import types

from dyn_inspect.inspector.links import link_url, md_code, md_fence, md_text
from dyn_inspect.inspector.reports.findings import BreakFinding, CauseFinding, FailureFinding, FileFindings, FunctionFindings, KernelRef
from dyn_inspect.lsp.diagnostics import collapse_stack, short_location
from dyn_inspect.lsp.documents import TextView
from dyn_inspect.lsp.placement import Placed, at_line
from dyn_inspect.lsp.source_lines import Span, code_bounds, relocate

T = TypeVar("T")

MAX_KERNELS = 12


# Every string from the run goes through md_text (prose), md_code (inline) or md_fence
# (blocks): a crafted reason made a live image and a javascript: link in the hover.
_code = md_code


def _break_md(b: BreakFinding) -> list[str]:
    e = b.event
    title = f"### Graph break: {md_text(e.gb_type)}"
    if e.gb_id:
        link = link_url(e.url)
        title += f" ({f'[{md_text(e.gb_id)}]({link})' if link else md_text(e.gb_id)})"
    out = [title, ""]
    if b.origin is not None:
        out += [f"Inside {_code(short_location(b.origin))} — this line leads into it.", ""]
    if b.helper is not None:
        out += [f"In the helper {_code(b.helper)}, inlined into a compiled function.", ""]
    if e.reason and e.reason != e.gb_type:
        out += [f"**Reason:** {md_text(e.reason)}", ""]
    if e.explanation:
        out += [f"**Explanation:** {md_text(e.explanation)}", ""]
    if e.context:
        # torch's own words, verbatim (a repr like <built-in method sin ...> is not HTML)
        out += ["**torch's debug context:**", "", *md_fence(e.context, "text"), ""]
    if e.hints:
        out += ["**Hints:**"] + [f"- {md_text(h)}" for h in e.hints] + [""]
    out += [f"Hit {b.count}× (compile {', '.join(b.compile_ids)})."]
    if b.step_cost is not None:
        out += ["", f"**At run time:** {md_text(b.step_cost)}"]
    if len(e.user_stack) > 1:
        out += ["", "**User stack** (outermost first):"]
        for entry in collapse_stack(e.user_stack):
            f = entry.loc
            where = _code(f"{Path(f.file).name}:{f.line}")
            said = md_text(entry.text) if entry.collapsed else _code(f.name or "?") + (f": {_code(f.code)}" if f.code else "")
            out.append(f"- {entry.depth}. {where} {said}")
    if link_url(e.url):
        out += ["", f"[What this graph break means]({e.url})"]
    elif e.url:  # not an https url: shown, never a link
        out += ["", f"What this graph break means: {_code(e.url)}"]
    return out


def _recompile_md(fn: FunctionFindings) -> list[str]:
    out = [
        f"### Recompiles of {_code(fn.name)}",
        "",
        f"Compiled {fn.compiles}×"
        + (f", plus {fn.part_compiles} compiles of its code after graph breaks" if fn.part_compiles else "")
        + ".",
    ]
    if fn.limit_reason is not None:
        out += ["", "**Recompile limit reached: the function runs eagerly (uncompiled) from then on.**"]
    if fn.steps:
        out += ["", "**Guards that failed:**"]
        for s in fn.steps:
            where = f" (after the break at line {s.part_line})" if s.part is not None else ""
            out.append(f"- {_code(s.cid)}{where}: " + "; ".join(_code(r) for r in s.reasons))
    suggestions: list[tuple[str, str | None]] = []
    if fn.limit_text:
        suggestions.append((fn.limit_text, None))
    # The function's own recompiles say what to change at its call; its resume parts
    # recompile on locals and stack values as a consequence, so theirs only when it has none.
    own = [s for s in fn.steps if s.part is None]
    for s in own or fn.steps:
        if s.suggestion and (s.suggestion, s.code) not in suggestions:
            suggestions.append((s.suggestion, s.code))
    if suggestions:
        out += ["", "**Suggestions:**"]
        for text, code in suggestions[:4]:
            block = "\n".join("  " + line for line in md_fence(code, "python")) if code else ""
            out.append(f"- {md_text(text)}" + (f"\n\n{block}" if code else ""))
    return out


def _failure_md(f: FailureFinding) -> list[str]:
    return [
        f"### Compile failure in {_code(f.name)} ({md_text(f.fail_type)})",
        "",
        f"Compile {_code(f.cid)} failed:",
        "",
        *md_fence(f.fail_reason.strip() or "(no message)"),
    ]


def _kernels_md(kernels: Sequence[KernelRef]) -> list[str]:
    out = ["**Kernels this line was fused into:**"]
    for k in kernels[:MAX_KERNELS]:
        ops = md_text(", ".join(k.fused_ops)) if k.fused_ops else "—"
        bwd = " (backward)" if k.backward else ""
        more = f" (+{k.compiles - len(k.compile_ids)} more)" if k.compiles > len(k.compile_ids) else ""
        compiled = ""
        if k.compiled:
            others = f" (+{len(k.compiled) - 1} more, from its other compiles)" if len(k.compiled) > 1 else ""
            compiled = f"; compiled: {_code(k.compiled[0])}{others}"
        out.append(
            f"- {_code(k.name)} — {md_text(k.backend)}{bwd}; fused ops: {ops}; compile {md_text(', '.join(k.compile_ids))}{more}{compiled}"
        )
    if len(kernels) > MAX_KERNELS:
        out.append(f"- … and {len(kernels) - MAX_KERNELS} more")
    return out


def _now_at(by_line: Mapping[int, T], codes: Mapping[int, str | None], lines: Sequence[str], line1: int) -> Iterator[T]:
    """The values of ``by_line`` (by recorded line) whose recorded line is now ``line1``, the
    line found again by its recorded code (``codes``)."""
    return (value for recorded, value in by_line.items() if relocate(lines, recorded, codes.get(recorded)) == line1)


def profile_at(ff: FileFindings | None, lines: Sequence[str], line1: int) -> str | None:
    """The profiled time of the recorded line that is now ``line1`` (None when not profiled)."""
    if ff is None:
        return None
    return next(_now_at(ff.profile_by_line, ff.kernel_line_code, lines, line1), None)


def kernels_at(ff: FileFindings | None, lines: Sequence[str], line1: int) -> list[KernelRef]:
    """Kernels whose provenance names the recorded line that is now ``line1``."""
    if ff is None:
        return []
    return [k for kernels in _now_at(ff.kernels_by_line, ff.kernel_line_code, lines, line1) for k in kernels]


def shapes_at(ff: FileFindings | None, lines: Sequence[str], line1: int) -> list[str]:
    """Specializations (dynamic shapes) caused by the recorded line that is now ``line1``."""
    if ff is None:
        return []
    return [text for texts in _now_at(ff.shapes_by_line, ff.shape_line_code, lines, line1) for text in texts]


def _cause_md(c: CauseFinding) -> list[str]:
    out = [f"**Root cause** — {c.title}", "", f"Fix: `{c.code}` {c.why} (one graph for every size).", "", "Recompiled here:"]
    out += [f"- `{loc.name}` ({Path(loc.file).name}:{loc.line})" for loc in c.sites]
    if c.run_time is not None:
        out += ["", f"**At run time:** {md_text(c.run_time)}"]
    return out


def hover(view: TextView, placed: list[Placed], ff: FileFindings | None, position: types.Position) -> types.Hover | None:
    line0, _ = view.char_at(position)
    here = at_line(placed, line0)
    shapes = shapes_at(ff, view.lines, line0 + 1)
    if not here and not shapes:
        return None  # only marked lines and specializing lines answer (kernels alone are not a finding)
    parts: list[list[str]] = []
    for p in here:
        if p.kind == "break":
            assert isinstance(p.finding, BreakFinding)
            parts.append(_break_md(p.finding))
        elif p.kind == "recompile":
            assert isinstance(p.finding, FunctionFindings)
            parts.append(_recompile_md(p.finding))
        elif p.kind == "cause":
            assert isinstance(p.finding, CauseFinding)
            parts.append(_cause_md(p.finding))
        else:
            assert isinstance(p.finding, FailureFinding)
            parts.append(_failure_md(p.finding))
    if shapes:
        parts.append(["**Dynamic shapes:** this line specialized a dim"] + [f"- {text}" for text in shapes])
    kernels = kernels_at(ff, view.lines, line0 + 1)
    if kernels:
        parts.append(_kernels_md(kernels))
    profile = profile_at(ff, view.lines, line0 + 1)
    if profile:
        parts.append([f"**Steady state** (`--profile-kernels`): {profile}"])
    text = "\n\n---\n\n".join("\n".join(p) for p in parts)
    span = here[0].span if here else Span(line0, *code_bounds(view.lines[line0]))
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=view.range(span),
    )
