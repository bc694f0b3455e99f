"""Code actions: quick fixes where the change is mechanical and safe, plus commands.

Every fix title says what the edit does to the program: "…: output kept" / "behaviour
kept" when the program does the same thing with fewer breaks or compiles, "…: output lost"
or "moves the break" when it does not; the behaviour-keeping fix of a finding is the
preferred one (``isPreferred``). Each was checked on torch 2.13 by recording a program, the
fix applied to a copy, and comparing breaks, recompiles and stdout
(tests/lsp/test_lsp_quick_fixes.py). Fixes (each offered only when the current text parses and
the edit is unambiguous):

- a root cause of recompiles (``CauseFinding``) → its one fix at its site, e.g.
  ``torch._dynamo.mark_dynamic(x, 0)`` right after the line that makes ``x``, or, for a
  compiled optimizer step recompiling on its float lr, ``lr=torch.tensor(0.01)`` in the
  optimizer's constructor;
- size-mismatch recompile → insert ``torch._dynamo.mark_dynamic(<arg>, <dim>)`` before the
  call that recompiled it, when the guarded parameter is passed there as a plain name;
- a Python int/float parameter specialized and changed → ``dynamic=True`` on the function's
  own ``@torch.compile`` decorator;
- logging/print graph break → (preferred) add the function to
  ``torch._dynamo.config.reorderable_logging_functions`` after the file's imports (the
  call then runs after the graph: output kept), or wrap the call in
  ``if not torch.compiler.is_compiling():`` (the compiled code never prints: output lost);
- ``.item()`` graph break → ``torch._dynamo.config.capture_scalar_outputs = True`` after
  the imports (Dynamo traces the scalar instead of breaking);
- data-dependent ``if`` whose branches each assign one name → ``name = torch.where(cond,
  then, else)`` (both branches are computed: labelled for review, not preferred);
- a break inside a helper that Dynamo inlined → ``@torch.compiler.disable`` on it, titled
  as what it is: torch then breaks at the call site instead (GB0098), the break moves.

Every fix needs ``import torch`` at the top of the edited file (it is never added: the
user's import style is theirs).

Commands: "show in TUI" (``dynInspect.showInTui``) and "export bug report"
(``dynInspect.exportBugReport``) on any dyn-inspect finding.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from lsprotocol import types

from dyn_inspect.inspector.outputs.lsp import SERVER_COMMANDS
from dyn_inspect.inspector.reports.findings import BreakFinding, CauseFinding, FunctionFindings, logging_callee
from dyn_inspect.lsp.documents import TextView
from dyn_inspect.lsp.placement import Placed, place_function
from dyn_inspect.lsp.source_lines import relocate

SHOW_IN_TUI = SERVER_COMMANDS["showInTui"]
EXPORT_BUG_REPORT = SERVER_COMMANDS["exportBugReport"]

ViewOf = Callable[[str], "TextView | None"]


@dataclass
class Parsed:
    view: TextView
    tree: ast.Module

    @classmethod
    def of(cls, view: TextView | None) -> Parsed | None:
        if view is None:
            return None
        try:
            return cls(view, ast.parse("\n".join(view.lines) + "\n"))
        except (SyntaxError, ValueError, RecursionError):
            return None  # mid-edit or not Python: no edits offered

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

    def function(self, name: str, line1: int | None = None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """``def name`` at ``line1`` (its def line), or the innermost one containing it."""
        found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                if line1 is None or node.lineno == line1 or node.lineno <= line1 <= (node.end_lineno or node.lineno):
                    found.append(node)
        if not found:
            return None
        return max(found, key=lambda n: n.lineno)

    def after_imports(self) -> int:
        """0-based line after the last top-level import (after the docstring when none)."""
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
        text = self.view.lines[line1 - 1]
        return text[: len(text) - len(text.lstrip())]


def _insert(view: TextView, line0: int, text: str) -> types.TextEdit:
    pos = types.Position(line0, 0)
    return types.TextEdit(types.Range(pos, pos), text)


def _edit(view: TextView, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=view.uri, version=view.version),
                edits=edits,
            )
        ]
    )


def _fix(title: str, edit: types.WorkspaceEdit, diagnostic: types.Diagnostic | None, preferred: bool = False) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic] if diagnostic is not None else None,
        edit=edit,
        is_preferred=preferred or None,
    )


# -- recompiles: mark_dynamic ----------------------------------------------------------


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
    pool = named or calls
    names = {a for a in (arg_of(c) for c in pool) if a is not None}
    return names.pop() if len(names) == 1 else None


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _recorded_site(fn: FunctionFindings, view_of: ViewOf, param: str, index: int) -> tuple[Parsed, ast.stmt, str] | None:
    """The statement at the call site torch recorded, and the name passed there."""
    if fn.call_site is None:
        return None
    parsed = Parsed.of(view_of(fn.call_site.file))
    if parsed is None:
        return None
    line1 = relocate(parsed.view.lines, fn.call_site.line, fn.call_site.code)
    stmt = parsed.statement_at(line1) if line1 is not None else None
    arg = _call_arg(stmt, line1, fn.name, param, index) if stmt is not None and line1 is not None else None
    return (parsed, stmt, arg) if stmt is not None and arg is not None else None


def mark_dynamic_fix(
    fn: FunctionFindings, fn_view: TextView, view_of: ViewOf, diagnostic: types.Diagnostic | None
) -> types.CodeAction | None:
    step = next((s for s in fn.steps if s.part is None and s.kind == "size" and s.source and s.dim is not None), None)
    if step is None or step.source is None or step.dim is None:
        return None
    fn_parsed = Parsed.of(fn_view)
    def_at = place_function(fn_view.lines, fn)
    node = fn_parsed.function(fn.name, def_at) if fn_parsed is not None and def_at is not None else None
    if node is None or fn_parsed is None:
        return None
    params = [a.arg for a in node.args.posonlyargs + node.args.args]
    kwonly = [a.arg for a in node.args.kwonlyargs]
    if step.source not in params and step.source not in kwonly:
        return None  # a local or a stack value: nothing to mark at the call site
    index = params.index(step.source) if step.source in params else -1
    if index >= 0 and params and params[0] in ("self", "cls"):
        index -= 1  # bound method / module call: self is not in the call's arguments
    # (torch's stack may omit a direct caller: inspector.analysis.causes then finds the
    # call, and the root-cause diagnostic carries the fix)
    site = _recorded_site(fn, view_of, step.source, index)
    if site is None:
        return None
    parsed, stmt, arg = site
    if not parsed.imports_torch():
        return None
    snippet = f"torch._dynamo.mark_dynamic({arg}, {step.dim})"
    edit = _edit(parsed.view, [_insert(parsed.view, stmt.lineno - 1, f"{parsed.indent(stmt.lineno)}{snippet}\n")])
    return _fix(f"Insert `{snippet}` before the call: one graph for every size, behaviour kept", edit, diagnostic, preferred=True)


def _replace(view: TextView, line1: int, col: int, end_line1: int, end_col: int, text: str) -> types.TextEdit:
    """Replace [``line1``:``col``, ``end_line1``:``end_col``) (1-based lines, code points)."""
    start = types.Position(line1 - 1, view.codec.client_num_units(view.lines[line1 - 1][:col]))
    end = types.Position(end_line1 - 1, view.codec.client_num_units(view.lines[end_line1 - 1][:end_col]))
    return types.TextEdit(types.Range(start, end), text)


def _char_col(view: TextView, line1: int, byte_col: int) -> int:
    """ast's UTF-8 byte column as a code-point column of the current text."""
    return len(view.lines[line1 - 1].encode("utf-8")[:byte_col].decode("utf-8", "ignore"))


