"""The language server over stdio on the recorded corpus: exact diagnostics per file,
hover, code lenses, code actions applied to the text, commands and settings.

Expected ranges come from the corpus sources (the expression on the marked line), counts
and types from what each corpus program does; nothing is copied from the server's output.
"""

from __future__ import annotations

import re

from lsprotocol import types
from pytest_lsp import LanguageClient

from corpus_support import CORPUS, EXAMPLES, marker_line
from dyn_inspect.inspector.run import Run
from lsp_support import (
    apply_edit,
    code_span,
    command,
    corpus_options,
    diagnostics,
    line_of,
    lsp_client_fixture,
    open_doc,
    ours,
    span_of,
    start,
    uri,
    wait_for,
)

client = lsp_client_fixture()

BREAKS = CORPUS / "breaks.py"
HELPERS = CORPUS / "corpus_helpers.py"
RECOMPILES = CORPUS / "recompiles.py"
LIMIT = CORPUS / "limit.py"
TRAIN = EXAMPLES / "train.py"
MODEL_UTILS = EXAMPLES / "model_utils.py"

# marker -> (the breaking expression on that line, gb id, a fragment of the break type)
BREAK_LINES = {
    "BREAK:branch": ("y.sum() > 0", "GB0170", "Data-dependent branching"),
    "BREAK:print": ('print("chatty")', "GB0059", "builtin operator"),
    "BREAK:builtin": ("torch.ones(1).tolist()", "GB0109", "tolist"),
    "BREAK:explicit": ("torch._dynamo.graph_break()", "GB0025", "graph_break()"),
}


def _pos(d: types.Diagnostic) -> types.Position:
    return d.range.start


async def _hover(client: LanguageClient, u: str, line0: int, character: int = 0) -> str | None:
    result = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(u), types.Position(line0, character)))
    if result is None:
        return None
    assert isinstance(result.contents, types.MarkupContent)
    return result.contents.value


async def _actions(client: LanguageClient, u: str, rng: types.Range, diags: list[types.Diagnostic]) -> list[types.CodeAction | types.Command]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(u), rng, types.CodeActionContext(diagnostics=diags))
    )
    return list(result or [])


def _fixes(acts: list[types.CodeAction | types.Command]) -> list[types.CodeAction]:
    return [a for a in acts if isinstance(a, types.CodeAction)]


# -- diagnostics -------------------------------------------------------------------------


async def test_graph_breaks_exact_ranges_codes_and_messages(client: LanguageClient, breaks_run: Run) -> None:
    await start(client, CORPUS, corpus_options(breaks_run))
    u = open_doc(client, BREAKS)
    found = await diagnostics(client, u, len(BREAK_LINES))
    expected = sorted(
        (marker_line(BREAKS, marker) - 1, expr, gb_id, fragment) for marker, (expr, gb_id, fragment) in BREAK_LINES.items()
    )
    for d, (line0, expr, gb_id, fragment) in zip(found, expected, strict=True):
        assert d.range == span_of(BREAKS, line0, expr), (d.message, expr)
        assert d.code == gb_id
        assert d.code_description is not None and d.code_description.href.endswith(f"/{gb_id.lower()}.html")
        assert d.severity == types.DiagnosticSeverity.Warning
        assert d.source == "dyn-inspect"
        # what the user wrote first ("`print(...)` can't be traced"), then torch's type
        assert d.message.startswith("Graph break: ") and fragment in " — ".join(d.message.split(" — ")[:2])
        # Each function is called twice but compiled once: the break is hit once.
        assert d.message.endswith("(1 hit)") and "\n" not in d.message
        # The user stack: from the module-level call down to the breaking line.
        stack = d.related_information or []
        assert [(r.location.uri, r.location.range.start.line) for r in stack][-1] == (u, line0)
        caller = d.related_information[0]
        name = {"BREAK:branch": "branchy", "BREAK:print": "chatty", "BREAK:builtin": "unsupported", "BREAK:explicit": "explicit"}
        marker = next(m for m, v in BREAK_LINES.items() if v[0] == expr)
        assert caller.location.range.start.line == line_of(BREAKS, f"    {name[marker]}(x)")
    # The line that calls the inlined helper is not a break of its own.
    assert all(d.range.start.line != marker_line(BREAKS, "CALLS:helper") - 1 for d in found)


