"""Issue 14: a diagnostic on code edited since the run says "edited since the run — verify
to confirm" (the editor's text is compared with the file as the run saw it); untouched
lines keep their plain message. The real server over stdio, on the recorded example."""

from __future__ import annotations

from lsprotocol import types
from pytest_lsp import LanguageClient

from corpus_support import EXAMPLES
from dyn_inspect.inspector.run import Run
from lsp_support import corpus_options, diagnostics, lsp_client_fixture, open_doc, ours, replace_text, start, wait_for

client = lsp_client_fixture()
TRAIN = EXAMPLES / "train.py"
EDITED = "(edited since the run — verify to confirm)"
MADE = "        x, y = torch.randn(bs, 32, device=args.device), torch.randint(0, 10, (bs,), device=args.device)\n"
PRINT = '        print("forward done")  # print(): graph break\n'


async def test_edited_lines_say_so_and_untouched_lines_do_not(client: LanguageClient, example_run: Run) -> None:
    await start(client, EXAMPLES, corpus_options(example_run))
    source = TRAIN.read_text()
    u = open_doc(client, TRAIN)
    found = await diagnostics(client, u, 3)
    assert not any(EDITED in d.message for d in found)  # the text is the run's

    # what the user does next: the cause's fix inserted under the line that makes x, and
    # the print wrapped (both unsaved in the editor)
    assert MADE in source and PRINT in source
    edited = source.replace(MADE, MADE + "        torch._dynamo.mark_dynamic(x, 0)\n").replace(
        PRINT, "        if not torch.compiler.is_compiling():\n    " + PRINT
    )
    replace_text(client, u, edited, 2)

    def marked() -> bool:
        return sum(EDITED in d.message for d in ours(client, u)) == 2

    await wait_for(marked, client, what="the edited marks")
    by_code = {d.code: d for d in ours(client, u)}
    assert set(by_code) == {"GB0170", "GB0059", "recompile-cause"}
    lines = edited.splitlines()
    cause, printed, branch = by_code["recompile-cause"], by_code["GB0059"], by_code["GB0170"]
    assert lines[cause.range.start.line] == MADE.rstrip("\n") and cause.message.endswith(EDITED)
    assert lines[printed.range.start.line].strip().startswith('print("forward done")') and printed.message.endswith(EDITED)
    assert EDITED not in branch.message  # its lines are as the run saw them
    assert branch.severity == types.DiagnosticSeverity.Warning

    # undoing the edits takes the marks away again
    replace_text(client, u, source, 3)
    await wait_for(lambda: len(ours(client, u)) == 3 and not any(EDITED in d.message for d in ours(client, u)), client, what="marks gone")