def _function_node(fn: FunctionFindings, fn_view: TextView) -> tuple[Parsed, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    parsed = Parsed.of(fn_view)
    def_at = place_function(fn_view.lines, fn)
    node = parsed.function(fn.name, def_at) if parsed is not None and def_at is not None else None
    return (parsed, node) if parsed is not None and node is not None else None


def _is_torch_compile(expr: ast.expr) -> bool:
    return ast.unparse(expr) == "torch.compile"


def dynamic_scalar_fix(fn: FunctionFindings, fn_view: TextView, diagnostic: types.Diagnostic | None) -> types.CodeAction | None:
    """A Python number parameter specialized and changed → ``dynamic=True`` on the
    function's own ``@torch.compile`` (one graph for every value; checked on torch 2.13)."""
    step = next((s for s in fn.steps if s.part is None and s.kind == "scalar" and s.source), None)
    found = _function_node(fn, fn_view)
    if step is None or found is None or step.source is None:
        return None
    parsed, node = found
    params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    if step.source not in params or not parsed.imports_torch():
        return None  # a stack value or an attribute: no decorator argument reaches it
    compiles = [d for d in node.decorator_list if _is_torch_compile(d) or isinstance(d, ast.Call) and _is_torch_compile(d.func)]
    if len(compiles) != 1:
        return None
    d = compiles[0]
    view = parsed.view
    if d.end_lineno is None or d.end_col_offset is None:
        return None
    if isinstance(d, ast.Call):
        if any(kw.arg == "dynamic" or kw.arg is None for kw in d.keywords):
            return None  # dynamic= already said (or hidden in **kwargs): the user's choice
        line1, col = d.end_lineno, _char_col(view, d.end_lineno, d.end_col_offset) - 1  # before ")"
        sep = ", " if d.args or d.keywords else ""
        edit = _replace(view, line1, col, line1, col, f"{sep}dynamic=True")
    else:
        line1 = d.end_lineno
        col = _char_col(view, line1, d.end_col_offset)
        edit = _replace(view, line1, col, line1, col, "(dynamic=True)")
    return _fix(
        f"Compile `{fn.name}` with `dynamic=True`: one graph for every value of `{step.source}`, behaviour kept",
        _edit(view, [edit]),
        diagnostic,
        preferred=True,
    )


# -- graph breaks: logging, helpers ----------------------------------------------------


def logging_fixes(
    b: BreakFinding, parsed: Parsed, line1: int, diagnostic: types.Diagnostic | None, inlined: Mapping[str, Sequence[str]] | None = None
) -> list[types.CodeAction]:
    """``inlined``: callee → the inlined helpers of the run whose calls of it broke the graph
    (``RunIndex.inlined_logging``). torch 2.13 drops a reordered call made inside an
    inlined function (checked: the print never runs), so registering the callee loses
    their output: the reorder fix says so there, and is not offered on such a break."""
    if not b.is_logging or b.origin is not None or not parsed.imports_torch():
        return []
    stmt = parsed.statement_at(line1)
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.lineno == line1 == stmt.end_lineno):
        return []
    callee = logging_callee(stmt.value)
    if callee is None:
        return []
    view = parsed.view
    text = view.lines[line1 - 1]
    if ";" in text[: stmt.col_offset] or text[stmt.end_col_offset or 0 :].split("#", 1)[0].strip():
        return []  # another statement shares the line
    indent = parsed.indent(line1)
    out: list[types.CodeAction] = []
    wrapped = f"{indent}if not torch.compiler.is_compiling():\n{indent}    {text.lstrip()}"
    whole = types.Range(types.Position(line1 - 1, 0), types.Position(line1 - 1, view.codec.client_num_units(text)))
    out.append(
        _fix(
            # The compiled code is traced with is_compiling() true and never runs the call.
            f"Skip `{callee}(...)` while compiling: output lost (wrap in `if not torch.compiler.is_compiling():`)",
            _edit(view, [types.TextEdit(whole, wrapped)]),
            diagnostic,
        )
    )
    registration = f"torch._dynamo.config.reorderable_logging_functions.add({callee})"
    if b.helper is None and not any(registration in line for line in view.lines):
        at = parsed.after_imports()
        helpers = sorted(set((inlined or {}).get(callee, ())))
        if helpers:
            named = ", ".join(f"`{h}`" for h in helpers[:3]) + (" …" if len(helpers) > 3 else "")
            effect = f"output kept here, output lost in inlined {named} (torch drops reordered calls inside inlined functions)"
        else:
            effect = "output kept"
        out.append(
            _fix(
                f"Let Dynamo reorder `{callee}`: {effect} (add it to torch._dynamo.config.reorderable_logging_functions)",
                _edit(view, [_insert(view, at, f"{registration}\n")]),
                diagnostic,
                preferred=not helpers,
            )
        )
    return out


