"""What ``dyn-inspect verify`` concludes, answered once for the CLI, the TUI and the editors:
where the recorded program is re-run, and whether the re-run verifies the fix.

Where: in the user's directory (``here``) when the recorded program's file is there at the
same path relative to it as it was to the recorded run's cwd — a copy of the project (a
clone, a worktree) re-runs its own edited code, not the original it was recorded from —
else in the recorded run's directory, and the report says why. A recorded command
(``dyn-inspect run -- CMD``) names no program file to look for: always its recorded
directory.

Whether: ``verified`` only when the re-run ended like the recorded run — exit 0, or the
recorded run's exit code with the same uncaught exception —, ran to its end (not stopped
by ``--settle``, not killed) and had no compile failure the recorded run did not have.
Causes, breaks, recompiles and failures are compared before → after either way; the
faces mark a cause "fixed ✓" only in a verified report.

A cause or a failure is matched across the edit by what it is and the text of its line
(lines move when code is inserted above them), never by the line number alone.

What: a recorded script or module only when its file is the user's own — a Python file
inside the directory it is re-run in, not the interpreter's library (``foreign_program``):
a crafted run that says "module" ``timeit`` with a statement, or "script"
``/usr/lib/python3/timeit.py``, would run whatever it likes. Such a run, like a recorded
command, is re-run only when the user confirms it (``verify --yes``).

Public API: ``plan_rerun(start, here) -> RerunPlan`` (its ``confirm`` says why it needs
the user's yes), ``verify_report(before, after, plan, exit_code, stopped) -> typed.VerifyReport``.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from dyn_inspect.engine.normalizers.locations import parse_traceback
from dyn_inspect.engine.schema import ExceptionInfo, Loc, RunStart
from dyn_inspect.inspector.analysis import spread as stats
from dyn_inspect.inspector.analysis.causes import Cause, causes
from dyn_inspect.inspector.analysis.diff import diff_runs
from dyn_inspect.inspector.analysis.failures import FailureSite, failure_sites, line_text
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import inside, nearest_user_frame, run_cwd, short_path
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports.cost import verdict_out
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.source_files import allow_root
from dyn_inspect.inspector.units import time_text


@dataclass(frozen=True)
class RerunPlan:
    """The recorded program's command and the directory it is re-run in."""

    command: list[str]  # as recorded, the script mapped into ``cwd`` when it moved
    cwd: str
    note: str | None  # why ``cwd``, when it is not the recorded run's directory or ``here`` is elsewhere
    # why it runs only when the user confirms it (``verify --yes``): a recorded command, or a
    # script or module that is not the user's own (``foreign_program``); None: it may run
    confirm: str | None = None


def _program_file(start: RunStart) -> str | None:
    """The file the recorded command runs, relative to its cwd when inside it (None: a
    command, or a script outside the recorded directory)."""
    cmd = start.command
    if start.mode == "script" and len(cmd) >= 2:
        path = cmd[1]
    elif start.mode == "module" and len(cmd) >= 3:
        path = cmd[2].replace(".", "/")
    else:
        return None
    if os.path.isabs(path):
        try:
            return str(Path(path).relative_to(start.cwd))
        except ValueError:
            return None
    return path


def _exists(base: str, rel: str, module: bool) -> bool:
    p = Path(base) / rel
    if module:
        return p.with_suffix(".py").is_file() or (p / "__main__.py").is_file()
    return p.is_file()


def plan_rerun(start: RunStart, here: str) -> RerunPlan:
    """Where and what verify re-runs for a run started as ``start``, asked from ``here``.
    Raises ``InspectorError`` when the run says "script" or "module" but its command would
    start something else (``_not_as_recorded``)."""
    plan = _plan(start, here)
    why = _not_as_recorded(start, plan)
    if why is not None:
        raise InspectorError(
            f"verify will not re-run this run: it says it was recorded as a {start.mode}, but {why} "
            f"(`{shlex.join(plan.command)}` would start something else; a run directory is untrusted: docs/security.md)"
        )
    if start.mode not in ("script", "module"):
        return replace(plan, confirm="was recorded as a command, which verify runs only when you confirm it")
    foreign = foreign_program(start, plan)
    if foreign is not None:
        return replace(plan, confirm=f"would re-run a program that is not yours to verify ({foreign})")
    return plan


