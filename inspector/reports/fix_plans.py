"""The fixes the inspector offers for a run's root causes, as plans an agent can apply and
have verified: each cause's one fix (``inspector/analysis/causes.py``, the fix ``causes``
prints and the editor's quick fix applies) as a unified diff against its file as it is now,
whether it keeps the program's behaviour, the test that proves fixes of its kind
(``VERIFIED`` in ``inspector/analysis/fix_kinds.py``) and how this edit is verified: the
program re-run under the recorder and compared before → after (``verify``).

The diff names the file relative to the run's recorded directory (``a/prog.py``,
``b/prog.py``), so ``git apply`` or ``patch -p1`` applies it there or in a copy of it.

Every other fix the inspector offers is a ``Plan`` made on a source text: the editor's
quick fixes (``lsp/code_actions.py`` makes them on the live buffer and only translates the
plan's edits into the client's positions) and ``causes --fix`` (on the file as it is now).
Each plan says its kind, its site, its edits, its title (what the edit does to the program:
"…: output kept" / "behaviour kept" when the program does the same thing with fewer breaks
or compiles, "…: output lost" or "moves the break" when it does not), whether it keeps the
behaviour, whether it is the preferred fix of its finding, and the test that verifies its
kind; a plan whose kind is not in ``VERIFIED`` is never made. Plans (each made only when
the text parses, imports torch — it is never added: the user's import style is theirs —
and the edit is unambiguous):

- a root cause of recompiles (``CauseFinding``) → its one fix at its site (``cause_plan``):
  ``torch._dynamo.mark_dynamic(x, 0)`` right after the line that makes ``x``, or, for a
  compiled optimizer step recompiling on its float lr, ``lr=torch.tensor(0.01)``;
- size-mismatch recompile → ``torch._dynamo.mark_dynamic(<arg>, <dim>)`` before the call
  that recompiled it, when the guarded parameter is passed there as a plain name
  (``mark_dynamic_plan``);
- a Python int/float parameter specialized and changed → ``dynamic=True`` on the
  function's own ``@torch.compile`` decorator (``dynamic_scalar_plan``);
- graph breaks (``break_plans``): a logging/print call → (preferred) add the function to
  ``torch._dynamo.config.reorderable_logging_functions`` after the file's imports (output
  kept), or wrap the call in ``if not torch.compiler.is_compiling():`` (output lost);
  ``.item()`` → ``capture_scalar_outputs = True`` after the imports; a data-dependent ``if``
  whose branches each assign one name → ``name = torch.where(cond, then, else)`` (both
  branches computed: for review, not preferred); a break inside a helper Dynamo inlined →
  ``@torch.compiler.disable`` on it (torch then breaks at the call site, GB0098: the break
  moves).

Public API: ``fix_plans(run, cause=None) -> typed.FixPlansReport``; ``Source.of(lines)``,
``break_plans``, ``mark_dynamic_plan``, ``dynamic_scalar_plan``, ``cause_plan`` ->
``Plan``; ``apply_plan(lines, plan)``; ``site_plans(run)`` (``causes --fix``).
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dyn_inspect.inspector.analysis.causes import Cause, Fix, causes
from dyn_inspect.inspector.analysis.fix_kinds import VERIFIED, FixKind
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import relative, run_cwd
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports.findings import BreakFinding, CauseFinding, FunctionFindings, logging_callee
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
    # (the gate: a cause's fix of a kind no test verifies is no plan)
    planned = [(n, c, c.fix) for n, c in picked if c.fix is not None and fix_kind(c.fix) in VERIFIED]
    plans = [_plan(n, c, fix, cwd, run) for n, c, fix in planned]
    without = [typed.CauseTitle(title=c.title, kind=c.kind) for n, c in picked if all(n != m for m, _, _ in planned)]
    return typed.FixPlansReport(run=str(run.path), plans=plans, without_fix=without)


# -- plans on a source text: the editor's quick fixes, ``causes --fix`` ---------------------------


@dataclass(frozen=True)
class Edit:
    """Replace [``line``:``col``, ``end_line``:``end_col``) of the text the plan was made on
    (1-based lines, code-point columns) with ``text``; an insertion where start == end."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str