def disable_helper_fix(b: BreakFinding, parsed: Parsed, line1: int, diagnostic: types.Diagnostic | None) -> types.CodeAction | None:
    if b.helper is None or b.origin is not None or not parsed.imports_torch():
        return None
    node = parsed.function(b.helper, line1)
    if node is None or not (node.lineno <= line1 <= (node.end_lineno or node.lineno)):
        return None
    for d in node.decorator_list:
        if "compiler.disable" in ast.unparse(d) or "_dynamo.disable" in ast.unparse(d):
            return None
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    indent = parsed.indent(node.lineno)
    edit = _edit(parsed.view, [_insert(parsed.view, first - 1, f"{indent}@torch.compiler.disable\n")])
    # Checked on torch 2.13: the caller's graph then breaks at the call instead (GB0098,
    # "Skip calling torch.compiler.disable()d function"): as many graphs as before.
    return _fix(
        f"Add `@torch.compiler.disable` to `{b.helper}`: moves the break to the call site (GB0098), does not remove it", edit, diagnostic
    )


CAPTURE_SCALARS = "torch._dynamo.config.capture_scalar_outputs = True"


def capture_scalar_fix(b: BreakFinding, parsed: Parsed, line1: int, diagnostic: types.Diagnostic | None) -> types.CodeAction | None:
    """``.item()`` break → let Dynamo trace the scalar (torch's own hint names the flag)."""
    e = b.event
    said = " ".join([e.gb_type, e.explanation, *e.hints])
    if b.origin is not None or "capture_scalar_outputs" not in said or not parsed.imports_torch():
        return None
    stmt = parsed.statement_at(line1)
    if stmt is None or not any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "item" and n.lineno == line1
        for n in ast.walk(stmt)
    ):
        return None
    view = parsed.view
    if any("capture_scalar_outputs" in line for line in view.lines):
        return None  # already set (to something): not ours to flip
    return _fix(
        "Let Dynamo trace `.item()`: behaviour kept (set `torch._dynamo.config.capture_scalar_outputs = True` after the imports)",
        _edit(view, [_insert(view, parsed.after_imports(), f"{CAPTURE_SCALARS}\n")]),
        diagnostic,
        preferred=True,
    )


