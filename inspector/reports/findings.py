"""What a run says about each workspace file: graph breaks, recompiles, compile failures,
compiled functions (for code lenses) and kernels by line — an immutable ``RunIndex`` built
from the inspector's ``RunModel``, with no LSP types in it.

Built off the event loop after every refresh that brought events, then swapped in whole, so
request handlers never see a half-updated model. Paths are kept as recorded; lookups go
through ``norm_path`` (realpath) so a symlinked workspace still matches.

Attribution rules:
- A break whose innermost frame is outside the workspace (a library, site-packages, another
  project) is shown on the nearest workspace frame of its user stack, naming the library
  location (``origin``). Each hit is attributed separately, so two call paths into one
  library break give two marks with their own counts.
- Dynamo's resume functions (``torch_dynamo_resume_in_<fn>_at_<line>``) are the rest of
  ``<fn>`` after a graph break. Their recompiles are attributed to ``<fn>``'s ``def`` line:
  the user wrote one function, the break line already carries its own diagnostic, and the
  resume part recompiles for the same input change as the function (one note instead of a
  note per break line).
"""

from __future__ import annotations

import ast
import itertools
import re
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field, replace

from dyn_inspect.inspector.analysis import causes as _causes
from dyn_inspect.inspector.analysis.kernel_compile import compile_output
from dyn_inspect.inspector.analysis.messages import headline
from dyn_inspect.inspector.analysis.recompiles import reasons_of, recompile_timeline
from dyn_inspect.inspector.analysis.step_costs import break_costs
from dyn_inspect.inspector.analysis.suggestions import suggest
from dyn_inspect.inspector.events import GraphBreak, Loc, degraded_notes
from dyn_inspect.inspector.locations import def_line
from dyn_inspect.inspector.model import CompileInfo, FrameInfo, RunModel
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace, line_text, norm_path, snapshot

LOGGING_FUNCTIONS = {"debug", "info", "warning", "error", "critical", "exception", "log"}
RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(?P<name>.+)_at_(?P<line>\d+)$")


def original_function(name: str) -> tuple[str, int] | None:
    """``torch_dynamo_resume_in_forward_at_27`` → ("forward", 27); nested resumes unwrap."""
    m = RESUME_RE.match(name)
    if m is None:
        return None
    inner = original_function(m["name"])
    return inner if inner is not None else (m["name"], int(m["line"]))


def logging_callee(call: ast.Call) -> str | None:
    """``print`` / ``logging.<fn>`` for a call of one, else None."""
    f = call.func
    if isinstance(f, ast.Name) and f.id == "print":
        return "print"
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "logging" and f.attr in LOGGING_FUNCTIONS:
        return f"logging.{f.attr}"
    return None


def logging_callee_of(code: str | None) -> str | None:
    """The logging function a recorded line (``Loc.code``) calls, or None."""
    try:
        tree = ast.parse((code or "").strip())
    except (SyntaxError, ValueError):
        return None
    stmt = tree.body[0] if len(tree.body) == 1 else None
    return logging_callee(stmt.value) if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None


@dataclass(frozen=True)
class KernelRef:
    name: str
    backend: str
    fused_ops: tuple[str, ...]
    compile_ids: tuple[str, ...]  # the first few (a kernel may come back in hundreds of recompiles)
    backward: bool = False
    compiles: int = 0  # how many compiles produced it
    # Triton's compile metadata, one headline per distinct one (``KernelCompile.headline``),
    # in compile order: a kernel recompiled for other shapes may have been tuned differently
    compiled: tuple[str, ...] = ()


@dataclass
class BreakFinding:
    key: str
    loc: Loc  # the workspace location shown
    event: GraphBreak  # the first hit attributed here (type, id, url, reason, hints, stack)
    headline: str  # the inspector's words for it (``analysis.messages.headline``), as every face says it
    count: int = 0
    compile_ids: list[str] = field(default_factory=list)
    origin: Loc | None = None  # the innermost (library) location when attributed elsewhere
    helper: str | None = None  # the workspace function the break is in, when it was inlined
    step_cost: str | None = None  # BreakCost.text: its time per profiled step (``--profile``)

    @property
    def from_stack(self) -> bool:
        """Shown on a user-stack frame (its end column runs to the end of the line)."""
        return self.origin is not None

    @property
    def is_logging(self) -> bool:
        return any("reorderable_logging_functions" in h for h in self.event.hints)


