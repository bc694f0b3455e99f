"""The fixes the inspector offers for a run's root causes, as plans an agent can apply and
have verified: each cause's one fix (``inspector/analysis/causes.py``, the fix ``causes``
prints and the editor's quick fix applies) as a unified diff against its file as it is now,
whether it keeps the program's behaviour, the test that proves fixes of its kind
(``VERIFIED`` in ``inspector/analysis/fix_kinds.py``) and how this edit is verified: the
program re-run under the recorder and compared before → after (``verify``).

The diff names the file relative to the run's recorded directory (``a/prog.py``,
``b/prog.py``), so ``git apply`` or ``patch -p1`` applies it there or in a copy of it.

Public API: ``fix_plans(run, cause=None) -> typed.FixPlansReport``.
"""

from __future__ import annotations

import difflib
import os

from dyn_inspect.inspector.analysis.causes import Cause, Fix, causes
from dyn_inspect.inspector.analysis.fix_kinds import VERIFIED, FixKind
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import relative, run_cwd
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.source_files import read_source

VERIFY_HOW = (
    "apply the diff in {cwd} (or in a copy of that directory), then re-run the program under the recorder and compare: "
    "the MCP tool `verify` (run {run}, in_dir: where you applied it) or `dyn-inspect verify {run} --in DIR`; "
    "it is verified when the re-run ends as the recorded run did, with no new compile failure, and the cause is gone"
)


def fix_kind(fix: Fix) -> FixKind:
    """The kind of a cause's fix: a rewritten lr (``replaces``) or a mark_dynamic line."""
    return "tensor_lr" if fix.replaces is not None else "mark_dynamic"


def _edited(text: str, fix: Fix) -> str | None:
    """``text`` with ``fix`` applied (None: its line is not in the file, or no longer holds
    what the fix replaces)."""
    lines = text.splitlines(keepends=True)
    if not 1 <= fix.after_line <= len(lines):
        return None
    i = fix.after_line - 1
    if fix.replaces is not None:
        if fix.replaces not in lines[i] or fix.replacement is None:
            return None
        lines[i] = lines[i].replace(fix.replaces, fix.replacement, 1)
        return "".join(lines)
    if not lines[i].endswith("\n"):
        lines[i] += "\n"
    return "".join(lines[: i + 1]) + fix.text + "".join(lines[i + 1 :])


def _plan(number: int, c: Cause, fix: Fix, cwd: str, run: Run) -> typed.FixPlan:
    kind = fix_kind(fix)
    path = relative(fix.file, cwd) if cwd else os.path.basename(fix.file)
    text = read_source(fix.file)
    diff: str | None = None
    no_diff: str | None = None
    if text is None:
        no_diff = f"{path} cannot be read here (moved, too large, or outside the run's directory)"
    else:
        after = _edited(text, fix)
        if after is None:
            no_diff = f"{path}:{fix.after_line} no longer holds the line the fix was made for (the file changed since the run)"
        else:
            diff = "".join(difflib.unified_diff(text.splitlines(True), after.splitlines(True), f"a/{path}", f"b/{path}"))
    return typed.FixPlan(
        cause=number,
        title=c.title,
        fix_kind=kind,
        file=fix.file,
        path=path,
        cwd=cwd,
        line=fix.after_line,
        code=fix.code,
        why=fix.why,
        keeps_behaviour=fix.keeps_behaviour,
        diff=diff,
        no_diff=no_diff,
        verified_by=VERIFIED.get(kind),
        verify=VERIFY_HOW.format(cwd=cwd or "the run's directory", run=run.path.name),
    )


def fix_plans(run: Run, cause: int | None = None) -> typed.FixPlansReport:
    """The plan of cause number ``cause`` (1-based, as ``causes`` lists them), or of every
    cause; an error naming how many causes there are for a number out of range."""
    found = causes(run.model)
    if cause is not None and not 1 <= cause <= len(found):
        raise InspectorError(f"no cause {cause} in {run.path.name}: it has {len(found)} (numbered 1–{len(found)} as `causes` lists them)")
    cwd = run_cwd(run.model) or ""
    picked = [(cause, found[cause - 1])] if cause is not None else list(enumerate(found, 1))
    plans = [_plan(n, c, c.fix, cwd, run) for n, c in picked if c.fix is not None]
    without = [typed.CauseTitle(title=c.title, kind=c.kind) for _, c in picked if c.fix is None]
    return typed.FixPlansReport(run=str(run.path), plans=plans, without_fix=without)
