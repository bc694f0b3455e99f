"""Apply and verify from the editor (issue 14, done-when): on a copy of the bundled
example, the LSP's quick fix for the batch-size recompiles is applied, the
``dynInspect.verify`` command re-runs the program under the recorder, and the editor then
shows 5 → 0 recompiles: the recompile note is gone and "fixed ✓ (verified run …)" marks
its line. Real compiles, the real server over stdio."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from corpus_support import EXAMPLES
from dyn_inspect.inspector.outputs.reports import VerifyReport
from inductor_pool import seed
from lsp_support import apply_edit, command, lsp_client_fixture, open_doc, ours, replace_text, start, strict, wait_for

client = lsp_client_fixture()
DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"


@pytest.mark.corpus
async def test_quick_fix_then_verify_shows_the_recompiles_gone(client: LanguageClient, tmp_path: Path) -> None:
    work = tmp_path / "example"
    shutil.copytree(EXAMPLES, work, ignore=shutil.ignore_patterns(".dyn-inspect", "__pycache__"))
    runs = tmp_path / "runs"
    env = {**os.environ, "DYN_INSPECT_NO_TUI": "1", "TORCHINDUCTOR_CACHE_DIR": seed(tmp_path / "inductor")}
    env.pop("DYN_INSPECT_RUNS_DIR", None)
    rec = subprocess.run([str(DYN_INSPECT), "--no-tui", "--runs-dir", str(runs), "train.py", "--steps", "4"], cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert rec.returncode == 0, rec.stderr[-2000:]

    await start(client, work, {"dynInspect": {"runsDir": str(runs)}})
    train = work / "train.py"
    u = open_doc(client, train)
    await wait_for(lambda: any("Recompiled" in d.message for d in ours(client, u)), client, what="the recompile note", timeout=120)
    note = next(d for d in ours(client, u) if "Recompiled" in d.message)
    acts = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(u), note.range, types.CodeActionContext(diagnostics=[note]))
    )
    fix = next(a for a in acts or [] if isinstance(a, types.CodeAction) and "mark_dynamic" in a.title)
    verify = next(a for a in acts or [] if isinstance(a, types.Command) and a.command == "dynInspect.verify")
    train.write_text(apply_edit(train.read_text(), fix.edit, u))  # what the editor saves

    verdict = await command(client, verify.command, *(verify.arguments or []))
    assert verdict["before"]["recompiles"] == 5 and verdict["after"]["recompiles"] == 0, verdict
    # the typed output (inspector/outputs), the same in the new run's verify.json
    assert strict(verdict, VerifyReport) == strict((Path(verdict["after_run"]) / "verify.json").read_text(), VerifyReport)
    assert any("x.shape[0]" in c["title"] for c in verdict["fixed"])
    assert not verdict["new"]

    def shown() -> bool:
        diags = ours(client, u)
        return not any("Recompiled" in d.message for d in diags) and any(d.message.startswith("fixed ✓ (verified run") for d in diags)

    await wait_for(shown, client, what="the verified state", timeout=120)
    hint = next(d for d in ours(client, u) if d.message.startswith("fixed ✓"))
    assert hint.severity == types.DiagnosticSeverity.Hint and hint.range.start.line == note.range.start.line
    # the breaks were not the fix's business: still shown, marked as still there
    assert any("still there after the fix" in d.message for d in ours(client, u))
    assert any("fixed ✓" in m.message for m in client.messages)  # window/showMessage

    # Two lines added above: the hint moves with its line, as the warnings do (issue 28 #8:
    # it stayed on the old line number).
    def hint_lines() -> list[int]:
        return sorted(d.range.start.line for d in ours(client, u) if d.message.startswith("fixed ✓"))

    before = hint_lines()
    replace_text(client, u, "# two lines\n# added above\n" + train.read_text(), version=2)
    await wait_for(lambda: hint_lines() == [line + 2 for line in before], client, what="the hints on their moved lines", timeout=120)
