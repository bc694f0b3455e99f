"""Runs found wherever the user works: a run recorded in a subdirectory of the opened
folder (``cd sub && dyn-inspect prog.py``), a checkout opened somewhere else than where
the run was recorded (paths mapped by their place relative to the run's working
directory, or by their tail under the workspace), and a newer run that compiled nothing
(a typo, a crash at start-up) not hiding the last useful one."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from corpus_support import CACHE_ENV, DYN_INSPECT, marker_line, records
from inductor_pool import seed
from lsp_support import command, diagnostics, lsp_client_fixture, open_doc, ours, start, uri

pytestmark = pytest.mark.corpus

client = lsp_client_fixture()

PROG = '''\
"""One compiled function with a print inside: one graph break."""

import torch


@torch.compile
def step(x):
    y = x.sin()
    print("step")  # BREAK:print
    return y.cos()


step(torch.randn(8))
'''


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DYN_INSPECT_RUNS_DIR"}
    env["DYN_INSPECT_NO_TUI"] = "1"
    return env


def record_in_subdirectory(base: Path) -> Path:
    """``repo/sub/prog.py`` recorded from ``repo/sub``; returns ``repo``."""
    repo = base / "repo"
    sub = repo / "sub"
    if (base / "recorded.json").is_file() and (sub / "prog.py").read_text() == PROG:
        return repo
    if base.exists():
        shutil.rmtree(base)
    sub.mkdir(parents=True)
    (sub / "prog.py").write_text(PROG)
    env = _env()
    env["TORCHINDUCTOR_CACHE_DIR"] = seed(base / "inductor-cache")
    proc = subprocess.run([str(DYN_INSPECT), "--no-tui", "prog.py"], cwd=sub, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (base / "recorded.json").write_text(json.dumps({"returncode": 0}))
    return repo


@pytest.fixture(scope="module")
@records
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = os.environ.get(CACHE_ENV)
    base = Path(cache) / "lsp-subdir" if cache else tmp_path_factory.mktemp("lsp-subdir")
    return record_in_subdirectory(base)


def _copy(repo: Path, dest: Path) -> Path:
    shutil.copytree(repo, dest, symlinks=True)
    return dest


async def _break_on_print(client: LanguageClient, prog: Path) -> types.Diagnostic:
    u = open_doc(client, prog)
    found = await diagnostics(client, u, 1, timeout=60)
    line0 = marker_line(prog, "BREAK:print") - 1
    assert found[0].range.start.line == line0
    text = prog.read_text().splitlines()[line0]
    assert text[found[0].range.start.character : found[0].range.end.character] == 'print("step")'
    return found[0]


def _shown(client: LanguageClient, fragment: str) -> list[str]:
    return [m.message for m in client.log_messages if fragment in m.message]


async def test_run_recorded_in_a_subdirectory(client: LanguageClient, repo: Path) -> None:
    ws = repo  # opened at the root; the run is in sub/.dyn-inspect/runs
    assert not (ws / ".dyn-inspect").exists()
    await start(client, ws)
    await _break_on_print(client, ws / "sub" / "prog.py")
    summary = await command(client, "dynInspect.summary")
    assert summary["breaks"] == 1 and Path(summary["run"]).parent == (ws / "sub" / ".dyn-inspect" / "runs").resolve()


async def test_workspace_copied_elsewhere(client: LanguageClient, repo: Path, tmp_path: Path) -> None:
    # Another place and another name: none of the recorded paths exists here.
    ws = _copy(repo, tmp_path / "elsewhere" / "checkout-2")
    await start(client, ws)
    prog = ws / "sub" / "prog.py"
    diag = await _break_on_print(client, prog)
    assert diag.source == "dyn-inspect"
    # The hover and the code lens speak of the copy, not the recorded file.
    u = uri(prog)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(u)))
    assert len(lenses) == 1 and lenses[0].command is not None
    assert Path(lenses[0].command.arguments[0]).resolve() == prog.resolve()
    def_line0 = next(i for i, t in enumerate(prog.read_text().splitlines()) if t.startswith("def step("))
    assert lenses[0].range.start.line == def_line0
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(u), diag.range.start))
    assert hover is not None and "print" in str(hover.contents)


async def test_runs_dir_setting_outside_the_workspace_maps_by_path_tail(client: LanguageClient, repo: Path, tmp_path: Path) -> None:
    ws = _copy(repo, tmp_path / "clone")
    runs = ws / "sub" / ".dyn-inspect" / "runs"
    outside = tmp_path / "shared-runs"
    shutil.move(str(runs), str(outside))
    await start(client, ws, {"dynInspect": {"runsDir": str(outside)}})
    await _break_on_print(client, ws / "sub" / "prog.py")


async def test_a_newer_run_that_compiled_nothing_does_not_hide_it(client: LanguageClient, repo: Path, tmp_path: Path) -> None:
    ws = _copy(repo, tmp_path / "repo")
    (ws / "hello.py").write_text('print("hello")\n')
    # A run at the workspace root that compiles nothing, and a mistyped command (a crash):
    # both newer than the recording, both where `latest` would point.
    done = subprocess.run([str(DYN_INSPECT), "--no-tui", "hello.py"], cwd=ws, env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    subprocess.run([str(DYN_INSPECT), "--no-tui", "no-such-program"], cwd=ws, env=_env(), capture_output=True, text=True, timeout=120)
    newer = sorted(p.name for p in (ws / ".dyn-inspect" / "runs").iterdir() if not p.is_symlink())
    assert len(newer) == 2
    await start(client, ws)
    await _break_on_print(client, ws / "sub" / "prog.py")
    await asyncio.sleep(0.5)  # a few more polls: it stays
    assert len(ours(client, uri(ws / "sub" / "prog.py"))) == 1
    shown = _shown(client, "showing run")
    assert len(shown) == 1 and "sub/.dyn-inspect/runs" in shown[0] and "compiled" in shown[0]  # which run, and why
    listed = await command(client, "dynInspect.listRuns")
    assert {Path(r["path"]).name for r in listed} >= set(newer)  # every run found is listed


# -- content for editors that drop a command's JSON (item 4 of issue 17) ---------------------


async def test_details_open_as_a_document_in_neovim(client: LanguageClient, repo: Path) -> None:
    await start(client, repo, spec="neovim@v0.10.0")
    prog = repo / "sub" / "prog.py"
    u = uri(prog)
    await diagnostics(client, open_doc(client, prog), 1, timeout=60)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(u)))
    (lens,) = lenses
    assert lens.command is not None
    result = await command(client, lens.command.command, *lens.command.arguments)
    assert result["found"] is True and result["function"] == "step"
    for _ in range(100):  # window/showDocument is a request of its own: wait for it
        if client.shown_documents:
            break
        await asyncio.sleep(0.1)
    (shown,) = client.shown_documents
    assert shown.take_focus is True
    doc = Path(shown.uri.removeprefix("file://"))
    text = doc.read_text()
    assert text.startswith("# `step` — ") and f"{prog.resolve()}:{lens.command.arguments[1]}" in text
    assert "- Compiles: 1" in text and "- Graph breaks: 1 unique" in text
    assert not os.access(doc, os.W_OK) or os.getuid() == 0  # generated: read-only (root may write anyway)
    assert oct(doc.stat().st_mode & 0o777) == "0o400"


async def test_details_not_repeated_when_the_client_renders_them(client: LanguageClient, repo: Path) -> None:
    # The VS Code extension renders the JSON itself and says so.
    await start(client, repo, {"dynInspect": {"showContent": "none"}}, spec="neovim@v0.10.0")
    prog = repo / "sub" / "prog.py"
    await diagnostics(client, open_doc(client, prog), 1, timeout=60)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri(prog))))
    result = await command(client, lenses[0].command.command, *lenses[0].command.arguments)
    assert result["found"] is True
    await asyncio.sleep(0.2)
    assert client.shown_documents == []
