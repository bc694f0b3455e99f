"""Code actions: the inspector's fix plans as quick fixes, plus commands.

Every fix is a ``Plan`` of ``inspector/reports/fix_plans.py`` — its kind (verified: gated
by ``inspector/analysis/fix_kinds.VERIFIED``), title, edits, whether it keeps the
program's behaviour and whether it is the finding's preferred fix (``isPreferred``). The
plans are made on the live buffer's text, at the line where placement shows the finding
now; this module only anchors them: it finds that text and line (the call site of a
recompile may be in another document, ``view_of``), and translates each plan's edits
(1-based lines, code-point columns) into the client's positions and a ``WorkspaceEdit`` of
that document's version. The plans' titles, edits and checks are tested by
tests/lsp/test_lsp_quick_fixes.py and the fix corpus (tests/inspector/test_fix_corpus.py).

Commands: "show in TUI" (``dynInspect.showInTui``) and "export bug report"
(``dynInspect.exportBugReport``) on any dyn-inspect finding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from lsprotocol import types

from dyn_inspect.inspector.outputs.lsp import SERVER_COMMANDS
from dyn_inspect.inspector.reports import fix_plans
from dyn_inspect.inspector.reports.findings import BreakFinding, CauseFinding, FunctionFindings
from dyn_inspect.lsp.documents import TextView
from dyn_inspect.lsp.placement import Placed, place_function
from dyn_inspect.lsp.source_lines import relocate

SHOW_IN_TUI = SERVER_COMMANDS["showInTui"]
EXPORT_BUG_REPORT = SERVER_COMMANDS["exportBugReport"]

ViewOf = Callable[[str], "TextView | None"]


def _edit(view: TextView, plan: fix_plans.Plan) -> types.WorkspaceEdit:
    """The plan's edits (made on ``view``'s text) in the client's position encoding."""
    edits = [
        types.TextEdit(types.Range(view.position(e.line - 1, e.col), view.position(e.end_line - 1, e.end_col)), e.text) for e in plan.edits
    ]
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=view.uri, version=view.version),
                edits=edits,
            )
        ]
    )


def _action(view: TextView, plan: fix_plans.Plan, diagnostic: types.Diagnostic | None) -> types.CodeAction:
    return types.CodeAction(
        title=plan.title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic] if diagnostic is not None else None,
        edit=_edit(view, plan),
        is_preferred=plan.preferred or None,
    )


def _recompile_actions(
    fn: FunctionFindings, view: TextView, view_of: ViewOf, diagnostic: types.Diagnostic | None
) -> list[types.CodeAction]:
    """mark_dynamic at the recorded call site (where it is now, in its own document) and
    ``dynamic=True`` on the function's decorator."""
    def_at = place_function(view.lines, fn)
    if def_at is None:
        return []
    out: list[types.CodeAction] = []
    call_view = view_of(fn.call_site.file) if fn.call_site is not None else None
    if fn.call_site is not None and call_view is not None:
        call_at = relocate(call_view.lines, fn.call_site.line, fn.call_site.code)
        plan = fix_plans.mark_dynamic_plan(fn, view.lines, def_at, call_view.lines, call_at) if call_at is not None else None
        if plan is not None:
            out.append(_action(call_view, plan, diagnostic))
    plan = fix_plans.dynamic_scalar_plan(fn, view.lines, def_at)
    if plan is not None:
        out.append(_action(view, plan, diagnostic))
    return out


def _diagnostic_for(p: Placed, diagnostics: Sequence[types.Diagnostic], view: TextView) -> types.Diagnostic | None:
    rng = view.range(p.span)
    for d in diagnostics:
        if d.source == "dyn-inspect" and d.range.start.line == rng.start.line:
            return d
    return None


def code_actions(
    view: TextView,
    placed: list[Placed],
    params: types.CodeActionParams,
    run_path: str | None,
    view_of: ViewOf,
    inlined_logging: Mapping[str, Sequence[str]] | None = None,
) -> list[types.CodeAction | types.Command]:
    """The quick fixes and commands for the findings placed on ``params.range``'s lines.
    ``inlined_logging``: ``RunIndex.inlined_logging`` (the reorder fix's title says whose
    output it loses)."""
    here = [p for p in placed if params.range.start.line <= p.span.line <= params.range.end.line]
    if not here:
        return []
    out: list[types.CodeAction] = []
    for p in here:
        diag = _diagnostic_for(p, params.context.diagnostics, view)
        line1 = p.span.line + 1
        if p.kind == "recompile" and isinstance(p.finding, FunctionFindings):
            out.extend(_recompile_actions(p.finding, view, view_of, diag))
        elif p.kind == "cause" and isinstance(p.finding, CauseFinding):
            plan = fix_plans.cause_plan(p.finding, view.lines, line1)
            out.extend([_action(view, plan, diag)] if plan is not None else [])
        elif p.kind == "break" and isinstance(p.finding, BreakFinding):
            out.extend(_action(view, plan, diag) for plan in fix_plans.break_plans(p.finding, view.lines, line1, inlined_logging))
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