def _assigned_name(body: list[ast.stmt]) -> tuple[str, ast.expr] | None:
    if len(body) != 1 or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1:
        return None
    target = body[0].targets[0]
    return (target.id, body[0].value) if isinstance(target, ast.Name) else None


def where_fix(b: BreakFinding, parsed: Parsed, line1: int, diagnostic: types.Diagnostic | None) -> types.CodeAction | None:
    """``if <comparison>: n = a [else: n = c]`` on a tensor → ``n = torch.where(cond, a, c)``.

    Both branches are then computed and the value selected per element, so it is the
    same result only when the branches have no side effects and broadcast: a skeleton to
    review, never the preferred fix."""
    e = b.event
    if b.origin is not None or not e.gb_type.lower().startswith("data-dependent branching") or not parsed.imports_torch():
        return None
    stmt = parsed.statement_at(line1)
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
    view = parsed.view
    end = stmt.end_lineno or stmt.lineno
    indent = parsed.indent(stmt.lineno)
    code = f"{indent}{name} = torch.where({ast.unparse(stmt.test)}, {ast.unparse(value)}, {ast.unparse(otherwise)})"
    edit = _replace(view, stmt.lineno, 0, end, len(view.lines[end - 1]), code)
    return _fix(
        f"Rewrite the `if` as `{name} = torch.where(...)`: same result, both branches computed (review the rewrite)",
        _edit(view, [edit]),
        diagnostic,
    )