@dataclass
class RecompileStep:
    cid: str
    part: str | None  # None: the function itself; else the resume function's name
    part_line: int | None
    reasons: list[str]
    text: str  # the first failure, explained
    suggestion: str | None = None
    code: str | None = None  # a snippet from the suggestion (mark_dynamic(...), ...)
    kind: str | None = None  # the guard kind ("size", "dtype", ...) when known
    source: str | None = None  # the guarded value ("x")
    dim: int | None = None


@dataclass
class FunctionFindings:
    """One compiled workspace function (its resume parts folded in)."""

    file: str
    name: str
    def_line: int  # 1-based line of its ``def`` as recorded
    compiles: int = 0  # compiles of the function itself
    part_compiles: int = 0  # compiles of its resume functions
    break_keys: set[str] = field(default_factory=set)
    kernels: int = 0
    compile_time_s: float = 0.0
    compile_ids: list[str] = field(default_factory=list)
    steps: list[RecompileStep] = field(default_factory=list)
    # recompiles a root cause explains at its fix site: no note of their own here, but the
    # function's details still list them (pointing at the cause)
    explained: list[RecompileStep] = field(default_factory=list)
    limit_reason: str | None = None
    limit_text: str | None = None
    call_site: Loc | None = None  # the workspace line that called it when it recompiled
    outcomes: list[str] = field(default_factory=list)

    @property
    def recompiles(self) -> int:
        return len(self.steps)


@dataclass
class CauseFinding:
    """A root cause with a fix (``inspector.analysis.causes``), shown once at its fix site
    instead of on every frame it made recompile."""

    loc: Loc  # the fix site: the statement that makes the variable (or the call), as now on disk
    title: str  # "`x.shape[0]` takes 16, 32, 48 → 5 recompiles"
    detail: str
    recompiles: int
    code: str  # the fix: "torch._dynamo.mark_dynamic(x, 0)"
    indent: str
    why: str  # "where `x` is made"
    before: bool  # the fix goes before the site's line (else after it)
    sites: list[Loc] = field(default_factory=list)  # the frames that recompiled (def lines)
    # a fix that rewrites part of the site's line instead of inserting one: the recorded
    # text it replaces (found again on the line as it is now) and what it becomes
    replaces: str | None = None
    replacement: str | None = None
    effect: str = "one graph for every size"
    run_time: str | None = None  # Cause.run_time: its frames' guard checks per profiled step


@dataclass
class FailureFinding:
    file: str
    line: int
    code: str | None
    name: str
    cid: str
    fail_type: str
    fail_reason: str
    at_def: bool  # no failing line recorded: shown on the function's def line


@dataclass
class FileFindings:
    breaks: list[BreakFinding] = field(default_factory=list)
    functions: list[FunctionFindings] = field(default_factory=list)
    failures: list[FailureFinding] = field(default_factory=list)
    causes: list[CauseFinding] = field(default_factory=list)
    kernels_by_line: dict[int, list[KernelRef]] = field(default_factory=dict)
    kernel_line_code: dict[int, str | None] = field(default_factory=dict)
    # --profile-kernels runs: "this line: 0.80 ms/step in 2 kernels" per recorded line
    profile_by_line: dict[int, str] = field(default_factory=dict)
    # dims torch specialized because of this recorded line ("dim 1 of `x` became static (= 3) ...")
    shapes_by_line: dict[int, list[str]] = field(default_factory=dict)
    shape_line_code: dict[int, str | None] = field(default_factory=dict)


def signature(ff: FileFindings) -> tuple[object, ...]:
    """What the diagnostics of a file are made of: equal signatures, equal diagnostics
    (for the same text and settings), so an unchanged file is not republished."""
    return (
        tuple((b.key, b.loc.line, b.count, b.origin is not None) for b in ff.breaks),
        tuple((f.name, f.def_line, f.compiles, f.part_compiles, len(f.steps), f.limit_reason is not None) for f in ff.functions),
        tuple((f.cid, f.line) for f in ff.failures),
        tuple((c.title, c.loc.line) for c in ff.causes),
    )


