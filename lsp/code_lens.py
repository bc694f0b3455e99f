"""Code lenses above each compiled workspace function:
``compiled N× · B graph breaks · K kernels · T s compile``; the command opens its details
(``dynInspect.showDetails`` with the file and the 1-based ``def`` line)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from lsprotocol import types

from dyn_inspect.inspector.links import md_code, md_text
from dyn_inspect.inspector.outputs.lsp import SERVER_COMMANDS
from dyn_inspect.inspector.reports.findings import FileFindings, FunctionFindings
from dyn_inspect.lsp.documents import TextView
from dyn_inspect.lsp.placement import place_function
from dyn_inspect.lsp.source_lines import Span, code_bounds

SHOW_DETAILS = SERVER_COMMANDS["showDetails"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def lens_title(fn: FunctionFindings) -> str:
    return (
        f"compiled {fn.compiles}× · {_plural(len(fn.break_keys), 'graph break')} · "
        f"{_plural(fn.kernels, 'kernel')} · {fn.compile_time_s:.2f} s compile"
    )


def lenses(view: TextView, ff: FileFindings | None) -> list[types.CodeLens]:
    if ff is None:
        return []
    out: list[types.CodeLens] = []
    for fn in ff.functions:
        if fn.compiles == 0:
            continue  # a resume part whose function was never compiled on its own
        line = place_function(view.lines, fn)
        if line is None:
            continue
        start, end = code_bounds(view.lines[line - 1])
        out.append(
            types.CodeLens(
                range=view.range(Span(line - 1, start, end)),
                command=types.Command(title=lens_title(fn), command=SHOW_DETAILS, arguments=[view.path, line]),
            )
        )
    return out


def details(fn: FunctionFindings, line: int) -> dict[str, Any]:
    """What ``dynInspect.showDetails`` returns for one function (JSON-able)."""
    return {
        "function": fn.name,
        "file": fn.file,
        "line": line,
        "recorded_line": fn.def_line,
        "title": lens_title(fn),
        "compiles": fn.compiles,
        "part_compiles": fn.part_compiles,
        "compile_ids": list(fn.compile_ids),
        "outcomes": list(fn.outcomes),
        "graph_breaks": sorted(fn.break_keys),
        "kernels": fn.kernels,
        "compile_time_s": round(fn.compile_time_s, 4),
        "recompiles": [
            {
                "compile_id": s.cid,
                "part": s.part,
                "part_line": s.part_line,
                "reasons": list(s.reasons),
                "suggestion": s.suggestion,
                "code": s.code,
            }
            for s in sorted(fn.steps + fn.explained, key=lambda s: (s.part is not None, s.part_line or 0, s.cid))
        ],
        "recompile_limit": fn.limit_reason,
    }


def details_markdown(d: dict[str, Any]) -> str:
    """``details()`` as Markdown, rendered once here for every editor: it is the
    ``markdown`` of the ``dynInspect.showDetails`` answer, which the VS Code extension
    writes to a generated file and opens in the built-in Markdown preview (an output
    channel where the preview fails; ``vscode-extension/src/common/details.ts``), and the
    text of the read-only document the server opens in editors that show one (Neovim,
    Helix: ``lsp.details_file``). Every string from the run is escaped or in a code span
    (``md_text``, ``md_code``), as in the hover."""
    name = str(d.get("function", "?"))
    where = f"{d.get('file', '?')}:{d.get('line', '?')}"
    lines = [f"# {md_code(name)} — {md_code(where)}", "", md_text(str(d.get("title", ""))), ""]
    if d.get("recorded_line") not in (None, d.get("line")):
        lines.append(f"- Line in the run: {d['recorded_line']} (the file changed since)")
    if d.get("run"):
        lines.append(f"- Run: {md_code(str(d['run']))}")
    compiles, parts = d.get("compiles", 0), d.get("part_compiles", 0)
    lines.append(
        f"- Compiles: {compiles} of the function, {parts} of the code after its graph breaks" if parts else f"- Compiles: {compiles}"
    )
    if d.get("compile_ids"):
        lines.append(f"- Compile ids: {md_text(', '.join(d['compile_ids']))}")
    if d.get("outcomes"):
        counted = Counter(str(o) for o in d["outcomes"])  # first-seen order
        lines.append(f"- Outcomes: {md_text(', '.join(f'{o} ×{n}' for o, n in counted.items()))}")
    breaks = len(d.get("graph_breaks", []))
    lines.append(f"- Graph breaks: {breaks}" + (" unique (hover the marked lines for the reasons)" if breaks else ""))
    lines.append(f"- Kernels: {d.get('kernels', 0)}")
    lines.append(f"- Compile time: {d.get('compile_time_s', 0.0):.2f} s")
    steps = d.get("recompiles", [])
    if steps:
        lines += ["", f"## {_plural(len(steps), 'recompile')}"]
        for s in steps:
            part = s.get("part")
            what = f"{md_code(str(part))} (the code after the graph break at line {s['part_line']})" if part else md_code(name)
            lines += ["", f"### {md_text(str(s['compile_id']))} — {what}", ""]
            lines += [f"- Guard failed: {md_code(str(r))}" for r in s.get("reasons", [])]
            if s.get("suggestion"):
                lines.append(f"- Suggestion: {md_text(str(s['suggestion']))}")
            if s.get("code"):
                lines.append(f"- Try: {md_code(str(s['code']))}")
    if d.get("recompile_limit"):
        lines += ["", f"**Recompile limit reached:** {md_text(str(d['recompile_limit']))}"]
    return "\n".join(lines) + "\n"