def _insert(line1: int, text: str) -> Edit:
    """``text`` inserted at the start of line ``line1`` (len(lines) + 1: at the end)."""
    return Edit(line1, 0, line1, 0, text)


@dataclass(frozen=True)
class Plan:
    """One fix, as data: its kind (``fix_kinds.FixKind``, always one in ``VERIFIED``), the
    line it is about, its edits of the text it was made on, what it does to the program
    (``title``, ``keeps_behaviour``), whether it is the finding's preferred fix, and the
    test that applies fixes of its kind to a real program and re-runs it."""

    kind: FixKind
    title: str
    line: int  # the site: the 1-based line of the text the fix is about
    edits: tuple[Edit, ...]
    keeps_behaviour: bool
    preferred: bool
    verified_by: str


def _plan_of(kind: FixKind, title: str, line: int, edits: list[Edit], *, keeps: bool, preferred: bool = False) -> Plan | None:
    """The plan, when its kind is verified (``VERIFIED``: the gate every fix goes through)."""
    test = VERIFIED.get(kind)
    if test is None:
        return None
    return Plan(kind, title, line, tuple(edits), keeps, preferred and keeps, test)


def apply_plan(lines: Sequence[str], plan: Plan) -> list[str]:
    """``lines`` (the text the plan was made on, without line ends) with its edits applied."""
    text = "".join(line + "\n" for line in lines)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def at(line1: int, col: int) -> int:
        return offsets[line1 - 1] + col if line1 <= len(lines) else len(text)

    for e in sorted(plan.edits, key=lambda e: (e.line, e.col), reverse=True):
        text = text[: at(e.line, e.col)] + e.text + text[at(e.end_line, e.end_col) :]
    return text.splitlines()


_Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class Source:
    """A source text (its lines, without line ends) and its parse."""

    lines: Sequence[str]
    tree: ast.Module

    @classmethod
    def of(cls, lines: Sequence[str]) -> Source | None:
        try:
            return cls(lines, ast.parse("\n".join(lines) + "\n"))
        except (SyntaxError, ValueError, RecursionError):
            return None  # mid-edit or not Python: no plans

    def imports_torch(self) -> bool:
        for node in self.tree.body:
            if isinstance(node, ast.Import) and any(a.name == "torch" and a.asname is None for a in node.names):
                return True
        return False

    def statement_at(self, line1: int) -> ast.stmt | None:
        """The innermost statement covering ``line1``."""
        best: ast.stmt | None = None
        for node in ast.walk(self.tree):
            if isinstance(node, ast.stmt) and node.lineno <= line1 <= (node.end_lineno or node.lineno):
                if best is None or node.lineno >= best.lineno and (node.end_lineno or 0) <= (best.end_lineno or 0):
                    best = node
        return best

    def function(self, name: str, line1: int | None = None) -> _Function | None:
        """``def name`` at ``line1`` (its def line), or the innermost one containing it."""
        found: list[_Function] = []
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                if line1 is None or node.lineno == line1 or node.lineno <= line1 <= (node.end_lineno or node.lineno):
                    found.append(node)
        return max(found, key=lambda n: n.lineno) if found else None

    def after_imports(self) -> int:
        """The last line of the last top-level import (of the docstring when none; 0)."""
        last = 0
        for node in self.tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                last = node.end_lineno or node.lineno
            elif last == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                last = node.end_lineno or node.lineno
            elif last:
                break
        return last

    def indent(self, line1: int) -> str:
        text = self.lines[line1 - 1]
        return text[: len(text) - len(text.lstrip())]

    def char_col(self, line1: int, byte_col: int) -> int:
        """ast's UTF-8 byte column as a code-point column."""
        return len(self.lines[line1 - 1].encode("utf-8")[:byte_col].decode("utf-8", "ignore"))