@dataclass
class RunIndex:
    run_path: str | None = None
    status: str = "none"
    files: dict[str, FileFindings] = field(default_factory=dict)  # norm_path -> findings
    unique_breaks: int = 0
    recompiles: int = 0
    event_count: int = 0
    degraded: list[str] = field(default_factory=list)  # recorder hooks down in that torch
    # logging callee ("print") -> inlined functions (any file, libraries too) whose calls of
    # it broke the graph: registering it as reorderable loses their output (code actions)
    inlined_logging: dict[str, list[str]] = field(default_factory=dict)
    # norm path -> the file's lines as the run saw them (``lsp.edits``), where still known
    baselines: dict[str, list[str]] = field(default_factory=dict)

    def for_path(self, path: str) -> FileFindings | None:
        return self.files.get(norm_path(path))


class _Only(defaultdict[str, FileFindings]):
    """``files`` of a restricted build: ``wanted(path)`` says which paths to build for; a
    finding for another file goes into a scratch entry that is dropped at the end."""

    def __init__(self, keep: frozenset[str]) -> None:
        super().__init__(FileFindings)
        self.keep = keep

    def wanted(self, path: str) -> bool:
        return path in self.keep


def _wanted(files: dict[str, FileFindings], path: str) -> bool:
    """Whether the build wants the findings of ``path`` (every path, unless restricted)."""
    return files.wanted(path) if isinstance(files, _Only) else True


def build_index(run: Run | None, workspace: Workspace, only: Collection[str] | None = None) -> RunIndex:
    """The run's findings for ``workspace``. ``only`` (real paths): the findings of those
    files alone — each equal to what the whole build has for it (every finding is placed
    by its own locations; the run-wide parts, causes and shapes, are computed whole) —
    and the run-wide fields; what the editor has open is shown from it first."""
    if run is None:
        return RunIndex()
    keep = None if only is None else frozenset(only)
    m = run.model
    index = RunIndex(
        run_path=str(run.path),
        status=m.status,
        unique_breaks=len(m.breaks),
        recompiles=len(m.recompiles),
        event_count=m.event_count,
        degraded=degraded_notes(m.processes.values()),
    )
    files: dict[str, FileFindings] = defaultdict(FileFindings) if keep is None else _Only(keep)
    _add_breaks(m, workspace, files)
    index.inlined_logging = _inlined_logging(m)
    covered = _add_causes(m, workspace, files)
    _add_functions(m, workspace, files, covered)
    _add_failures(m, workspace, files)
    _add_kernels(m, workspace, files)
    _add_shapes(m, workspace, files)
    index.files = {path: ff for path, ff in files.items() if keep is None or path in keep}
    since = m.run_start.t if m.run_start is not None and m.run_start.t else None
    for path in index.files:
        lines = snapshot(path, since)
        if lines is not None:
            index.baselines[path] = lines
    return index


# -- graph breaks ----------------------------------------------------------------------


def _helper_name(m: RunModel, log: str, event: GraphBreak) -> str | None:
    """The function the break is in when Dynamo inlined it into another compiled frame."""
    name = event.loc.name
    if not name or name.startswith("<") or RESUME_RE.match(name) or event.cid is None:
        return None
    c = m.compiles.get((log, event.cid))
    frame_name = c.capture.co_name if c is not None and c.capture is not None else None
    if frame_name is None or frame_name == name:
        return None
    original = original_function(frame_name)
    if original is not None and original[0] == name:
        return None
    return name


def _inlined_logging(m: RunModel) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for group in m.break_groups():
        for log, event in group.hits:
            if not any("reorderable_logging_functions" in h for h in event.hints):
                continue
            helper = _helper_name(m, log, event)
            callee = logging_callee_of(event.loc.code) if helper is not None else None
            if callee is not None and helper is not None and helper not in out.setdefault(callee, []):
                out[callee].append(helper)
    return out


