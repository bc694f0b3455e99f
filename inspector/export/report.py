"""A bundle's human-readable pages: ``summary.md`` and a single-file, offline
``report.html`` — root causes (with their fix), graph breaks (with torch's hints),
recompiles (with suggestions), kernels, compile time by stage and the compiles, linking
into the bundle's files. ``build`` gathers the rows; the HTML is the Jinja2 template
``templates/report.html.j2`` (autoescape on: every value from a run is text).

The HTML has inline CSS and one small inline script (the table of contents); a
Content-Security-Policy forbids every network load, so opening it never fetches anything.
Links to torch's graph-break pages are plain anchors, followed only when clicked.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from dyn_inspect.engine.schema import Loc
from dyn_inspect.inspector.analysis.messages import headline
from dyn_inspect.inspector.export.redact import REDACTED
from dyn_inspect.inspector.links import link_url
from dyn_inspect.inspector.locations import def_line, file_line
from dyn_inspect.inspector.model import RunModel

SECTIONS = (
    ("overview", "Overview"),
    ("failures", "Compile failures"),  # only when a compile failed
    ("root-causes", "Root causes"),  # only when there are findings
    ("graph-breaks", "Graph breaks"),
    ("recompiles", "Recompiles"),
    ("shapes", "Dynamic shapes"),  # only when a compile made a dim dynamic or specialized one
    ("kernels", "Kernels"),
    ("compile-time", "Compile time by stage"),
    ("compiles", "Compiles"),
    ("skipped", "Skipped or incomplete"),
)


@dataclass
class BreakRow:
    where: str  # the user's line (the nearest user frame for a break inside a library)
    code: str | None
    gb_type: str
    gb_id: str | None
    url: str | None
    count: int
    reason: str
    explanation: str
    hints: list[str]
    compile_ids: list[str]
    torch_where: str | None = None  # torch's own location when it is not the user's line
    headline: str = ""  # what the user wrote, said first ("`print(...)` can't be traced")
    context: str = ""  # torch's debug context (GB0112: the exception the call raised)


@dataclass
class FailureRow:
    """A failed compile (fullgraph=True, a backend exception) at its user line."""

    where: str
    code: str | None
    fail_type: str
    function: str
    headline: str
    reason: str
    count: int
    compile_ids: list[str]


@dataclass
class CauseRow:
    """One root cause (analysis/causes.py): what it is, where it shows, its fix if known."""

    kind: str  # "recompile" | "graph_break"
    title: str
    detail: str
    sites: list[str]
    fix_where: str | None = None  # the line the fix goes after
    fix_code: str | None = None
    fix_why: str | None = None
    no_fix: str | None = None  # Cause.no_fix: the sentence every face shows without a fix
    step_cost: str | None = None  # BreakCost.text: a break's time per profiled step


@dataclass
class ShapeRow:
    """One compile's dynamic shapes (analysis/shapes.py): the dims it made dynamic and the
    ones a line specialized back to a constant, each sentence with its user line."""

    compile_id: str
    function: str
    automatic: bool  # torch made the dims that changed dynamic after a recompile
    dynamic: list[str]  # "x.shape[0] (s77), created at train.py:26"
    specialized: list[str]  # "dim 1 of `x` became static (= 3) because of `if …` at m.py:17"


@dataclass
class RecompileRow:
    function: str
    where: str
    compile_id: str
    reasons: list[str]
    suggestions: list[tuple[str, str | None]]  # (text, code)


@dataclass
class KernelRow:
    name: str
    backend: str
    compile_id: str
    backward: bool
    fused_ops: list[str]
    vectorized: str | None
    lines: list[str]
    path: str | None
    profile_us: float | None
    compiled: str | None = None  # Triton's compile metadata in one line (kernel_compile.compile_headline)


@dataclass
class CompileRow:
    compile_id: str
    function: str
    where: str
    outcome: str
    graphs: int
    kernels: int
    guards: int | None
    time_s: float
    dir: str
    repro: list[str]


@dataclass
class ReportData:
    run_id: str
    command: list[str]
    status: str
    exit_code: int | None
    duration_s: float | None
    environment: dict[str, Any]
    redacted: bool
    selection: str
    breaks: list[BreakRow] = field(default_factory=list)
    failures: list[FailureRow] = field(default_factory=list)
    causes: list[CauseRow] = field(default_factory=list)
    recompiles: list[RecompileRow] = field(default_factory=list)
    shapes: list[ShapeRow] = field(default_factory=list)
    limits: list[str] = field(default_factory=list)
    kernels: list[KernelRow] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=dict)
    total_compile_s: float = 0.0
    compiles: list[CompileRow] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _def_loc(file: str | None, first_line: int | None) -> Loc | None:
    """Where a compiled function is: its ``def`` line (torch reports the decorator's)."""
    if not file:
        return None
    return Loc(file=file, line=def_line(file, first_line or 0))


def _suggestions(reason: str) -> list[tuple[str, str | None]]:
    try:
        from dyn_inspect.inspector.analysis.suggestions import suggest_for
    except ImportError:  # the analysis package is optional to the export
        return []
    try:
        s = suggest_for(reason)
    except Exception:  # noqa: BLE001 - an odd reason must not stop the export
        return []
    return [(s.text, s.code)]


def _timeline_suggestions(model: RunModel) -> dict[int, tuple[str, str | None]]:
    """id(compile) -> its recompile timeline's suggestion (which knows the frame)."""
    try:
        from dyn_inspect.inspector.analysis.recompiles import frames_with_recompiles, recompile_timeline
    except ImportError:
        return {}
    out: dict[int, tuple[str, str | None]] = {}
    for frame in frames_with_recompiles(model):
        try:
            entries = recompile_timeline(model, frame)
        except Exception:  # noqa: BLE001 - an odd reason must not stop the export
            continue
        for e in entries:
            if e.suggestion is not None:
                out[id(e.compile)] = (e.suggestion.text, e.suggestion.code)
    return out


def _cause_rows(model: RunModel, where: Callable[[Loc | None], str], scrub: Callable[[str], str]) -> list[CauseRow]:
    try:
        from dyn_inspect.inspector.analysis.causes import causes
    except ImportError:  # the analysis package is optional to the export
        return []
    try:
        found = causes(model)
    except Exception:  # noqa: BLE001 - an odd finding must not stop the export
        return []
    rows = []
    for c in found:
        fix = c.fix
        rows.append(
            CauseRow(
                c.kind,
                scrub(c.title),
                scrub(c.detail),
                list(dict.fromkeys(where(s) for s in c.sites)),
                where(Loc(fix.file, fix.after_line)) if fix else None,
                scrub(fix.code) if fix else None,
                scrub(fix.why) if fix else None,
                c.no_fix,
                c.run_time,
            )
        )
    return rows


def _shape_rows(model: RunModel, where: Callable[[Loc | None], str], scrub: Callable[[str], str]) -> list[ShapeRow]:
    from dyn_inspect.inspector.analysis.shapes import compile_shapes

    rows = []
    for cs in compile_shapes(model):
        dynamic = [scrub(f"{s.name} ({s.symbol})" + (f", created at {where(s.loc)}" if s.loc else "")) for s in cs.dynamic]
        specialized = [scrub(sp.describe(where(sp.loc) if sp.loc else None)) for sp in cs.specializations]
        if dynamic or specialized:
            rows.append(ShapeRow(cs.compile.cid, cs.function, cs.automatic_dynamic, dynamic, specialized))
    return rows


def build(
    model: RunModel,
    *,
    run_id: str,
    cwd: str | None,
    environment: dict[str, Any],
    redacted: bool,
    selection: str,
    compile_dirs: dict[tuple[str, str], str],
    kernel_paths: dict[tuple[str, str, str, bool], str],
    repro_paths: dict[tuple[str, str], list[str]],
    skipped: list[str],
    scrub: Callable[[str], str],
) -> ReportData:
    """``scrub(text)`` redacts free text (identity when not redacting)."""

    def where(loc: Loc | None) -> str:
        return file_line(loc.file, loc.line, cwd) if loc else "?"

    start = model.run_start
    data = ReportData(
        run_id=run_id,
        command=list(start.command) if start else [],
        status=model.status,
        exit_code=model.exit_code,
        duration_s=model.run_end.duration_s if model.run_end else None,
        environment=environment,
        redacted=redacted,
        selection=selection,
        skipped=skipped,
    )
    from dyn_inspect.inspector.analysis.breaks import break_sites
    from dyn_inspect.inspector.analysis.failures import failure_sites, line_text
    from dyn_inspect.inspector.analysis.kernel_compile import compile_headline, compile_output

    for site in break_sites(model):
        b, user = site.first, site.user_frame or site.loc
        code = user.code if user.code and user.code != REDACTED else None
        data.breaks.append(
            BreakRow(
                where(user),
                code,
                b.gb_type,
                b.gb_id,
                link_url(b.url),  # only an https url becomes a link in the report (inspector/links.py)
                site.count,
                b.reason,
                b.explanation,
                list(b.hints),
                site.compile_ids,
                where(b.loc) if user != b.loc else None,
                headline(b),
                site.context,
            )
        )
    for fsite in failure_sites(model):
        f = fsite.first
        # The line's text is read from the file (torch records only file:line): never when redacting.
        code = None if redacted else line_text(f.user_loc)
        data.failures.append(
            FailureRow(where(f.user_loc), code, f.fail_type, f.function, scrub(f.headline), scrub(f.reason), fsite.count, fsite.compile_ids)
        )
    data.causes = _cause_rows(model, where, scrub)
    data.shapes = _shape_rows(model, where, scrub)
    timeline_suggestions = _timeline_suggestions(model)
    for r in model.recompiles:
        cap = r.compile.capture
        fn = cap.co_name if cap and cap.co_name else "?"
        loc = _def_loc(cap.co_filename, cap.co_firstlineno) if cap else None
        # The frame-aware suggestion (what `recompiles` and the TUI say), else one per reason.
        found = timeline_suggestions.get(id(r.compile))
        pairs = [found] if found is not None else [p for reason in r.event.reasons for p in _suggestions(reason)]
        sugg = [(scrub(t), scrub(c) if c else None) for t, c in pairs]
        data.recompiles.append(RecompileRow(fn, where(loc), r.compile.cid, list(r.event.reasons), sugg))
    for _log, lim in model.recompile_limits:
        loc = _def_loc(lim.co_filename, lim.co_firstlineno)
        data.limits.append(f"{lim.co_name or '?'} ({where(loc)}): {lim.reason} — the frame runs eagerly from then on")
    for k in model.kernels:
        ev = k.event
        compiled = compile_output(k)
        data.kernels.append(
            KernelRow(
                ev.name,
                ev.backend,
                k.compile.cid,
                ev.backward,
                list(ev.fused_ops),
                ev.vectorized,
                list(dict.fromkeys(where(loc) for loc in k.lines)),
                kernel_paths.get((k.compile.log, k.compile.cid, ev.name, ev.backward)),
                k.profile.total_us / max(k.profile.calls, 1) if k.profile else None,
                compile_headline(compiled) if compiled is not None else None,
            )
        )
    data.stages = model.compile_time_by_stage()
    data.total_compile_s = model.total_compile_time()
    for key, c in model.compiles.items():
        cap = c.capture
        loc = _def_loc(cap.co_filename, cap.co_firstlineno) if cap else None
        data.compiles.append(
            CompileRow(
                c.cid,
                (cap.co_name or "?") if cap else "?",
                where(loc),
                c.outcome,
                len(c.graphs),
                len(c.kernels),
                c.guards.count if c.guards else None,
                c.compile_time_s,
                compile_dirs.get(key, ""),
                repro_paths.get(key, []),
            )
        )
    return data


# -- Markdown ----------------------------------------------------------------------------


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_markdown(d: ReportData) -> str:
    env = d.environment
    out = [
        f"# dyn-inspect bug report — run {d.run_id}",
        "",
        f"- command: `{' '.join(d.command)}`" if d.command else "- command: (unknown)",
        f"- status: {d.status}"
        + (f", exit {d.exit_code}" if d.exit_code is not None else ", no exit status")
        + (f", {d.duration_s:.1f}s" if d.duration_s is not None else ""),
        f"- python {env.get('python')}, torch {env.get('torch')}, triton {env.get('triton') or '-'}, "
        f"CUDA {env.get('cuda') or '-'} (driver {env.get('cuda_driver') or '-'})",
        f"- GPUs: {', '.join(env.get('gpus') or []) or 'none'}; CPU: {env.get('cpu') or '?'} ({env.get('cpu_vector_isa') or '?'}); "
        f"OS: {env.get('os') or '?'}",
        f"- contents: {d.selection}; source code {'redacted' if d.redacted else 'included (graph comments, guards, tracebacks)'}",
        "- files: see `index.md`; open `report.html` in a browser; `torch_trace/` works with `tlparse`",
        "",
    ]
    if d.failures:
        out += [f"## Compile failures ({sum(f.count for f in d.failures)})", ""]
        for f in d.failures:
            out.append(f"### `{f.where}` — {_md(f.function)}: {_md(f.fail_type)}: {_md(f.headline)} ×{f.count}")
            out.append("")
            if f.code:
                out += ["```python", f.code, "```", ""]
            out += ["```", f.reason, "```", "", f"- compile ids: {', '.join(f.compile_ids)}", ""]
    if d.causes:
        out += [f"## Root causes ({len(d.causes)})", ""]
        for cause in d.causes:
            out += [f"### {_md(cause.title)}", "", _md(cause.detail), ""]
            if cause.sites:
                out.append("- shows at: " + ", ".join(f"`{s}`" for s in cause.sites))
            if cause.step_cost:
                out.append(f"- at run time: {_md(cause.step_cost)}")
            if cause.fix_code:
                out += [f"- fix ({_md(cause.fix_why or '')}), after `{cause.fix_where}`:", "", "```python", cause.fix_code, "```"]
            elif cause.no_fix:
                out.append(f"- {cause.no_fix}")
            out.append("")
    out += [
        f"## Graph breaks ({len(d.breaks)} unique, {sum(b.count for b in d.breaks)} total)",
        "",
    ]
    for b in d.breaks:
        gb = f" [{b.gb_id}]({b.url})" if b.gb_id and b.url else (f" {b.gb_id}" if b.gb_id else "")
        out.append(f"### `{b.where}` — {_md(b.gb_type)}{gb} ×{b.count}")
        out.append("")
        if b.code:
            out += ["```python", b.code, "```", ""]
        if b.torch_where:
            out.append(f"- torch reports it at `{b.torch_where}`")
        if b.reason:
            out.append(f"- reason: {_md(b.reason)}")
        if b.explanation:
            out.append(f"- explanation: {_md(b.explanation)}")
        if b.context:
            out.append(f"- torch's debug context: {_md(b.context)}")
        for h in b.hints:
            out.append(f"- suggestion: {_md(h)}")
        out.append(f"- compile ids: {', '.join(b.compile_ids)}")
        out.append("")
    out += [f"## Recompiles ({len(d.recompiles)})", ""]
    for r in d.recompiles:
        out.append(f"### {r.function} (`{r.where}`), compile {r.compile_id}")
        out.append("")
        for reason in r.reasons:
            out.append(f"- reason: `{_md(reason)}`")
        for text, code in r.suggestions:
            out.append(f"- suggestion: {_md(text)}" + (f" — `{_md(code)}`" if code else ""))
        out.append("")
    for lim in d.limits:
        out.append(f"- recompile limit: {_md(lim)}")
    out += [
        "",
        f"## Kernels ({len(d.kernels)})",
        "",
        "| kernel | backend | compile | pass | fused ATen ops | vectorized | source lines | file |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for k in d.kernels:
        out.append(
            f"| `{k.name}` | {k.backend} | {k.compile_id} | {'backward' if k.backward else 'forward'} | "
            f"{_md(', '.join(k.fused_ops)) or '-'} | {k.vectorized or '-'} | {_md(', '.join(k.lines)) or '-'} | "
            f"{f'`{k.path}`' if k.path else '-'} |"
        )
    out += ["", f"## Compile time by stage ({d.total_compile_s:.2f}s in all)", "", "| stage | seconds |", "|---|---|"]
    for stage, secs in d.stages.items():
        out.append(f"| {stage} | {secs:.2f} |")
    out += [
        "",
        f"## Compiles ({len(d.compiles)})",
        "",
        "| compile | function | where | outcome | graphs | kernels | guards | time (s) | files |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in d.compiles:
        out.append(
            f"| {c.compile_id} | `{c.function}` | `{c.where}` | {c.outcome} | {c.graphs} | {c.kernels} | "
            f"{c.guards if c.guards is not None else '-'} | {c.time_s:.2f} | `{c.dir}` |"
        )
    if d.skipped:
        out += ["", f"## Skipped or incomplete ({len(d.skipped)})", ""]
        out += [f"- {_md(s)}" for s in d.skipped]
    return "\n".join(out) + "\n"


# -- HTML ----------------------------------------------------------------------------------

# templates/ ships as package data (pyproject [tool.setuptools.package-data]).
_TEMPLATES = Path(__file__).parent / "templates"


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        autoescape=True,  # every value is text from a run: escaped, never markup
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def report_html(d: ReportData) -> str:
    env = d.environment
    status = d.status + (f", exit {d.exit_code}" if d.exit_code is not None else "")
    overview = [
        ("command", " ".join(d.command) or "?"),
        ("status", status),
        ("duration", f"{d.duration_s:.1f}s" if d.duration_s is not None else "-"),
        ("python", env.get("python")),
        ("torch", env.get("torch")),
        ("triton", env.get("triton") or "-"),
        ("CUDA / driver", f"{env.get('cuda') or '-'} / {env.get('cuda_driver') or '-'}"),
        ("GPUs", ", ".join(env.get("gpus") or []) or "none"),
        ("CPU (vector ISA)", f"{env.get('cpu') or '?'} ({env.get('cpu_vector_isa') or '?'})"),
        ("OS", env.get("os")),
        ("contents", d.selection),
        ("source code", "redacted (--redact-source)" if d.redacted else "included: graph comments, guards and tracebacks quote the model"),
        (
            "summary",
            f"{sum(f.count for f in d.failures)} compile failures, "
            f"{len(d.breaks)} graph break sites, {len(d.recompiles)} recompiles, {len(d.kernels)} kernels, "
            f"{len(d.compiles)} compiles, {d.total_compile_s:.2f}s compiling",
        ),
    ]
    top = max(d.stages.values(), default=0.0) or 1.0
    return _environment().get_template("report.html.j2").render(d=d, status=status, overview=overview, top=top)
