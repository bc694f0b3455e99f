"""The server while things change: a run that grows, a new run, edits that move or remove
recorded lines, and the bad inputs (unknown and non-Python documents, no runs, corrupted
logs, a newer schema, a run deleted while open, bursts of edits)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from corpus_support import CORPUS, marker_line
from dyn_inspect.inspector.run import Run
from lsp_support import (
    command,
    copy_run,
    corpus_options,
    diagnostics,
    lsp_client_fixture,
    open_doc,
    ours,
    replace_text,
    span_of,
    start,
    uri,
    wait_for,
)

client = lsp_client_fixture()

BREAKS = CORPUS / "breaks.py"
RECOMPILES = CORPUS / "recompiles.py"


def _process_log(run: Run) -> Path:
    (log,) = [p for p in run.path.glob("p*.jsonl")]
    return log


def _messages(client: LanguageClient, fragment: str) -> list[str]:
    return [m.message for m in client.log_messages if fragment in m.message]


async def _hover(client: LanguageClient, u: str, line0: int) -> types.Hover | None:
    return await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(u), types.Position(line0, 0)))


# -- following a live run ------------------------------------------------------------------


async def test_republishes_as_the_log_grows_and_when_a_new_run_starts(
    client: LanguageClient, breaks_run: Run, recompiles_run: Run, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    live = copy_run(breaks_run.path, runs, logs=["launcher.jsonl"])
    (live / "launcher.jsonl").write_text((breaks_run.path / "launcher.jsonl").read_text().splitlines(keepends=True)[0])
    source_lines = _process_log(breaks_run).read_text().splitlines(keepends=True)
    breaks_at = [i for i, line in enumerate(source_lines) if '"kind":"graph_break"' in line]
    target = live / _process_log(breaks_run).name

    def append(upto: int) -> None:
        with open(target, "a") as f:
            done = append.written  # type: ignore[attr-defined]
            f.writelines(source_lines[done:upto])
        append.written = upto  # type: ignore[attr-defined]

    append.written = 0  # type: ignore[attr-defined]
    append(breaks_at[0])  # everything before the first graph break
    os.symlink(live.name, runs / "latest")

    await start(client, CORPUS, {"dynInspect": {"runsDir": str(runs)}})
    u = open_doc(client, BREAKS)
    await wait_for(lambda: u in client.diagnostics, client, what="the first publish")
    assert ours(client, u) == []

    append(breaks_at[1] + 1)  # the first two breaks (branchy's, chatty's)
    first_two = await diagnostics(client, u, 2)
    assert first_two[0].range == span_of(BREAKS, marker_line(BREAKS, "BREAK:branch") - 1, "y.sum() > 0")
    append(len(source_lines))  # the rest of the run, the helper's break included
    await diagnostics(client, u, 4)
    # Lens titles changed too: the client was asked to re-read them.
    await wait_for(lambda: client.code_lens_refreshes > 0, client, what="a code lens refresh")  # type: ignore[attr-defined]

    # A new run starts (latest moves): its findings replace the old ones, no restart.
    # Named to sort after the live run, as a run started later is: the recordings may come
    # from a cache in either order (the server orders runs by name, not by `latest`).
    newer = copy_run(recompiles_run.path, runs, name=live.name + "-later")
    os.replace(_relink(runs, newer.name), runs / "latest")
    v = open_doc(client, RECOMPILES)
    # The new run's model is built from scratch (a full read, causes included): on a loaded
    # 2-core CI box that once took longer than the default 30 s. A bound, not a timing test.
    await diagnostics(client, v, 2, timeout=120)
    await diagnostics(client, u, 0, timeout=120)
    assert (await command(client, "dynInspect.summary"))["run"] == str(newer)


def _relink(runs: Path, name: str) -> Path:
    tmp = runs / ".latest.tmp"
    if tmp.is_symlink():
        tmp.unlink()
    os.symlink(name, tmp)
    return tmp


# -- stale lines -----------------------------------------------------------------------------


async def test_edited_document_moves_or_drops_findings(client: LanguageClient, breaks_run: Run) -> None:
    await start(client, CORPUS, corpus_options(breaks_run))
    original = BREAKS.read_text()
    u = open_doc(client, BREAKS)
    await diagnostics(client, u, 4)

    # Three lines inserted above everything: each finding moves down by three, same columns.
    moved = "# one\n# two\n# three\n" + original
    replace_text(client, u, moved, 2)
    await wait_for(lambda: sorted(d.range.start.line for d in ours(client, u)) == sorted(marker_line(BREAKS, m) + 2 for m in ("BREAK:branch", "BREAK:print", "BREAK:builtin", "BREAK:explicit")), client, what="findings moved down by 3")
    branch = next(d for d in ours(client, u) if d.code == "GB0170")
    expected = span_of(BREAKS, marker_line(BREAKS, "BREAK:branch") - 1, "y.sum() > 0")
    assert (branch.range.start.character, branch.range.end.character) == (expected.start.character, expected.end.character)

    # The print line changed: its finding is dropped, not shown on a neighbouring line.
    changed = moved.replace('print("chatty")  # BREAK:print', 'print("chatty!")  # BREAK:print')
    replace_text(client, u, changed, 3)
    await diagnostics(client, u, 3)
    assert all(d.code != "GB0059" for d in ours(client, u))

    # Re-indented (wrapped in a block): the expression is still marked exactly.
    indented = changed.replace("    if y.sum() > 0:  # BREAK:branch\n        y = y + 1\n", "    if True:\n        if y.sum() > 0:  # BREAK:branch\n            y = y + 1\n")
    replace_text(client, u, indented, 4)
    lines = indented.splitlines()
    line0 = next(i for i, t in enumerate(lines) if "BREAK:branch" in t)
    col = lines[line0].index("y.sum() > 0")
    await wait_for(lambda: any(d.code == "GB0170" and d.range.start.line == line0 for d in ours(client, u)), client, what="the re-indented branch")
    branch = next(d for d in ours(client, u) if d.code == "GB0170")
    assert (branch.range.start.character, branch.range.end.character) == (col, col + len("y.sum() > 0"))

    # The same text twice near the recorded line is ambiguous: dropped.
    twice = indented.replace("    torch._dynamo.graph_break()  # BREAK:explicit\n", "    torch._dynamo.graph_break()  # BREAK:explicit\n    torch._dynamo.graph_break()  # BREAK:explicit\n")
    replace_text(client, u, twice, 5)
    await wait_for(lambda: all(d.code != "GB0025" for d in ours(client, u)) and len(ours(client, u)) == 2, client, what="the duplicated line dropped")


async def test_a_burst_of_edits_settles_on_the_last_text(client: LanguageClient, breaks_run: Run) -> None:
    await start(client, CORPUS, corpus_options(breaks_run))
    original = BREAKS.read_text()
    u = open_doc(client, BREAKS)
    await diagnostics(client, u, 4)
    for n in range(1, 41):
        replace_text(client, u, "#\n" * n + original, n + 1)
    await wait_for(lambda: sorted(d.range.start.line for d in ours(client, u))[0] == marker_line(BREAKS, "BREAK:branch") - 1 + 40, client, what="the last edit's positions")
    assert len(ours(client, u)) == 4
    assert (await command(client, "dynInspect.summary"))["breaks"] == 5  # still answering


# -- bad input -------------------------------------------------------------------------------


async def test_unknown_and_non_python_documents_get_empty_answers(client: LanguageClient, breaks_run: Run, tmp_path: Path) -> None:
    await start(client, CORPUS, corpus_options(breaks_run))
    u = open_doc(client, BREAKS)
    await diagnostics(client, u, 4)
    notes = tmp_path / "notes.txt"
    notes.write_text("y.sum() > 0\n")
    n = open_doc(client, notes, language="plaintext")
    nowhere = uri(tmp_path / "never_opened.py")
    assert await _hover(client, n, 0) is None
    assert await _hover(client, nowhere, 3) is None
    assert not await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(nowhere)))
    untitled = "untitled:Untitled-1"
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(untitled, "python", 1, BREAKS.read_text())))
    assert await _hover(client, untitled, marker_line(BREAKS, "BREAK:branch") - 1) is None
    details = await command(client, "dynInspect.showDetails", "not a path")
    assert details["found"] is False
    await command(client, "dynInspect.summary")
    assert n not in client.diagnostics and untitled not in client.diagnostics


async def test_workspace_without_runs(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text("import torch\n")
    await start(client, tmp_path)
    u = open_doc(client, tmp_path / "script.py")
    # said (a loaded machine may take more than a poll), then a few polls that must not repeat it
    await wait_for(lambda: bool(_messages(client, "no recorded runs found")), client, what="the no-runs message")
    await asyncio.sleep(1.0)
    assert await command(client, "dynInspect.summary") == {"breaks": 0, "recompiles": 0, "run": None, "degraded": []}
    assert not await command(client, "dynInspect.listRuns")
    assert ours(client, u) == []
    assert len(_messages(client, "no recorded runs found")) == 1  # said once, not at every poll
    # ... and shown (window/showMessage), not only logged: editors display it.
    shown = [m.message for m in client.messages if "no recorded runs found" in m.message]
    assert len(shown) == 1 and str(tmp_path) in shown[0] and "dyn-inspect your_script.py" in shown[0]


async def test_corrupted_log_lines_are_skipped(client: LanguageClient, breaks_run: Run, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run = copy_run(breaks_run.path, runs)
    log = run / _process_log(breaks_run).name
    lines = log.read_text().splitlines(keepends=True)
    middle = len(lines) // 2
    garbage = ['{"kind":"graph_break","key":\n', "not json at all\n", '{"kind": "no_such_kind", "t": 1}\n', "\x00\x01\x02\n"]
    log.write_text("".join(lines[:middle] + garbage + lines[middle:]))
    await start(client, CORPUS, {"dynInspect": {"runsDir": str(runs)}})
    u = open_doc(client, BREAKS)
    await diagnostics(client, u, 4)


async def test_newer_schema_is_refused_with_one_message(client: LanguageClient, breaks_run: Run, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run = copy_run(breaks_run.path, runs)
    log = run / _process_log(breaks_run).name
    lines = log.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    assert header["kind"] == "log_header"
    header["schema"] = 999
    log.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    await start(client, CORPUS, {"dynInspect": {"runsDir": str(runs)}})
    u = open_doc(client, BREAKS)
    await wait_for(lambda: bool(_messages(client, "newer dyn-inspect")), client, what="the schema message")
    await asyncio.sleep(0.8)
    assert len(_messages(client, "newer dyn-inspect")) == 1
    assert ours(client, u) == []
    assert (await command(client, "dynInspect.summary"))["run"] is None


async def _serve_a_copy(client: LanguageClient, run: Run, tmp_path: Path) -> tuple[Path, str]:
    """The server on a copy of ``run`` (in ``tmp_path``'s runs folder) with breaks.py open
    and its four breaks shown: the copy and the document."""
    copy = copy_run(run.path, tmp_path / "runs")
    await start(client, CORPUS, {"dynInspect": {"runsDir": str(copy.parent)}})
    u = open_doc(client, BREAKS)
    await diagnostics(client, u, 4)
    return copy, u


async def test_run_deleted_while_open(client: LanguageClient, breaks_run: Run, tmp_path: Path) -> None:
    run, u = await _serve_a_copy(client, breaks_run, tmp_path)
    shutil.rmtree(run)
    await diagnostics(client, u, 0)
    assert await _hover(client, u, marker_line(BREAKS, "BREAK:branch") - 1) is None
    assert (await command(client, "dynInspect.summary"))["run"] is None
    await asyncio.sleep(0.8)
    # One line says why (which one depends on where the poll caught the deletion), and no
    # message repeats while the run stays gone.
    said = [m.message for m in client.log_messages]
    assert any(why in m for m in said for why in ("nothing to show", "was deleted", "holds no event logs"))
    assert len(said) == len(set(said))


async def test_files_outside_the_workspace_are_not_reported(client: LanguageClient, breaks_run: Run, tmp_path: Path) -> None:
    await start(client, tmp_path, corpus_options(breaks_run))
    u = open_doc(client, BREAKS)
    await wait_for(lambda: _loaded(client), client, timeout=10, what="the run loaded")
    assert (await command(client, "dynInspect.summary"))["breaks"] == 5
    assert u not in client.diagnostics
    assert await _hover(client, u, marker_line(BREAKS, "BREAK:branch") - 1) is None


def _loaded(client: LanguageClient) -> bool:
    return any("showing run" in m.message for m in client.log_messages)


async def test_bad_settings_are_ignored_with_a_message(client: LanguageClient, breaks_run: Run) -> None:
    await start(client, CORPUS, corpus_options(breaks_run, graphBreakSeverity="loud", showRecompiles="yes"))
    u = open_doc(client, BREAKS)
    found = await diagnostics(client, u, 4)
    assert all(d.severity == types.DiagnosticSeverity.Warning for d in found)
    assert len(_messages(client, "graphBreakSeverity='loud' ignored")) == 1
    assert len(_messages(client, "showRecompiles='yes' ignored")) == 1


# -- the command line ------------------------------------------------------------------------


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_dyn_inspect_lsp_serves_stdio_and_rejects_a_bad_address(tmp_path: Path) -> None:
    import subprocess

    from corpus_support import DYN_INSPECT

    requests = b"".join(
        [
            _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}),
            _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
            _frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
            _frame({"jsonrpc": "2.0", "method": "exit"}),
        ]
    )
    done = subprocess.run([str(DYN_INSPECT), "lsp"], input=requests, capture_output=True, timeout=180, cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    out = done.stdout.decode()
    assert '"id": 1' in out and '"capabilities"' in out and '"hoverProvider": true' in out
    assert '"id": 2' in out and "Traceback" not in done.stderr.decode()

    bad = subprocess.run([str(DYN_INSPECT), "lsp", "--tcp", "nowhere"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == ["dyn-inspect: --tcp wants HOST:PORT, got 'nowhere'"]


async def test_log_deleted_while_open(client: LanguageClient, breaks_run: Run, tmp_path: Path) -> None:
    run, u = await _serve_a_copy(client, breaks_run, tmp_path)
    (run / _process_log(breaks_run).name).unlink()  # the launcher's log stays
    await diagnostics(client, u, 0)
    await asyncio.sleep(0.5)
    assert len(_messages(client, "was deleted")) == 1
    assert (await command(client, "dynInspect.summary"))["breaks"] == 0