def _add_breaks(m: RunModel, ws: Workspace, files: dict[str, FileFindings]) -> None:
    per_step = break_costs(m)
    for group in m.break_groups():
        cost = per_step.get(group.key)
        placed: dict[tuple[str, int], BreakFinding] = {}
        for log, event in group.hits:
            here = ws.local_loc(event.loc)
            shown: Loc | None
            origin: Loc | None
            inner = event.user_stack[-1] if event.user_stack else None
            # torch's location is not always the stack's innermost frame: a backend's
            # exception (GB0219) is placed at the function's first line, while its stack goes
            # on to the line the graph was compiled at — that line, as every face shows it
            deeper = ws.local_loc(inner) if inner is not None and (inner.file, inner.line) != (event.loc.file, event.loc.line) else None
            if here is not None and deeper is not None:
                shown, origin = deeper, event.loc
            elif here is not None:
                shown, origin = here, None
            else:
                shown, origin = ws.nearest(event.user_stack), event.loc
                if shown is None:
                    continue  # nothing in the workspace leads into it
            where = (norm_path(shown.file), shown.line)
            if not _wanted(files, where[0]):
                continue
            finding = placed.get(where)
            if finding is None:
                finding = placed[where] = BreakFinding(
                    group.key, shown, event, headline(event), origin=origin, step_cost=cost.text if cost else None
                )
                files[where[0]].breaks.append(finding)
            finding.count += 1
            if event.cid is not None and event.cid not in finding.compile_ids:
                finding.compile_ids.append(event.cid)
            if origin is None and finding.helper is None:
                finding.helper = _helper_name(m, log, event)


# -- compiled functions, recompiles ----------------------------------------------------


def _owner(frame: FrameInfo, by_name: dict[tuple[str, str], list[FrameInfo]]) -> FrameInfo | None:
    """The compiled frame of the function a resume function continues."""
    original = original_function(frame.name)
    if original is None:
        return None
    name, line = original
    candidates = [f for f in by_name.get((frame.filename, name), []) if f.firstlineno <= line]
    return max(candidates, key=lambda f: f.firstlineno) if candidates else None


_StepsKey = tuple[int, int, bool, bool]
_steps_cache: dict[int, tuple[_StepsKey, FrameInfo, tuple[list[RecompileStep], str | None]]] = {}


def _steps(m: RunModel, frame: FrameInfo, part: bool) -> tuple[list[RecompileStep], str | None]:
    """The frame's recompiles explained; cached per frame until it compiles again (frames
    live as long as their run's model, so a growing run re-explains only what changed)."""
    key = (id(m), len(frame.compiles), frame.recompile_limit is not None, part)
    cached = _steps_cache.get(id(frame))
    if cached is not None and cached[0] == key and cached[1] is frame:
        return cached[2]
    if len(_steps_cache) > 100_000:
        _steps_cache.clear()
    result = _explain(m, frame, part)
    _steps_cache[id(frame)] = (key, frame, result)
    return result


def _explain(m: RunModel, frame: FrameInfo, part: bool) -> tuple[list[RecompileStep], str | None]:
    steps: list[RecompileStep] = []
    limit_text = None
    part_name = frame.name if part else None
    part_line = frame.firstlineno if part else None
    for entry in recompile_timeline(m, frame):
        if entry.limit_reached and entry.suggestion is not None:
            limit_text = entry.suggestion.text
        if not entry.is_recompile:
            continue
        reasons = reasons_of(entry.compile)
        first = entry.failures[0] if entry.failures else None
        suggestion = entry.suggestion if not entry.limit_reached else (suggest(first) if first is not None else None)
        steps.append(
            RecompileStep(
                cid=entry.cid,
                part=part_name,
                part_line=part_line,
                reasons=reasons,
                text=first.text if first is not None else "; ".join(reasons),
                suggestion=suggestion.text if suggestion else None,
                code=suggestion.code if suggestion else None,
                kind=first.kind if first is not None else None,
                source=first.source if first is not None else None,
                dim=first.dim if first is not None else None,
            )
        )
    return steps, limit_text


def _call_site(c: CompileInfo, ws: Workspace) -> Loc | None:
    """The workspace line that called the compiled function (from torch's compile stack)."""
    if c.start is None or len(c.start.stack) < 2:
        return None
    return ws.nearest(c.start.stack[:-1])


