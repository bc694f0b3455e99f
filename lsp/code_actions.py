"""Code actions: quick fixes where the change is mechanical and safe, plus commands.

Quick fixes (each offered only when the current text parses and the edit is unambiguous):
- size-mismatch recompile → insert ``torch._dynamo.mark_dynamic(<arg>, <dim>)`` before the
  call that recompiled it, when the guarded parameter is passed there as a plain name;
- logging/print graph break → wrap the call in ``if not torch.compiler.is_compiling():``,
  or (torch's own hint) add the function to
  ``torch._dynamo.config.reorderable_logging_functions`` after the file's imports;
- a break inside a helper that Dynamo inlined → add ``@torch.compiler.disable`` to it.
Every fix needs ``import torch`` at the top of the edited file (it is never added: the
user's import style is theirs).

Commands: "show in TUI" (``dynInspect.showInTui``) and "export bug report"
(``dynInspect.exportBugReport``) on any dyn-inspect finding.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lsprotocol import types

from dyn_inspect.lsp.documents import TextView
from dyn_inspect.lsp.findings import BreakFinding, FunctionFindings
from dyn_inspect.lsp.placement import Placed, place_function
from dyn_inspect.lsp.source_lines import relocate

SHOW_IN_TUI = "dynInspect.showInTui"
EXPORT_BUG_REPORT = "dynInspect.exportBugReport"
LOGGING_FUNCTIONS = {"debug", "info", "warning", "error", "critical", "exception", "log"}

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

    def callee(call: ast.Call) -> str | None:
        f = call.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None

    named = [c for c in calls if callee(c) == fn_name]
    pool = named or calls
    names = {a for a in (arg_of(c) for c in pool) if a is not None}
    return names.pop() if len(names) == 1 else None


def mark_dynamic_fix(fn: FunctionFindings, fn_view: TextView, view_of: ViewOf, diagnostic: types.Diagnostic | None) -> types.CodeAction | None:
    step = next((s for s in fn.steps if s.part is None and s.kind == "size" and s.source and s.dim is not None), None)
    if step is None or fn.call_site is None or step.source is None or step.dim is None:
        return None
    fn_parsed = Parsed.of(fn_view)
    def_at = place_function(fn_view.lines, fn)
    node = fn_parsed.function(fn.name, def_at) if fn_parsed is not None and def_at is not None else None
    if node is None:
        return None
    params = [a.arg for a in node.args.posonlyargs + node.args.args]
    kwonly = [a.arg for a in node.args.kwonlyargs]
    if step.source not in params and step.source not in kwonly:
        return None  # a local or a stack value: nothing to mark at the call site
    index = params.index(step.source) if step.source in params else -1
    if index >= 0 and params and params[0] in ("self", "cls"):
        index -= 1  # bound method / module call: self is not in the call's arguments
    site_view = view_of(fn.call_site.file)
    parsed = Parsed.of(site_view)
    if parsed is None or site_view is None or not parsed.imports_torch():
        return None
    line1 = relocate(site_view.lines, fn.call_site.line, fn.call_site.code)
    if line1 is None:
        return None
    stmt = parsed.statement_at(line1)
    if stmt is None:
        return None
    arg = _call_arg(stmt, line1, fn.name, step.source, index)
    if arg is None:
        return None
    snippet = f"torch._dynamo.mark_dynamic({arg}, {step.dim})"
    edit = _edit(site_view, [_insert(site_view, stmt.lineno - 1, f"{parsed.indent(stmt.lineno)}{snippet}\n")])
    return _fix(f"Insert `{snippet}` before the call (one graph for every size)", edit, diagnostic, preferred=True)


# -- graph breaks: logging, helpers ----------------------------------------------------


def _logging_callee(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Name) and f.id == "print":
        return "print"
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "logging" and f.attr in LOGGING_FUNCTIONS:
        return f"logging.{f.attr}"
    return None


def logging_fixes(b: BreakFinding, parsed: Parsed, line1: int, diagnostic: types.Diagnostic | None) -> list[types.CodeAction]:
    if not b.is_logging or b.origin is not None or not parsed.imports_torch():
        return []
    stmt = parsed.statement_at(line1)
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.lineno == line1 == stmt.end_lineno):
        return []
    callee = _logging_callee(stmt.value)
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
            f"Skip `{callee}(...)` while compiling (wrap in `if not torch.compiler.is_compiling():`)",
            _edit(view, [types.TextEdit(whole, wrapped)]),
            diagnostic,
        )
    )
    registration = f"torch._dynamo.config.reorderable_logging_functions.add({callee})"
    if not any(registration in line for line in view.lines):
        at = parsed.after_imports()
        out.append(
            _fix(
                f"Let Dynamo reorder `{callee}` calls (add it to torch._dynamo.config.reorderable_logging_functions)",
                _edit(view, [_insert(view, at, f"{registration}\n")]),
                diagnostic,
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
    return _fix(f"Add `@torch.compiler.disable` to `{b.helper}` (run it eagerly, outside the graph)", edit, diagnostic)


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
) -> list[types.CodeAction | types.Command]:
    here = [p for p in placed if _overlaps(p, view, params.range)]
    if not here:
        return []
    parsed = Parsed.of(view)
    out: list[types.CodeAction] = []
    for p in here:
        diag = _diagnostic_for(p, params.context.diagnostics, view)
        if p.kind == "recompile" and isinstance(p.finding, FunctionFindings):
            fix = mark_dynamic_fix(p.finding, view, view_of, diag)
            if fix is not None:
                out.append(fix)
        elif p.kind == "break" and isinstance(p.finding, BreakFinding) and parsed is not None:
            out.extend(logging_fixes(p.finding, parsed, p.span.line + 1, diag))
            fix = disable_helper_fix(p.finding, parsed, p.span.line + 1, diag)
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
        result.append(types.Command(title="dyn-inspect: show in the inspector (TUI)", command=SHOW_IN_TUI, arguments=[run_path, view.path, line1]))
        result.append(types.Command(title="dyn-inspect: export a bug report for this run", command=EXPORT_BUG_REPORT, arguments=[run_path]))
    return result