async def test_break_inside_an_inlined_helper_is_shown_in_the_helper_file(client: LanguageClient, breaks_run: Run) -> None:
    await start(client, CORPUS, corpus_options(breaks_run))
    u = open_doc(client, HELPERS)
    (d,) = await diagnostics(client, u, 1)
    line0 = marker_line(HELPERS, "BREAK:helper_print") - 1
    assert d.range == span_of(HELPERS, line0, 'print("scaling", tuple(x.shape))')
    assert d.code == "GB0059"
    # Logged while inlined into with_helper and again as its own frame.
    assert d.message.endswith("(2 hits)")
    frames = [(r.location.uri, r.location.range.start.line) for r in d.related_information or []]
    assert (uri(BREAKS), marker_line(BREAKS, "CALLS:helper") - 1) in frames


async def test_recompiles_on_the_def_line_with_guards_and_suggestion(client: LanguageClient, recompiles_run: Run) -> None:
    await start(client, CORPUS, corpus_options(recompiles_run))
    u = open_doc(client, RECOMPILES)
    by_shape, by_dtype = await diagnostics(client, u, 2)
    assert by_shape.range == code_span(RECOMPILES, marker_line(RECOMPILES, "RECOMPILE:shape") - 1)
    assert by_dtype.range == code_span(RECOMPILES, marker_line(RECOMPILES, "RECOMPILE:dtype") - 1)
    for d in (by_shape, by_dtype):
        assert d.severity == types.DiagnosticSeverity.Information
        assert d.code == "recompile"
        # Called with sizes 4, 8, 16: one recompile (4 → 8), then dynamic. Dtypes: one.
        assert d.message.splitlines()[0].startswith(("Recompiled: `by_shape` compiled 2×", "Recompiled: `by_dtype` compiled 2×"))
    assert "size mismatch at index 0. expected 4, actual 8" in by_shape.message
    assert "mark_dynamic" in by_shape.message or "dynamic=True" in by_shape.message
    assert "dtype mismatch. expected Float, actual Double" in by_dtype.message


async def test_recompile_limit_is_a_warning(client: LanguageClient, limit_run: Run) -> None:
    await start(client, CORPUS, corpus_options(limit_run))
    u = open_doc(client, LIMIT)
    (d,) = await diagnostics(client, u, 1)
    assert d.range == code_span(LIMIT, marker_line(LIMIT, "RECOMPILE:limit") - 1)
    assert d.severity == types.DiagnosticSeverity.Warning
    assert d.code == "recompile-limit"
    assert "recompile limit" in d.message and "eager" in d.message
    # recompile_limit = 2: compiled twice, then the third dtype gave up (a limit hit, no compile).
    assert "`limited` compiled 2×" in d.message