# -- recompiles ------------------------------------------------------------------------------


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _call_arg(stmt: ast.stmt, line1: int, fn_name: str, param: str, index: int) -> str | None:
    """The plain name passed for ``param`` (positional ``index``) by the one call on
    ``line1`` that can be the compiled function's; None when not exactly one."""
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call) and n.lineno <= line1 <= (n.end_lineno or n.lineno)]

    def arg_of(call: ast.Call) -> str | None:
        for kw in call.keywords:
            if kw.arg == param:
                return kw.value.id if isinstance(kw.value, ast.Name) else None
        if index < 0 or any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
            return None
        arg = call.args[index] if index < len(call.args) else None
        return arg.id if isinstance(arg, ast.Name) else None

    named = [c for c in calls if _callee(c) == fn_name]
    names = {a for a in (arg_of(c) for c in named or calls) if a is not None}
    return names.pop() if len(names) == 1 else None


def mark_dynamic_plan(
    fn: FunctionFindings, fn_lines: Sequence[str], def_line: int, call_lines: Sequence[str], call_line: int
) -> Plan | None:
    """A size-mismatch recompile of ``fn`` (its ``def`` at ``def_line`` of ``fn_lines``) →
    ``torch._dynamo.mark_dynamic(<arg>, <dim>)`` before the call at ``call_line`` of
    ``call_lines`` (the plan's edits are of that text), when the guarded parameter is passed
    there as a plain name. (torch's stack may omit a direct caller: ``causes`` then finds
    the call, and the root cause carries the fix.)"""
    step = next((s for s in fn.steps if s.part is None and s.kind == "size" and s.source and s.dim is not None), None)
    fn_src = Source.of(fn_lines)
    node = fn_src.function(fn.name, def_line) if fn_src is not None else None
    if step is None or step.source is None or node is None:
        return None
    params = [a.arg for a in node.args.posonlyargs + node.args.args]
    if step.source not in params and step.source not in [a.arg for a in node.args.kwonlyargs]:
        return None  # a local or a stack value: nothing to mark at the call site
    index = params.index(step.source) if step.source in params else -1
    if index >= 0 and params and params[0] in ("self", "cls"):
        index -= 1  # bound method / module call: self is not in the call's arguments
    src = Source.of(call_lines)
    stmt = src.statement_at(call_line) if src is not None else None
    arg = _call_arg(stmt, call_line, fn.name, step.source, index) if stmt is not None else None
    if src is None or stmt is None or arg is None or not src.imports_torch():
        return None
    snippet = f"torch._dynamo.mark_dynamic({arg}, {step.dim})"
    return _plan_of(
        "mark_dynamic",
        f"Insert `{snippet}` before the call: one graph for every size, behaviour kept",
        call_line,
        [_insert(stmt.lineno, f"{src.indent(stmt.lineno)}{snippet}\n")],
        keeps=True,
        preferred=True,
    )


def dynamic_scalar_plan(fn: FunctionFindings, lines: Sequence[str], def_line: int) -> Plan | None:
    """A Python number parameter specialized and changed → ``dynamic=True`` on the
    function's own ``@torch.compile`` (one graph for every value)."""
    step = next((s for s in fn.steps if s.part is None and s.kind == "scalar" and s.source), None)
    src = Source.of(lines)
    node = src.function(fn.name, def_line) if src is not None else None
    if step is None or step.source is None or src is None or node is None:
        return None
    params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    if step.source not in params or not src.imports_torch():
        return None  # a stack value or an attribute: no decorator argument reaches it

    def is_compile(e: ast.expr) -> bool:
        return ast.unparse(e) == "torch.compile"

    compiles = [d for d in node.decorator_list if is_compile(d) or isinstance(d, ast.Call) and is_compile(d.func)]
    if len(compiles) != 1 or compiles[0].end_lineno is None or compiles[0].end_col_offset is None:
        return None
    d = compiles[0]
    line1, end = d.end_lineno or d.lineno, d.end_col_offset or 0
    if isinstance(d, ast.Call):
        if any(kw.arg == "dynamic" or kw.arg is None for kw in d.keywords):
            return None  # dynamic= already said (or hidden in **kwargs): the user's choice
        col = src.char_col(line1, end) - 1  # before ")"
        text = f"{', ' if d.args or d.keywords else ''}dynamic=True"
    else:
        col, text = src.char_col(line1, end), "(dynamic=True)"
    return _plan_of(
        "dynamic_true_scalar",
        f"Compile `{fn.name}` with `dynamic=True`: one graph for every value of `{step.source}`, behaviour kept",
        def_line,
        [Edit(line1, col, line1, col, text)],
        keeps=True,
        preferred=True,
    )


