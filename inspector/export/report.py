"""A bundle's human-readable pages: ``summary.md`` and a single-file, offline
``report.html`` — root causes (with their fix), graph breaks (with torch's hints),
recompiles (with suggestions), kernels, compile time by stage and the compiles, linking
into the bundle's files. ``build`` lays out the report layer's answers (``inspector/reports/``:
the same breaks, failures, causes, shapes, recompile suggestions and kernels ``summary``,
``causes``, ``shapes``, ``recompiles`` and ``kernels`` print) as rows, with the bundle's
paths and the run's cwd; the HTML is the Jinja2 template ``templates/report.html.j2``
(autoescape on: every value from a run is text).

The HTML has inline CSS and one small inline script (the table of contents); a
Content-Security-Policy forbids every network load, so opening it never fetches anything.
Links to torch's graph-break pages are plain anchors, followed only when clicked.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import jinja2

from dyn_inspect.engine.schema import Loc
from dyn_inspect.inspector.export.redact import REDACTED
from dyn_inspect.inspector.links import link_url, md_code, md_fence, md_text
from dyn_inspect.inspector.locations import def_line, file_line
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.outputs import SourceLoc
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports.breaks import run_breaks
from dyn_inspect.inspector.reports.causes import run_causes
from dyn_inspect.inspector.reports.cost import model_cost
from dyn_inspect.inspector.reports.failures import run_failures
from dyn_inspect.inspector.reports.kernels import run_kernels
from dyn_inspect.inspector.reports.recompiles import recompile_suggestions
from dyn_inspect.inspector.reports.shapes import run_shapes

T = TypeVar("T")

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
    # the compiles torch made: a row refused by the recompile limit (outcome
    # ``recompile_limit``) is listed but is a limit hit, not a compile
    compile_count: int = 0
    skipped: list[str] = field(default_factory=list)
    cost: list[str] = field(default_factory=list)  # `cost`'s sentences: compiled vs eager, the machine's noise


def _cost_lines(model: RunModel, scrub: Callable[[str], str]) -> list[str]:
    report = model_cost(model, "")
    out: list[str] = []
    for p in report.processes:
        who = f"rank {p.rank}: " if p.rank is not None and len(report.processes) > 1 else ""
        if p.ab is not None:
            out.append(f"{who}is compiling worth it: {p.ab.text}")
        elif p.ab_note:
            out.append(f"{who}no compiled-against-eager steps in this run: {p.ab_note}")
        if p.noise is not None:
            out.append(who + p.noise.text + (f" — fix: {p.noise.fix}" if p.noise.fix else ""))
        out += [f"{who}{f.text}" for f in p.figures]
    return [scrub(line) for line in out]


def _def_loc(file: str | None, first_line: int | None) -> Loc | None:
    """Where a compiled function is: its ``def`` line (torch reports the decorator's)."""
    if not file:
        return None
    return Loc(file=file, line=def_line(file, first_line or 0))


def _where(where: Callable[[Loc | None], str], loc: SourceLoc | None) -> str:
    return where(Loc(loc.file, loc.line) if loc is not None else None)


def _cause_row(c: typed.Cause, where: Callable[[Loc | None], str], scrub: Callable[[str], str]) -> CauseRow:
    fix = c.fix
    return CauseRow(
        c.kind,
        scrub(c.title),
        scrub(c.detail),
        list(dict.fromkeys(where(Loc(s.file, s.line)) for s in c.sites)),
        where(Loc(fix.file, fix.after_line)) if fix else None,
        scrub(fix.code) if fix else None,
        scrub(fix.why) if fix else None,
        c.no_fix,
        c.step_cost,
    )


def _shape_row(cs: typed.CompileShapes, where: Callable[[Loc | None], str], scrub: Callable[[str], str]) -> ShapeRow | None:
    dynamic = [
        scrub(f"{s.name} ({s.symbol})" + (f", created at {where(Loc(s.loc.file, s.loc.line))}" if s.loc else ""))
        for s in cs.symbols
        if not s.specialized
    ]
    specialized = [scrub(sp.text) for sp in cs.specializations]
    if not (dynamic or specialized):
        return None
    return ShapeRow(cs.compile_id, cs.function, cs.automatic_dynamic, dynamic, specialized)


def _guarded(answer: Callable[[], T]) -> T | None:
    """A report's answer, or None: an odd finding in a run must not stop the export."""
    try:
        return answer()
    except Exception:  # noqa: BLE001
        return None


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
    for b in run_breaks(model):
        user = b.user_loc or b.loc
        code = user.code if user is not None and user.code and user.code != REDACTED else None
        data.breaks.append(
            BreakRow(
                _where(where, user),
                code,
                b.type,
                b.gb_id,
                link_url(b.url),  # only an https url becomes a link in the report (inspector/links.py)
                b.count,
                b.reason,
                b.explanation,
                list(b.hints),
                b.compile_ids,
                _where(where, b.loc) if b.user_loc is not None and b.user_loc != b.loc else None,
                b.headline,
                b.context,
            )
        )
    for f in run_failures(model):
        # The line's text is read from the file (torch records only file:line): never when redacting.
        code = None if redacted or f.user_loc is None else f.user_loc.code
        data.failures.append(
            FailureRow(
                _where(where, f.user_loc), code, f.type, f.function or "?", scrub(f.headline), scrub(f.reason or ""), f.count, f.compile_ids
            )
        )
    data.causes = [_cause_row(c, where, scrub) for c in (_guarded(lambda: run_causes(model)) or [])]
    data.cost = _guarded(lambda: _cost_lines(model, scrub)) or []
    data.shapes = [row for cs in run_shapes(model, cwd) if (row := _shape_row(cs, where, scrub)) is not None]
    # The suggestion the frame's timeline makes (what `recompiles` and the TUI say).
    by_compile = _guarded(lambda: recompile_suggestions(model)) or {}
    for r in model.recompiles:
        cap = r.compile.capture
        fn = cap.co_name if cap and cap.co_name else "?"
        loc = _def_loc(cap.co_filename, cap.co_firstlineno) if cap else None
        found = by_compile.get((r.compile.log, r.compile.cid))
        sugg = [(scrub(found.text), scrub(found.code) if found.code else None)] if found is not None else []
        data.recompiles.append(RecompileRow(fn, where(loc), r.compile.cid, list(r.event.reasons), sugg))
    for _log, lim in model.recompile_limits:
        loc = _def_loc(lim.co_filename, lim.co_firstlineno)
        data.limits.append(f"{lim.co_name or '?'} ({where(loc)}): {lim.reason} — the frame runs eagerly from then on")
    for k in run_kernels(model):
        p = k.profile
        data.kernels.append(
            KernelRow(
                k.name,
                k.backend,
                k.compile_id,
                k.backward,
                list(k.fused_ops),
                k.vectorized,
                list(dict.fromkeys(_where(where, loc) for loc in k.source_lines)),
                kernel_paths.get((k.log, k.compile_id, k.name, k.backward)),
                p.total_us / max(p.calls, 1) if p else None,
                k.compile.headline if k.compile is not None else None,
            )
        )
    data.stages = model.compile_time_by_stage()
    data.total_compile_s = model.total_compile_time()
    data.compile_count = model.compile_count()
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


# Every string from the run is Markdown-escaped (md_text, which also escapes table pipes),
# put in a code span (md_code) or a fence no line of it can close (md_fence): a crafted
# reason made a live remote image and a javascript: link in summary.md.
_md = md_text
_c = md_code


def _cell_code(text: str) -> str:
    """Inline code in a table cell: a pipe ends the cell even inside a code span (GFM)."""
    return _c(text).replace("|", "\\|")


def summary_markdown(d: ReportData) -> str:
    env = d.environment
    out = [
        f"# dyn-inspect bug report — run {d.run_id}",
        "",
        f"- command: {_c(' '.join(d.command))}" if d.command else "- command: (unknown)",
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
            out.append(f"### {_c(f.where)} — {_md(f.function)}: {_md(f.fail_type)}: {_md(f.headline)} ×{f.count}")
            out.append("")
            if f.code:
                out += [*md_fence(f.code, "python"), ""]
            out += [*md_fence(f.reason), "", f"- compile ids: {_md(', '.join(f.compile_ids))}", ""]
    if d.causes:
        out += [f"## Root causes ({len(d.causes)})", ""]
        for cause in d.causes:
            out += [f"### {_md(cause.title)}", "", _md(cause.detail), ""]
            if cause.sites:
                out.append("- shows at: " + ", ".join(_c(s) for s in cause.sites))
            if cause.step_cost:
                out.append(f"- at run time: {_md(cause.step_cost)}")
            if cause.fix_code:
                out += [f"- fix ({_md(cause.fix_why or '')}), after {_c(cause.fix_where or '')}:", "", *md_fence(cause.fix_code, "python")]
            elif cause.no_fix:
                out.append(f"- {_md(cause.no_fix)}")
            out.append("")
    out += [
        f"## Graph breaks ({len(d.breaks)} unique, {sum(b.count for b in d.breaks)} total)",
        "",
    ]
    for b in d.breaks:
        link = link_url(b.url)
        gb = f" [{_md(b.gb_id)}]({link})" if b.gb_id and link else (f" {_md(b.gb_id)}" if b.gb_id else "")
        out.append(f"### {_c(b.where)} — {_md(b.gb_type)}{gb} ×{b.count}")
        out.append("")
        if b.code:
            out += [*md_fence(b.code, "python"), ""]
        if b.torch_where:
            out.append(f"- torch reports it at {_c(b.torch_where)}")
        if b.reason:
            out.append(f"- reason: {_md(b.reason)}")
        if b.explanation:
            out.append(f"- explanation: {_md(b.explanation)}")
        if b.context:
            out.append(f"- torch's debug context: {_md(b.context)}")
        for h in b.hints:
            out.append(f"- suggestion: {_md(h)}")
        out.append(f"- compile ids: {_md(', '.join(b.compile_ids))}")
        out.append("")
    out += [f"## Recompiles ({len(d.recompiles)})", ""]
    for r in d.recompiles:
        out.append(f"### {_md(r.function)} ({_c(r.where)}), compile {_md(r.compile_id)}")
        out.append("")
        for reason in r.reasons:
            out.append(f"- reason: {_c(reason)}")
        for text, code in r.suggestions:
            out.append(f"- suggestion: {_md(text)}" + (f" — {_c(code)}" if code else ""))
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
            f"| {_cell_code(k.name)} | {_md(k.backend)} | {_md(k.compile_id)} | {'backward' if k.backward else 'forward'} | "
            f"{_md(', '.join(k.fused_ops)) or '-'} | {_md(k.vectorized or '-')} | {_md(', '.join(k.lines)) or '-'} | "
            f"{_cell_code(k.path) if k.path else '-'} |"
        )
    out += ["", f"## Compile time by stage ({d.total_compile_s:.2f}s in all)", "", "| stage | seconds |", "|---|---|"]
    for stage, secs in d.stages.items():
        out.append(f"| {stage} | {secs:.2f} |")  # our stage names
    out += [
        "",
        f"## Compiles ({d.compile_count})",
        "",
        "| compile | function | where | outcome | graphs | kernels | guards | time (s) | files |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in d.compiles:
        out.append(
            f"| {_md(c.compile_id)} | {_cell_code(c.function)} | {_cell_code(c.where)} | {_md(c.outcome)} | {c.graphs} | {c.kernels} | "
            f"{c.guards if c.guards is not None else '-'} | {c.time_s:.2f} | {_cell_code(c.dir)} |"
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
            f"{d.compile_count} compiles, "
            + (
                f"{len(d.limits)} recompile limit hit{'s' if len(d.limits) != 1 else ''} (calls run eagerly, not compiles), "
                if d.limits
                else ""
            )
            + f"{d.total_compile_s:.2f}s compiling",
        ),
    ]
    top = max(d.stages.values(), default=0.0) or 1.0
    return _environment().get_template("report.html.j2").render(d=d, status=status, overview=overview, top=top)