async def test_example_script_shows_exactly_its_breaks_and_the_recompile(client: LanguageClient, example_run: Run) -> None:
    """The issue's 'done when': squiggles on exactly the graph-breaking lines of the example
    and one note for its recompiles: the root cause, where the batch is made (issue 14)."""
    await start(client, EXAMPLES, corpus_options(example_run))
    u = open_doc(client, TRAIN)
    found = await diagnostics(client, u, 3)
    branch = line_of(TRAIN, "if h.mean() > 0.5:")
    printed = line_of(TRAIN, 'print("forward done")')
    made = line_of(TRAIN, "x, y = torch.randn(bs, 32")
    assert [d.range for d in found] == [
        span_of(TRAIN, branch, "h.mean() > 0.5"),
        span_of(TRAIN, printed, 'print("forward done")'),
        code_span(TRAIN, made),
    ]
    *breaks, cause = found
    assert cause.severity == types.DiagnosticSeverity.Information and cause.code == "recompile-cause"
    # Batch sizes 16 then 32: forward, the parts after its breaks (resume functions) and
    # the helper each recompile once — 5 recompiles, one cause, said once.
    assert cause.message.startswith("Recompiled 5× in 5 frames from one cause: `x.shape[0]` takes 16, 32")
    assert "Fix: `torch._dynamo.mark_dynamic(x, 0)` where `x` is made" in cause.message
    related = sorted((r.location.uri.rsplit("/", 1)[-1], r.location.range.start.line, r.message) for r in cause.related_information or [])
    forward = line_of(TRAIN, "def forward(")
    assert related[0] == ("model_utils.py", line_of(MODEL_UTILS, "def log_stats("), "recompiled here: `log_stats`")
    assert ("train.py", forward, "recompiled here: `forward`") in related
    assert sum("after its graph break at line" in r[2] for r in related) == 3
    assert all(d.severity == types.DiagnosticSeverity.Warning for d in breaks)
    # 4 steps: batch sizes 16, 32, 48, 16 → each break is hit by the two compiles.
    assert all(d.message.endswith("(2 hits)") for d in breaks)

    # the helper's recompile is the same cause: no note of its own there
    v = open_doc(client, MODEL_UTILS)
    (helper_break,) = await diagnostics(client, v, 1)
    assert helper_break.range == span_of(MODEL_UTILS, line_of(MODEL_UTILS, "print("), 'print("activations", tuple(h.shape))')


# -- hover ---------------------------------------------------------------------------------


async def test_hover_on_a_break_shows_reason_hints_link_and_kernels(client: LanguageClient, breaks_run: Run) -> None:
    await start(client, CORPUS, corpus_options(breaks_run))
    u = open_doc(client, BREAKS)
    await diagnostics(client, u, 4)
    line0 = marker_line(BREAKS, "BREAK:branch") - 1
    text = await _hover(client, u, line0, 10)
    assert text is not None
    assert "Data-dependent branching" in text
    assert "torch.cond" in text  # torch's hint for data-dependent control flow
    assert "gb0170.html" in text
    # `y.sum() > 0` is computed by a fused kernel that sums and compares.
    kernels = re.findall(r"- `(\w+)` — cpp; fused ops: ([\w., ]+)", text)
    assert any("aten.sum" in ops and "aten.gt" in ops for _, ops in kernels), text
    # An unmarked line answers nothing.
    assert await _hover(client, u, line_of(BREAKS, "x = torch.randn(16, 8)")) is None


async def test_hover_on_a_recompile_shows_failed_guards(client: LanguageClient, recompiles_run: Run) -> None:
    await start(client, CORPUS, corpus_options(recompiles_run))
    u = open_doc(client, RECOMPILES)
    await diagnostics(client, u, 2)
    text = await _hover(client, u, marker_line(RECOMPILES, "RECOMPILE:shape") - 1, 4)
    assert text is not None
    assert "Guards that failed" in text
    assert "tensor 'x' size mismatch at index 0. expected 4, actual 8" in text
    assert "torch._dynamo.mark_dynamic(x, 0)" in text


# -- code lens -----------------------------------------------------------------------------


async def test_code_lens_above_each_compiled_function(client: LanguageClient, breaks_run: Run) -> None:
    await start(client, CORPUS, corpus_options(breaks_run))
    u = open_doc(client, BREAKS)
    await diagnostics(client, u, 4)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(u)))
    names = ["branchy", "chatty", "unsupported", "with_helper", "explicit"]
    assert [lens.range.start.line for lens in lenses] == [line_of(BREAKS, f"def {n}(") for n in names]
    for lens in lenses:
        assert lens.command is not None
        # Each function compiled once and broke once (with_helper's break is in its helper).
        assert re.fullmatch(r"compiled 1× · 1 graph break · \d+ kernels? · \d+\.\d\d s compile", lens.command.title), lens.command.title
        assert lens.command.command == "dynInspect.showDetails"
        assert list(lens.command.arguments) == [str(BREAKS), lens.range.start.line + 1]
    details = await command(client, "dynInspect.showDetails", *lenses[0].command.arguments)
    assert details["found"] is True and details["function"] == "branchy"
    assert details["compiles"] == 1 and details["line"] == line_of(BREAKS, "def branchy(") + 1
    # rendered once, by the server: what VS Code's preview and Neovim's document show
    assert details["markdown"].startswith("# `branchy` — ") and "- Compiles: 1" in details["markdown"]
    assert (await command(client, "dynInspect.showDetails", str(BREAKS), 1))["found"] is False