def cause_plan(c: CauseFinding, lines: Sequence[str], line1: int) -> Plan | None:
    """The root cause's one fix, at its site (``line1``: where the site is now)."""
    src = Source.of(lines)
    if src is None or not src.imports_torch():
        return None
    if c.replaces is not None and c.replacement is not None:
        # `lr=0.01` on the site's line as it is now (the literal after `lr=`, once)
        found = list(re.finditer(rf"\blr\s*=\s*({re.escape(c.replaces)})(?![\w.])", lines[line1 - 1]))
        if len(found) != 1:
            return None
        start, end = found[0].span(1)
        return _plan_of(
            "tensor_lr",
            f"Give the optimizer a tensor lr (`{c.code}`): {c.effect}, behaviour kept",
            line1,
            [Edit(line1, start, line1, end, c.replacement)],
            keeps=True,
            preferred=True,
        )
    code_lines = c.code.splitlines()
    lo, hi = max(0, line1 - 2 - len(code_lines)), min(len(lines), line1 + 1 + len(code_lines))
    if any(code_lines[0] in text for text in lines[lo:hi]):
        return None  # already applied
    at = line1 if c.before else line1 + 1
    return _plan_of(
        "mark_dynamic",
        f"Insert `{'; '.join(code_lines)}` {c.why}: one graph for every size, behaviour kept",
        line1,
        [_insert(at, "".join(f"{c.indent}{line}\n" for line in code_lines))],
        keeps=True,
        preferred=True,
    )


# -- graph breaks ------------------------------------------------------------------------------


def _logging_plans(b: BreakFinding, src: Source, line1: int, inlined: Mapping[str, Sequence[str]]) -> list[Plan | None]:
    """``inlined``: callee → the inlined helpers of the run whose calls of it broke the graph
    (``RunIndex.inlined_logging``). torch 2.13 drops a reordered call made inside an
    inlined function (checked: the print never runs), so registering the callee loses
    their output: the reorder fix says so there, and is not offered on such a break."""
    if not b.is_logging:
        return []
    stmt = src.statement_at(line1)
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.lineno == line1 == stmt.end_lineno):
        return []
    callee = logging_callee(stmt.value)
    text = src.lines[line1 - 1]
    col, end = src.char_col(line1, stmt.col_offset), src.char_col(line1, stmt.end_col_offset or 0)
    if callee is None or ";" in text[:col] or text[end:].split("#", 1)[0].strip():
        return []  # another statement shares the line
    indent = src.indent(line1)
    out: list[Plan | None] = [
        _plan_of(
            # The compiled code is traced with is_compiling() true and never runs the call.
            "skip_while_compiling",
            f"Skip `{callee}(...)` while compiling: output lost (wrap in `if not torch.compiler.is_compiling():`)",
            line1,
            [Edit(line1, 0, line1, len(text), f"{indent}if not torch.compiler.is_compiling():\n{indent}    {text.lstrip()}")],
            keeps=False,
        )
    ]
    registration = f"torch._dynamo.config.reorderable_logging_functions.add({callee})"
    if b.helper is None and not any(registration in line for line in src.lines):
        helpers = sorted(set(inlined.get(callee, ())))
        if helpers:
            named = ", ".join(f"`{h}`" for h in helpers[:3]) + (" …" if len(helpers) > 3 else "")
            effect = f"output kept here, output lost in inlined {named} (torch drops reordered calls inside inlined functions)"
        else:
            effect = "output kept"
        out.append(
            _plan_of(
                "reorder_logging",
                f"Let Dynamo reorder `{callee}`: {effect} (add it to torch._dynamo.config.reorderable_logging_functions)",
                line1,
                [_insert(src.after_imports() + 1, f"{registration}\n")],
                keeps=not helpers,
                preferred=True,
            )
        )
    return out


