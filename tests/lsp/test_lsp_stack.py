"""Issue 14: frames inside torch/nn/modules (``Module.__call__``'s ``_wrapped_call_impl`` /
``_call_impl``, two per module call) collapse to one entry in a break's user stack — in
the diagnostic's related information and in the hover. The real server, on the recorded
example (``compiled(x)`` calls an ``nn.Module``: four such frames between ``main`` and
``forward``)."""

from __future__ import annotations

from lsprotocol import types
from pytest_lsp import LanguageClient

from corpus_support import EXAMPLES
from dyn_inspect.inspector.run import Run
from lsp_support import corpus_options, diagnostics, line_of, lsp_client_fixture, open_doc, start

client = lsp_client_fixture()
TRAIN = EXAMPLES / "train.py"


async def test_nn_module_frames_collapse_in_the_user_stack(client: LanguageClient, example_run: Run) -> None:
    await start(client, EXAMPLES, corpus_options(example_run))
    u = open_doc(client, TRAIN)
    found = await diagnostics(client, u, 3)
    branch_line = line_of(TRAIN, "if h.mean() > 0.5:")
    (branch,) = [d for d in found if d.range.start.line == branch_line]
    # recorded: <module>, main, 4 frames in torch/nn/modules/module.py, forward
    raw = next(g.first.user_stack for g in example_run.model.break_groups() if g.loc.line == branch_line + 1)
    assert sum("/torch/nn/modules/" in f.file for f in raw) == 4 and len(raw) == 7
    shown = [r.message for r in branch.related_information or []]
    assert len(shown) == 4
    assert shown[0].startswith("1. <module>") and shown[1].startswith("2. main: ")
    assert shown[2] == "3–6. 4 frames inside torch/nn/modules (_wrapped_call_impl, _call_impl)"
    assert shown[3].startswith("7. forward: if h.mean() > 0.5:")

    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(u), branch.range.start))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert "**User stack** (outermost first):" in text
    assert "- 3–6. `module.py:" in text and "4 frames inside torch/nn/modules" in text
    assert "_call_impl" not in text.replace("(_wrapped_call_impl, _call_impl)", "")  # said once, collapsed
    assert f"- 7. `train.py:{branch_line + 1}` `forward`" in text