async def test_code_lens_counts_recompiles(client: LanguageClient, recompiles_run: Run) -> None:
    await start(client, CORPUS, corpus_options(recompiles_run))
    u = open_doc(client, RECOMPILES)
    await diagnostics(client, u, 2)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(u)))
    assert len(lenses) == 2
    assert all(lens.command.title.startswith("compiled 2× · 0 graph breaks · ") for lens in lenses)


# -- code actions --------------------------------------------------------------------------


async def test_print_break_quick_fixes_give_the_expected_text(client: LanguageClient, breaks_run: Run) -> None:
    await start(client, CORPUS, corpus_options(breaks_run))
    u = open_doc(client, BREAKS)
    found = await diagnostics(client, u, 4)
    line0 = marker_line(BREAKS, "BREAK:print") - 1
    d = next(x for x in found if x.range.start.line == line0)
    acts = await _actions(client, u, d.range, [d])
    by_title = {a.title: a for a in _fixes(acts)}
    source = BREAKS.read_text()

    wrap = next(a for t, a in by_title.items() if "is_compiling" in t)
    assert wrap.kind == types.CodeActionKind.QuickFix and list(wrap.diagnostics or []) == [d]
    expected = source.replace(
        '    print("chatty")  # BREAK:print\n',
        '    if not torch.compiler.is_compiling():\n        print("chatty")  # BREAK:print\n',
    )
    assert apply_edit(source, wrap.edit, u) == expected

    reorder = next(a for t, a in by_title.items() if "reorderable_logging_functions" in t)
    expected = source.replace(
        "from corpus_helpers import noisy_scale\n",
        "from corpus_helpers import noisy_scale\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n",
    )
    assert apply_edit(source, reorder.edit, u) == expected

    commands = {a.command: list(a.arguments or []) for a in acts if isinstance(a, types.Command)}
    assert commands["dynInspect.showInTui"] == [str(breaks_run.path), str(BREAKS), line0 + 1]
    assert commands["dynInspect.exportBugReport"] == [str(breaks_run.path)]
    # the helper in corpus_helpers.py prints too: registering print loses that output
    assert "output lost in inlined `noisy_scale`" in reorder.title and not reorder.is_preferred
    # A break that is not a logging call gets no logging fix (only the torch.where rewrite).
    branch = next(x for x in found if x.range.start.line == marker_line(BREAKS, "BREAK:branch") - 1)
    assert [a.title.split(":")[0] for a in _fixes(await _actions(client, u, branch.range, [branch]))] == ["Rewrite the `if` as `y = torch.where(...)`"]


async def test_disable_the_inlined_helper(client: LanguageClient, breaks_run: Run) -> None:
    await start(client, CORPUS, corpus_options(breaks_run))
    u = open_doc(client, HELPERS)
    (d,) = await diagnostics(client, u, 1)
    acts = await _actions(client, u, d.range, [d])
    fix = next(a for a in _fixes(acts) if "torch.compiler.disable" in a.title)
    source = HELPERS.read_text()
    expected = source.replace("def noisy_scale(", "@torch.compiler.disable\ndef noisy_scale(")
    assert apply_edit(source, fix.edit, u) == expected