def cause_fix(c: CauseFinding, parsed: Parsed, line1: int, diagnostic: types.Diagnostic | None) -> types.CodeAction | None:
    """The root cause's one fix, at its site (``line1``: where the site is now)."""
    view = parsed.view
    if not parsed.imports_torch():
        return None
    if c.replaces is not None and c.replacement is not None:
        # `lr=0.01` on the site's line as it is now (the literal after `lr=`, once)
        text = view.lines[line1 - 1]
        found = [m for m in re.finditer(rf"\blr\s*=\s*({re.escape(c.replaces)})(?![\w.])", text)]
        if len(found) != 1:
            return None
        start, end = found[0].span(1)
        edit = _edit(view, [_replace(view, line1, start, line1, end, c.replacement)])
        return _fix(f"Give the optimizer a tensor lr (`{c.code}`): {c.effect}, behaviour kept", edit, diagnostic, preferred=True)
    code_lines = c.code.splitlines()
    lo, hi = max(0, line1 - 2 - len(code_lines)), min(len(view.lines), line1 + 1 + len(code_lines))
    if any(code_lines[0] in text for text in view.lines[lo:hi]):
        return None  # already applied
    at = line1 - 1 if c.before else line1
    edit = _edit(view, [_insert(view, at, "".join(f"{c.indent}{line}\n" for line in code_lines))])
    return _fix(f"Insert `{'; '.join(code_lines)}` {c.why}: one graph for every size, behaviour kept", edit, diagnostic, preferred=True)


# -- assembling ------------------------------------------------------------------------


def _diagnostic_for(p: Placed, diagnostics: Sequence[types.Diagnostic], view: TextView) -> types.Diagnostic | None:
    rng = view.range(p.span)
    for d in diagnostics:
        if d.source == "dyn-inspect" and d.range.start.line == rng.start.line:
            return d
    return None


def _overlaps(p: Placed, view: TextView, rng: types.Range) -> bool:
    return rng.start.line <= p.span.line <= rng.end.line


def code_actions(
    view: TextView,
    placed: list[Placed],
    params: types.CodeActionParams,
    run_path: str | None,
    view_of: ViewOf,
    inlined_logging: Mapping[str, Sequence[str]] | None = None,
) -> list[types.CodeAction | types.Command]:
    here = [p for p in placed if _overlaps(p, view, params.range)]
    if not here:
        return []
    parsed = Parsed.of(view)
    out: list[types.CodeAction] = []
    for p in here:
        diag = _diagnostic_for(p, params.context.diagnostics, view)
        if p.kind == "recompile" and isinstance(p.finding, FunctionFindings):
            fn = p.finding
            fixes = [mark_dynamic_fix(fn, view, view_of, diag), dynamic_scalar_fix(fn, view, diag)]
            out.extend(f for f in fixes if f is not None)
        elif p.kind == "cause" and isinstance(p.finding, CauseFinding) and parsed is not None:
            fix = cause_fix(p.finding, parsed, p.span.line + 1, diag)
            if fix is not None:
                out.append(fix)
        elif p.kind == "break" and isinstance(p.finding, BreakFinding) and parsed is not None:
            line1 = p.span.line + 1
            out.extend(logging_fixes(p.finding, parsed, line1, diag, inlined_logging))
            for break_fix in (capture_scalar_fix, where_fix, disable_helper_fix):
                fix = break_fix(p.finding, parsed, line1, diag)
                if fix is not None:
                    out.append(fix)
    only = params.context.only
    if only:
        out = [a for a in out if a.kind is not None and any(a.kind == k or str(a.kind).startswith(f"{k}.") for k in only)]
    result: list[types.CodeAction | types.Command] = list(out)
    if run_path is not None and not only:
        # Plain commands (the LSP allows them beside code actions): a CodeAction that only
        # carries a command is read back as a Command by some clients anyway.
        line1 = here[0].span.line + 1
        result.append(
            types.Command(title="dyn-inspect: show in the inspector (TUI)", command=SHOW_IN_TUI, arguments=[run_path, view.path, line1])
        )
        result.append(types.Command(title="dyn-inspect: export a bug report for this run", command=EXPORT_BUG_REPORT, arguments=[run_path]))
    return result