CAPTURE_SCALARS = "torch._dynamo.config.capture_scalar_outputs = True"


def _capture_scalar_plan(b: BreakFinding, src: Source, line1: int) -> Plan | None:
    """``.item()`` break → let Dynamo trace the scalar (torch's own hint names the flag)."""
    e = b.event
    if "capture_scalar_outputs" not in " ".join([e.gb_type, e.explanation, *e.hints]):
        return None
    stmt = src.statement_at(line1)
    if stmt is None or not any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "item" and n.lineno == line1
        for n in ast.walk(stmt)
    ):
        return None
    if any("capture_scalar_outputs" in line for line in src.lines):
        return None  # already set (to something): not ours to flip
    return _plan_of(
        "capture_scalar_outputs",
        f"Let Dynamo trace `.item()`: behaviour kept (set `{CAPTURE_SCALARS}` after the imports)",
        line1,
        [_insert(src.after_imports() + 1, f"{CAPTURE_SCALARS}\n")],
        keeps=True,
        preferred=True,
    )


def _assigned_name(body: list[ast.stmt]) -> tuple[str, ast.expr] | None:
    if len(body) != 1 or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1:
        return None
    target = body[0].targets[0]
    return (target.id, body[0].value) if isinstance(target, ast.Name) else None


def _where_plan(b: BreakFinding, src: Source, line1: int) -> Plan | None:
    """``if <comparison>: n = a [else: n = c]`` on a tensor → ``n = torch.where(cond, a, c)``.

    Both branches are then computed and the value selected per element, so it is the
    same result only when the branches have no side effects and broadcast: a skeleton to
    review, never the preferred fix."""
    if not b.event.gb_type.lower().startswith("data-dependent branching"):
        return None
    stmt = src.statement_at(line1)
    if not isinstance(stmt, ast.If) or stmt.lineno != line1 or not isinstance(stmt.test, ast.Compare):
        return None
    then = _assigned_name(stmt.body)
    if then is None:
        return None
    name, value = then
    otherwise: ast.expr = ast.Name(name)
    if stmt.orelse:
        other = _assigned_name(stmt.orelse)
        if other is None or other[0] != name:
            return None
        otherwise = other[1]
    end = stmt.end_lineno or stmt.lineno
    code = f"{src.indent(line1)}{name} = torch.where({ast.unparse(stmt.test)}, {ast.unparse(value)}, {ast.unparse(otherwise)})"
    return _plan_of(
        "torch_where",
        f"Rewrite the `if` as `{name} = torch.where(...)`: same result, both branches computed (review the rewrite)",
        line1,
        [Edit(line1, 0, end, len(src.lines[end - 1]), code)],
        keeps=True,
    )


def _disable_helper_plan(b: BreakFinding, src: Source, line1: int) -> Plan | None:
    if b.helper is None:
        return None
    node = src.function(b.helper, line1)
    if node is None or not (node.lineno <= line1 <= (node.end_lineno or node.lineno)):
        return None
    if any("compiler.disable" in ast.unparse(d) or "_dynamo.disable" in ast.unparse(d) for d in node.decorator_list):
        return None
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    # Checked on torch 2.13: the caller's graph then breaks at the call instead (GB0098,
    # "Skip calling torch.compiler.disable()d function"): as many graphs as before.
    return _plan_of(
        "disable_helper",
        f"Add `@torch.compiler.disable` to `{b.helper}`: moves the break to the call site (GB0098), does not remove it",
        line1,
        [_insert(first, f"{src.indent(node.lineno)}@torch.compiler.disable\n")],
        keeps=False,
    )


def break_plans(b: BreakFinding, lines: Sequence[str], line1: int, inlined: Mapping[str, Sequence[str]] | None = None) -> list[Plan]:
    """The plans for a graph break shown at ``line1`` of ``lines`` (where it is now); none
    for a break attributed from a library (``origin``): its line is not the break's."""
    src = Source.of(lines)
    if b.origin is not None or src is None or not src.imports_torch() or not 1 <= line1 <= len(lines):
        return []
    found = [
        *_logging_plans(b, src, line1, inlined or {}),
        _capture_scalar_plan(b, src, line1),
        _where_plan(b, src, line1),
        _disable_helper_plan(b, src, line1),
    ]
    return [p for p in found if p is not None]