# What ``python -m`` takes: a dotted name of identifiers (never an option such as ``--``).
_MODULE_NAME = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")


def _not_as_recorded(start: RunStart, plan: RerunPlan) -> str | None:
    """Why re-running ``plan`` would not start the script or module the run names, or None.

    ``dyn-inspect run`` decides from its arguments what it starts (cli/commands/run.py): a
    target that ends in ``.py``, or is a file that is not executable, is a script; ``--`` or
    an executable (``/bin/sh``) starts a command. The mode and the command both come from the
    run's ``launcher.jsonl``, which anyone may have written: a "script" ``--`` followed by
    ``sh -c ...`` re-ran that command without the ``--yes`` a recorded command needs."""
    cmd = plan.command
    if start.mode == "script" and len(cmd) >= 2:
        script = cmd[1]
        path = os.path.join(plan.cwd, script)
        if script.startswith("-") or not (script.endswith(".py") or (os.path.isfile(path) and not os.access(path, os.X_OK))):
            return f"its script {script!r} is not a Python script"
    if start.mode == "module" and len(cmd) >= 3 and _MODULE_NAME.fullmatch(cmd[2]) is None:
        return f"its module {cmd[2]!r} is not a module name"
    return None


def _plan(start: RunStart, here: str) -> RerunPlan:
    recorded = start.cwd
    cmd = list(start.command)
    if _same_dir(here, recorded):
        return RerunPlan(cmd, recorded, None)
    rel = _program_file(start)
    module = start.mode == "module"
    if rel is not None and _exists(here, rel, module):
        if start.mode == "script" and os.path.isabs(cmd[1]):
            cmd[1] = str(Path(here) / rel)
        return RerunPlan(cmd, here, f"re-running here, not in {recorded} where the run was recorded: {rel} is here too")
    if rel is None:
        named = cmd[1] if len(cmd) > 1 else "its program"
        why = "a recorded command names no program file to look for here" if start.mode == "command" else f"{named} is not under it"
    else:
        why = f"{rel} is not in {here}"
    return RerunPlan(cmd, recorded, f"re-running {recorded}, where the run was recorded ({why})")


def _library_dirs() -> list[str]:
    import sysconfig

    paths = sysconfig.get_paths()
    return [os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]


def foreign_program(start: RunStart, plan: RerunPlan) -> str | None:
    """Why the script or module ``plan`` would start is not the user's own program, or
    None: its file must be a regular Python file inside ``plan.cwd`` (where it runs) and
    not in the interpreter's library. A recorded command is for the caller to confirm."""
    cmd = plan.command
    if start.mode == "script":
        if len(cmd) < 2:  # (it would fall through to being re-run as a command)
            return "its command names no script"
        candidates = [os.path.join(plan.cwd, cmd[1])]
        what = f"script {cmd[1]}"
    elif start.mode == "module":
        if len(cmd) < 3:
            return "its command names no module"
        base = os.path.join(plan.cwd, *cmd[2].split("."))
        candidates = [base + ".py", os.path.join(base, "__main__.py")]
        what = f"module {cmd[2]}"
    else:
        return None
    try:
        top = os.path.realpath(plan.cwd)
        libraries = _library_dirs()
        for candidate in candidates:
            real = os.path.realpath(candidate)
            if os.path.isfile(real) and inside(real, top) and not any(inside(real, lib) for lib in libraries):
                return None
    except (OSError, ValueError):
        pass
    return f"its {what} is no Python file of {plan.cwd}"