def _add_causes(m: RunModel, ws: Workspace, files: dict[str, FileFindings]) -> dict[tuple[str, str], str]:
    """One finding per recompile cause that has a fix in the workspace; returns the
    (log, compile id) of the recompiles they explain (their frames' notes leave them out),
    each with the cause's title."""
    covered: dict[tuple[str, str], str] = {}
    try:
        found = _causes.recompile_causes(m)
    except Exception:  # noqa: BLE001 - an analysis bug must not take the diagnostics down
        return covered
    for c in found:
        fix = c.fix
        if fix is None:
            continue
        local = ws.local(fix.file)
        if local is None:
            continue
        # explains recompiles in any file (their functions leave them out): covered whole
        covered.update(((r.log, r.cid), c.title) for r in c.recompiles)
        if not _wanted(files, norm_path(local)):
            continue
        line = fix.site_line
        code = line_text(local, line)
        sites = [loc for loc in (ws.local_loc(s) for s in c.sites) if loc is not None]
        files[norm_path(local)].causes.append(
            CauseFinding(
                loc=Loc(file=local, line=line, code=code),
                title=c.title,
                detail=c.detail,
                recompiles=c.recompile_count,
                code=fix.code,
                indent=fix.indent,
                why=fix.why,
                before=fix.why.startswith("before the call"),
                sites=sites,
                replaces=fix.replaces,
                replacement=fix.replacement,
                run_time=c.run_time,
                effect="one graph for every lr (read at run time; schedulers update it in place)"
                if fix.replaces is not None
                else "one graph for every size",
            )
        )
    return covered


def _add_functions(m: RunModel, ws: Workspace, files: dict[str, FileFindings], covered: dict[tuple[str, str], str] | None = None) -> None:
    frames = m.frames_in_order()
    groups: dict[tuple[str, int, str], FunctionFindings] = {}
    ordered: list[tuple[FrameInfo, FrameInfo]] = []  # (frame, owner)
    by_name: dict[tuple[str, str], list[FrameInfo]] = defaultdict(list)
    for frame in frames:
        if not frame.is_resume_function:
            by_name[(frame.filename, frame.name)].append(frame)
    for frame in frames:
        owner = _owner(frame, by_name) if frame.is_resume_function else frame
        if owner is None:
            owner = frame  # a resume function whose function was never seen: its own entry
        ordered.append((frame, owner))
    for frame, owner in ordered:
        filename = ws.local(owner.filename, owner.firstlineno)
        if filename is None or not _wanted(files, norm_path(filename)):
            continue  # (another file's: its recompiles are not explained either)
        orphan = owner is frame and frame.is_resume_function
        if orphan:
            # Its function was never compiled on its own: keyed by the function's name at
            # the resume line (placement then finds that function's def nearby).
            original = original_function(frame.name)
            name, line = (original[0] if original else frame.name), frame.firstlineno
        else:
            name, line = owner.name, def_line(filename, owner.firstlineno)
        key = (norm_path(filename), line, name)
        fn = groups.get(key)
        if fn is None:
            fn = groups[key] = FunctionFindings(filename, name, line)
            files[key[0]].functions.append(fn)
        is_part = frame is not owner or frame.is_resume_function
        if is_part:
            fn.part_compiles += frame.compile_count
        else:
            fn.compiles += frame.compile_count
        for c in frame.compiles:
            fn.compile_ids.append(c.cid)
            fn.outcomes.append(c.outcome)
            fn.kernels += len(c.kernels)
            fn.compile_time_s += c.compile_time_s
            fn.break_keys.update(b.key for b in c.breaks)
        steps, limit_text = _steps(m, frame, part=is_part)
        if covered and frame.compiles:
            # explained once, at the cause's fix site: not repeated on each frame
            log = frame.compiles[0].log
            fn.explained.extend(
                replace(
                    s,
                    suggestion=f"its root cause: {covered[(log, s.cid)]} (one fix for all of them: the root-cause note says where)",
                    code=None,
                )
                for s in steps
                if (log, s.cid) in covered
            )
            steps = [s for s in steps if (log, s.cid) not in covered]
        fn.steps.extend(steps)
        if frame.recompile_limit is not None:
            fn.limit_reason = frame.recompile_limit.reason
            fn.limit_text = limit_text
        if not is_part and fn.call_site is None and len(frame.compiles) > 1:
            fn.call_site = _call_site(frame.compiles[1], ws)
    for fn in groups.values():
        fn.steps.sort(key=lambda s: (s.part is not None, s.part_line or 0, s.cid))
        fn.explained.sort(key=lambda s: (s.part is not None, s.part_line or 0, s.cid))