# -- causes --fix: every plan for the run's causes, on the files as they are now ----------------


def _site_plan(number: int, plan: Plan, file: str, lines: Sequence[str], cwd: str) -> typed.SitePlan:
    path = relative(file, cwd) if cwd else os.path.basename(file)
    after = apply_plan(lines, plan)
    before_text, after_text = [line + "\n" for line in lines], [line + "\n" for line in after]
    return typed.SitePlan(
        cause=number,
        fix_kind=plan.kind,
        title=plan.title,
        file=file,
        path=path,
        line=plan.line,
        keeps_behaviour=plan.keeps_behaviour,
        preferred=plan.preferred,
        diff="".join(difflib.unified_diff(before_text, after_text, f"a/{path}", f"b/{path}")),
        verified_by=plan.verified_by,
    )


def _now_at(lines: Sequence[str], line: int, code: str | None) -> bool:
    """Whether ``line`` still holds the recorded ``code`` (a plan is made only there)."""
    return 1 <= line <= len(lines) and (not code or lines[line - 1].strip() == code.strip())


def site_plans(run: Run) -> typed.SitePlansReport:
    """Every plan the inspector makes for the run's causes (``causes --fix``), on the user
    files under the run's directory as they are now — the plans the editor offers as quick
    fixes: a cause's one fix, the fixes of a break site, mark_dynamic before the call that
    recompiled and ``dynamic=True``. A finding whose line no longer holds what was recorded
    there gets none (the file changed since the run)."""
    from dyn_inspect.inspector.reports.findings import build_index
    from dyn_inspect.inspector.workspace import Workspace

    found = causes(run.model)
    cwd = run_cwd(run.model) or ""
    index = build_index(run, Workspace.for_run([Path(cwd or os.getcwd())], run))
    by_break = {c.break_group.key: n for n, c in enumerate(found, 1) if c.break_group is not None}
    by_title = {c.title: n for n, c in enumerate(found, 1) if c.kind == "recompile"}
    by_cid: dict[str, int] = {}
    for n, c in enumerate(found, 1):
        for r in c.recompiles:
            by_cid.setdefault(r.cid, n)
    out: list[tuple[int, int, typed.SitePlan]] = []

    def text_of(file: str) -> list[str] | None:
        text = read_source(file)
        return None if text is None else text.splitlines()

    def add(number: int, file: str, lines: Sequence[str], plan: Plan | None) -> None:
        if plan is not None:
            out.append((number, plan.line, _site_plan(number, plan, file, lines, cwd)))

    for ff in index.files.values():
        for b in ff.breaks:
            lines = text_of(b.loc.file)
            if b.key in by_break and lines is not None and _now_at(lines, b.loc.line, b.loc.code):
                for p in break_plans(b, lines, b.loc.line, index.inlined_logging):
                    add(by_break[b.key], b.loc.file, lines, p)
        for cf in ff.causes:
            lines = text_of(cf.loc.file)
            if cf.title in by_title and lines is not None and _now_at(lines, cf.loc.line, cf.loc.code):
                add(by_title[cf.title], cf.loc.file, lines, cause_plan(cf, lines, cf.loc.line))
        for fn in ff.functions:
            number = next((by_cid[s.cid] for s in fn.steps if s.cid in by_cid), None)
            lines = text_of(fn.file)
            if number is None or lines is None or not _now_at(lines, fn.def_line, None):
                continue
            call = fn.call_site
            call_lines = text_of(call.file) if call is not None else None
            if call is not None and call_lines is not None and _now_at(call_lines, call.line, call.code):
                add(number, call.file, call_lines, mark_dynamic_plan(fn, lines, fn.def_line, call_lines, call.line))
            add(number, fn.file, lines, dynamic_scalar_plan(fn, lines, fn.def_line))
    out.sort(key=lambda t: (t[0], t[2].path, t[1]))
    return typed.SitePlansReport(run=str(run.path), plans=[p for _, _, p in out])