def _same_dir(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normpath(a) == os.path.normpath(b)


# -- the verdict ---------------------------------------------------------------------------


def _cause_key(c: Cause) -> tuple[object, ...]:
    """A cause's identity across an edit (lines move): kind + frames + what changed, or
    the break's type and the line's text."""
    if c.break_group is not None:
        e = c.break_group.first
        site = c.sites[0] if c.sites else e.loc
        return ("graph_break", e.gb_type, Path(site.file).name, (site.code or e.loc.code or "").strip())
    f = c.frames[0] if c.frames else None
    return ("recompile", f.name if f else "", c.title.split(" → ")[0])


def _failure_key(s: FailureSite) -> tuple[object, ...]:
    """A failure's identity across an edit: torch's exception, the file's name and the
    failing line's text (its number when no text is known)."""
    loc = s.first.user_loc
    where: object = (line_text(loc) or loc.line) if loc is not None else ""
    return (s.first.fail_type, s.first.headline, Path(loc.file).name if loc else "", where)


def _failure(s: FailureSite, cwd: str | None) -> typed.VerifyFailure:
    loc = s.first.user_loc
    return typed.VerifyFailure(
        fail_type=s.first.fail_type,
        headline=s.first.headline,
        file=short_path(loc.file, cwd) if loc else "?",
        line=loc.line if loc else 0,
        count=s.count,
    )


def _counts(m: RunModel, found: list[Cause]) -> typed.VerifyCounts:
    failed = sum(1 for c in m.compiles.values() if c.capture is not None and c.capture.outcome == "failed")
    return typed.VerifyCounts(
        breaks_unique=len(m.breaks),
        breaks_total=m.total_break_hits(),
        recompiles=len(m.recompiles),
        limit_hits=len(m.recompile_limits),
        recompile_limit_hits=len(m.recompile_limits),
        causes=len(found),
        failures=failed,
        compile_time_s=round(m.total_compile_time(), 3),
        step_us=round(m.step_profiles[0][1].step_us, 3) if m.step_profiles else None,
    )


def _marks(c: Cause) -> list[typed.CauseSite]:
    fix = [typed.CauseSite(file=c.fix.file, line=c.fix.site_line, name=None)] if c.fix is not None else []
    return fix + [typed.CauseSite(file=s.file, line=s.line, name=s.name) for s in c.sites]


def _us(c: Cause | None) -> float | None:
    return round(c.step_cost.us, 3) if c is not None and c.step_cost is not None else None


def _raised(m: RunModel) -> ExceptionInfo | None:
    return next((p.end.exception for p in m.processes.values() if p.end is not None and p.end.exception is not None), None)


def _user_frame(e: ExceptionInfo, cwd: str | None) -> Loc | None:
    """The exception's innermost user frame (under ``cwd`` when one is), else where it was raised."""
    frames = parse_traceback(e.traceback)
    return (nearest_user_frame(frames, cwd) if cwd else None) or nearest_user_frame(frames) or e.loc


def _exception(e: ExceptionInfo | None, cwd: str | None) -> typed.VerifyException | None:
    if e is None:
        return None
    loc = _user_frame(e, cwd)
    return typed.VerifyException(
        type=e.type,
        message=(e.message.strip().splitlines() or [""])[0],
        file=short_path(loc.file, cwd) if loc else None,
        line=loc.line if loc else None,
    )


def _exception_key(e: ExceptionInfo | None, cwd: str | None) -> tuple[object, ...] | None:
    """An uncaught exception's identity across an edit: its type, file name and line text."""
    if e is None:
        return None
    loc = _user_frame(e, cwd)
    return (e.type, Path(loc.file).name, (loc.code or "").strip() or loc.line) if loc else (e.type,)


def _where(e: typed.VerifyException | None) -> str:
    if e is None:
        return ""
    at = f" at {e.file}:{e.line}" if e.file else ""
    return f"{at} ({e.type}: {e.message})" if e.message else f"{at} ({e.type})"


def _not_verified(
    before: RunModel,
    after: RunModel,
    plan: RerunPlan,
    exit_code: int,
    stopped: bool,
    new_failures: list[typed.VerifyFailure],
) -> str | None:
    """Why the re-run does not verify the fix, or None when it does."""
    if stopped:
        return "the re-run was stopped once compilation settled (--settle): its end was not seen"
    if after.run_end is not None and after.run_end.signal:
        return f"the re-run was killed by signal {after.run_end.signal}"
    recorded = before.exit_code
    raised = _raised(after)
    # A re-run that now succeeds verifies the fix of a crash; one that fails must fail
    # exactly as the recorded run did (a fix that crashes on its first step is no fix).
    if exit_code != 0 and (exit_code != recorded or _exception_key(raised, plan.cwd) != _exception_key(_raised(before), run_cwd(before))):
        was = f"; the recorded run exited {recorded}{_where(_exception(_raised(before), run_cwd(before)))}" if recorded is not None else ""
        return f"the re-run exited {exit_code}{_where(_exception(raised, plan.cwd))}{was}"
    if new_failures:
        f = new_failures[0]
        more = f" and {len(new_failures) - 1} more" if len(new_failures) > 1 else ""
        return f"the re-run has a compile failure the recorded run did not have: {f.file}:{f.line} ({f.fail_type}: {f.headline}){more}"
    return None


def verify_report(before: Run, after: Run, plan: RerunPlan, exit_code: int, stopped: bool) -> typed.VerifyReport:
    """The verdict on a re-run (``after``) of ``before``'s program."""
    # The program just ran in ``plan.cwd`` (the user's, or confirmed): its files are the
    # ones the causes are found in, wherever the runs are kept (``--runs-dir``).
    allow_root(plan.cwd)
    bm, am = before.model, after.model
    cb, ca = causes(bm), causes(am)
    keys_after = {_cause_key(c) for c in ca}
    after_by_key = {_cause_key(c): c for c in ca}
    keys_before = {_cause_key(c) for c in cb}
    d = diff_runs(bm, am)
    fb = {_failure_key(s): s for s in failure_sites(bm)}
    fa = {_failure_key(s): s for s in failure_sites(am)}
    new_failures = [_failure(s, plan.cwd) for k, s in fa.items() if k not in fb]
    reason = _not_verified(bm, am, plan, exit_code, stopped, new_failures)
    change = _step_change(bm, am)
    return typed.VerifyReport(
        before_run=str(before.path),
        after_run=str(after.path),
        state="verified" if reason is None else "not_verified",
        reason=reason,
        rerun_cwd=plan.cwd,
        rerun_command=plan.command,
        rerun_cwd_note=plan.note,
        before=_counts(bm, cb),
        after=_counts(am, ca),
        fixed=[
            typed.FixedCause(title=c.title, kind=c.kind, recompiles=c.recompile_count, us_per_step=_us(c), marks=_marks(c))
            for c in cb
            if _cause_key(c) not in keys_after
        ],
        remaining=[
            typed.CauseTitle(title=c.title, kind=c.kind, us_per_step_before=_us(c), us_per_step_after=_us(after_by_key.get(_cause_key(c))))
            for c in cb
            if _cause_key(c) in keys_after
        ],
        new=[typed.CauseTitle(title=c.title, kind=c.kind) for c in ca if _cause_key(c) not in keys_before],
        breaks_removed=len(d.breaks.removed),
        breaks_added=len(d.breaks.added),
        failures_gone=[_failure(s, run_cwd(bm)) for k, s in fb.items() if k not in fa],
        failures_remaining=[_failure(s, plan.cwd) for k, s in fa.items() if k in fb],
        failures_new=new_failures,
        exit_code=exit_code,
        before_exit_code=bm.exit_code,
        exception=_exception(_raised(am), plan.cwd),
        stopped_when_settled=stopped,
        changes=changes_text(_counts(bm, cb), _counts(am, ca), change),
        step_change=verdict_out(change),
    )


def _step_change(bm: RunModel, am: RunModel) -> stats.Verdict | None:
    """The step before → after with its interval (issue 57): the unprofiled steps where both
    runs have two or more, else the profiled ones; None without per-step samples."""
    if not bm.step_profiles or not am.step_profiles:
        return None
    b, a = bm.step_profiles[0][1], am.step_profiles[0][1]
    if len(b.plain_samples_us) >= 2 and len(a.plain_samples_us) >= 2:
        return stats.saving_verdict(b.plain_samples_us, a.plain_samples_us)
    return stats.saving_verdict(b.step_samples_us, a.step_samples_us)


def changes_text(b: typed.VerifyCounts, a: typed.VerifyCounts, step: stats.Verdict | None = None) -> str:
    """The counts before → after in one line (every face's verdict line); with per-step
    samples, what the step's change is: "saves 16.7 ms/step (95% CI …)" only when its
    interval excludes no change, else "within noise (±Y %) …"."""
    out = f"recompiles {b.recompiles} → {a.recompiles}, graph breaks {b.breaks_unique} → {a.breaks_unique}, compile failures {b.failures} → {a.failures}"
    if b.step_us is not None and a.step_us is not None:
        out += f", step (profiled) {time_text(b.step_us)} → {time_text(a.step_us)}"
        if step is not None:
            out += f": the step {step.text}"
    return out