# -- compile failures ------------------------------------------------------------------


def _add_failures(m: RunModel, ws: Workspace, files: dict[str, FileFindings]) -> None:
    for c in m.compiles_in_order():
        cap = c.capture
        if cap is None or cap.outcome != "failed":
            continue
        loc = ws.local_loc(cap.fail_loc) if cap.fail_loc is not None else None
        at_def = False
        if loc is None:
            co_file = ws.local(cap.co_filename, cap.co_firstlineno) if cap.co_filename else None
            if co_file is not None:
                loc = Loc(co_file, def_line(co_file, cap.co_firstlineno or 1), cap.co_name)
                at_def = True
            elif c.start is not None and (near := ws.nearest(c.start.stack)) is not None:
                loc = near
            else:
                continue
        if not _wanted(files, norm_path(loc.file)):
            continue
        files[norm_path(loc.file)].failures.append(
            FailureFinding(
                file=loc.file,
                line=loc.line,
                code=loc.code,
                name=cap.co_name or "?",
                cid=c.cid,
                fail_type=cap.fail_type or "compile failure",
                fail_reason=cap.fail_reason or "",
                at_def=at_def,
            )
        )


# -- dynamic shapes --------------------------------------------------------------------


def _add_shapes(m: RunModel, ws: Workspace, files: dict[str, FileFindings]) -> None:
    from dyn_inspect.inspector.analysis.shapes import compile_shapes

    for cs in compile_shapes(m):
        for spec in cs.specializations:
            loc = ws.local_loc(spec.loc) if spec.loc is not None else None
            if loc is None or not _wanted(files, norm_path(loc.file)):
                continue
            ff = files[norm_path(loc.file)]
            text = f"{spec.describe(f'line {loc.line}')} (compile `{cs.compile.cid}` of `{cs.function}`)"
            if text not in ff.shapes_by_line.setdefault(loc.line, []):
                ff.shapes_by_line[loc.line].append(text)
            ff.shape_line_code[loc.line] = loc.code


# -- kernels ---------------------------------------------------------------------------


KERNEL_IDS_SHOWN = 6


def _add_kernels(m: RunModel, ws: Workspace, files: dict[str, FileFindings]) -> None:
    # (path, line) -> kernel identity -> compile ids (a dict as an ordered set)
    merged: dict[tuple[str, int], dict[tuple[str, tuple[str, ...], bool], dict[str, None]]] = defaultdict(dict)
    meta: dict[tuple[str, tuple[str, ...], bool], str] = {}
    # kernel identity -> its distinct compile headlines (a dict as an ordered set)
    compiled: dict[tuple[str, tuple[str, ...], bool], dict[str, None]] = defaultdict(dict)
    codes: dict[tuple[str, int], str | None] = {}
    for k in m.kernels:
        if not k.lines:
            continue
        ident = (k.name, tuple(k.event.fused_ops), k.event.backward)
        meta[ident] = k.event.backend
        c = compile_output(k) if k.meta is not None else None
        if c is not None:
            compiled[ident][c.headline] = None
        for recorded in k.lines:
            loc = ws.local_loc(recorded)
            if loc is None:
                continue
            where = (norm_path(loc.file), loc.line)
            if not _wanted(files, where[0]):
                continue
            codes.setdefault(where, loc.code)
            merged[where].setdefault(ident, {})[k.compile.cid] = None
    for (path, line), kernels in merged.items():
        ff = files[path]
        refs = []
        for (name, ops, bwd), ids in kernels.items():
            first = tuple(itertools.islice(ids, KERNEL_IDS_SHOWN))
            headlines = tuple(compiled.get((name, ops, bwd), ()))
            refs.append(KernelRef(name, meta[(name, ops, bwd)], ops, first, bwd, len(ids), headlines))
        ff.kernels_by_line[line] = refs
        ff.kernel_line_code[line] = codes.get((path, line))
    for entry in m.line_profile():
        local = ws.local(entry.file, entry.line)
        if local is not None:
            path = norm_path(local)
            if path in files:
                files[path].profile_by_line[entry.line] = entry.describe()