async def test_mark_dynamic_before_the_call_that_recompiled(client: LanguageClient, example_run: Run) -> None:
    await start(client, EXAMPLES, corpus_options(example_run))
    u = open_doc(client, TRAIN)
    note = next(d for d in await diagnostics(client, u, 3) if d.code == "recompile-cause")
    acts = await _actions(client, u, note.range, [note])
    fix = next(a for a in _fixes(acts) if "mark_dynamic" in a.title)
    assert fix.is_preferred and fix.title.startswith("Insert `torch._dynamo.mark_dynamic(x, 0)` where `x` is made")
    source = TRAIN.read_text()
    made = "        x, y = torch.randn(bs, 32, device=args.device), torch.randint(0, 10, (bs,), device=args.device)\n"
    # forward(self, x) recompiled on "tensor 'x' size mismatch at index 0"; main() makes x here.
    expected = source.replace(made, made + "        torch._dynamo.mark_dynamic(x, 0)\n")
    assert apply_edit(source, fix.edit, u) == expected


# -- commands and settings -----------------------------------------------------------------


async def test_summary_list_and_select_run(client: LanguageClient, breaks_run: Run, recompiles_run: Run) -> None:
    result = await start(client, CORPUS, corpus_options(breaks_run))
    advertised = set(result.capabilities.execute_command_provider.commands)
    assert advertised == {"dynInspect.selectRun", "dynInspect.listRuns", "dynInspect.summary", "dynInspect.showDetails", "dynInspect.showInTui", "dynInspect.verify"}
    # exportBugReport is answered (below) but not advertised: the VS Code extension owns a
    # UI command of that id, and advertised ids become VS Code commands.
    u = open_doc(client, BREAKS)
    await diagnostics(client, u, 4)
    # breaks.py has five break sites: four in breaks.py, one in its helper.
    summary = await command(client, "dynInspect.summary")
    assert {k: summary[k] for k in ("breaks", "recompiles", "run")} == {"breaks": 5, "recompiles": 0, "run": str(breaks_run.path)}
    (row,) = await command(client, "dynInspect.listRuns")
    assert row["path"] == str(breaks_run.path) and row["id"] == breaks_run.path.name
    assert row["breaks"] == 5 and row["recompiles"] == 0 and row["status"] == "finished"
    assert "breaks.py" in row["command"]

    # Another run (from another runs folder): breaks.py is cleared, recompiles.py marked.
    selected = await command(client, "dynInspect.selectRun", str(recompiles_run.path))
    assert selected["run"] == str(recompiles_run.path) and selected["recompiles"] == 2
    await diagnostics(client, u, 0)
    v = open_doc(client, RECOMPILES)
    await diagnostics(client, v, 2)
    assert (await command(client, "dynInspect.showInTui")) == f"dyn-inspect open {recompiles_run.path}"
    exported = await command(client, "dynInspect.exportBugReport")
    assert exported == f"dyn-inspect export {recompiles_run.path} -o {CORPUS / 'dyn-inspect-report.zip'}"


async def test_settings_severity_and_recompiles_toggle(client: LanguageClient, example_run: Run) -> None:
    # Top-level (not nested) initializationOptions are accepted too.
    await start(client, EXAMPLES, {"runsDir": str(example_run.path.parent), "graphBreakSeverity": "error", "showRecompiles": False})
    u = open_doc(client, TRAIN)
    found = await diagnostics(client, u, 2)
    assert all(d.severity == types.DiagnosticSeverity.Error and d.code == "GB0170" or d.code == "GB0059" for d in found)
    assert all(d.severity == types.DiagnosticSeverity.Error for d in found)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"dynInspect": {"graphBreakSeverity": "hint", "showRecompiles": True, "runsDir": str(example_run.path.parent)}})
    )
    await wait_for(lambda: len(ours(client, u)) == 3 and all(d.severity != types.DiagnosticSeverity.Error for d in ours(client, u)), client, what="republish with new settings")
    severities = sorted((d.code, d.severity) for d in ours(client, u))
    assert severities == [
        ("GB0059", types.DiagnosticSeverity.Hint),
        ("GB0170", types.DiagnosticSeverity.Hint),
        ("recompile-cause", types.DiagnosticSeverity.Information),
    ]
