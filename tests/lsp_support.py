"""Helpers for the language-server tests (no tests here): starting the real server over
stdio with pytest-lsp, waiting for what it publishes, applying its edits, and a recording
of a program that breaks inside a library and fails in a backend."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from corpus_support import CACHE_ENV, DYN_INSPECT, records
from dyn_inspect.inspector.run import Run
from inductor_pool import seed

SERVER = [sys.executable, "-m", "dyn_inspect.lsp"]
WAIT_S = 90.0  # a limit, not a pause: under a loaded CI a cold server took over 30 s


def uri(path: Path | str) -> str:
    return Path(path).resolve().as_uri()


def line_of(path: Path, needle: str) -> int:
    """0-based line of the one line of ``path`` that contains ``needle``."""
    found = [i for i, text in enumerate(path.read_text().splitlines()) if needle in text]
    assert len(found) == 1, f"{needle!r} found {len(found)}× in {path}"
    return found[0]


def span_of(path: Path, line0: int, expression: str) -> types.Range:
    """The range of ``expression`` on 0-based ``line0`` of ``path`` (ASCII lines)."""
    text = path.read_text().splitlines()[line0]
    col = text.index(expression)
    return types.Range(types.Position(line0, col), types.Position(line0, col + len(expression)))


def code_span(path: Path, line0: int) -> types.Range:
    """The line's code without indentation and without its trailing comment."""
    text = path.read_text().splitlines()[line0]
    code = text.split("  #", 1)[0].rstrip()
    start = len(code) - len(code.lstrip())
    return types.Range(types.Position(line0, start), types.Position(line0, len(code)))


async def start(client: LanguageClient, root: Path, options: dict[str, Any] | None = None, spec: str = "visual-studio-code") -> types.InitializeResult:
    params = types.InitializeParams(
        capabilities=client_capabilities(spec),
        root_uri=uri(root),
        workspace_folders=[types.WorkspaceFolder(uri=uri(root), name=root.name)],
        initialization_options=options,
    )
    return await client.initialize_session(params)


def open_doc(client: LanguageClient, path: Path, text: str | None = None, language: str = "python", version: int = 1) -> str:
    u = uri(path)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=u, language_id=language, version=version, text=path.read_text() if text is None else text)
        )
    )
    return u


def replace_text(client: LanguageClient, u: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=u, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def wait_for(condition: Callable[[], bool], client: LanguageClient, timeout: float = WAIT_S, what: str = "condition") -> None:
    """Wait (on the client's notifications) until ``condition()`` holds."""
    deadline = time.monotonic() + timeout
    # The same notification future across polls, never cancelled: pytest-lsp keeps a future
    # it handed out, and a notification arriving for one cancelled by ``asyncio.wait_for``
    # fails the client's next request (InvalidStateError, reported as a server error).
    pending: asyncio.Future[Any] | None = None
    while not condition():
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        if pending is None or pending.done():
            pending = asyncio.ensure_future(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS))
        await asyncio.wait({pending}, timeout=min(left, 1.0))


def ours(client: LanguageClient, u: str) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics.get(u, []) if d.source == "dyn-inspect"]


async def diagnostics(client: LanguageClient, u: str, count: int, timeout: float = WAIT_S) -> list[types.Diagnostic]:
    """Wait until the file has exactly ``count`` dyn-inspect diagnostics; returns them by line."""
    await wait_for(lambda: len(ours(client, u)) == count, client, timeout, f"{count} diagnostics on {u} (have {len(ours(client, u))})")
    return sorted(ours(client, u), key=lambda d: (d.range.start.line, d.range.start.character))


async def command(client: LanguageClient, name: str, *args: Any) -> Any:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=list(args)))


def apply_edit(text: str, edit: types.WorkspaceEdit, u: str) -> str:
    """``text`` after the edits of ``edit`` to document ``u`` (UTF-16 = code points here)."""
    edits: list[types.TextEdit] = []
    for change in edit.document_changes or []:
        assert isinstance(change, types.TextDocumentEdit)
        if change.text_document.uri == u:
            edits.extend(e for e in change.edits if isinstance(e, types.TextEdit))
    for u2, more in (edit.changes or {}).items():
        if u2 == u:
            edits.extend(more)
    lines = text.splitlines(keepends=True)

    def offset(pos: types.Position) -> int:
        return sum(len(line) for line in lines[: pos.line]) + pos.character

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


def lsp_client_fixture(**kwargs: Any) -> Any:
    """A pytest-lsp fixture: the real server over stdio, a fresh one per test."""

    @pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env={**os.environ, "PYTHONUNBUFFERED": "1"}), **kwargs)
    async def client(lsp_client: LanguageClient):
        # pytest-lsp's client does not answer this request; count refreshes instead.
        lsp_client.code_lens_refreshes = 0  # type: ignore[attr-defined]

        @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
        def code_lens_refresh(params: None) -> None:
            lsp_client.code_lens_refreshes += 1  # type: ignore[attr-defined]

        yield
        try:
            await asyncio.wait_for(lsp_client.shutdown_session(), timeout=10)
        except (asyncio.TimeoutError, RuntimeError):
            pass

    return client


# -- a recording of a library break and a backend failure --------------------------------

LIBRARY = '''\
"""A tiny third-party library: its helper prints, which breaks the caller's graph."""


def noisy(x):
    print("tinylib saw", tuple(x.shape))  # LIB:print
    return x * 2
'''

APP = '''\
"""Calls into a library that graph-breaks, and compiles one function with a failing backend."""

import os
import sys

import torch

sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "libs", "site-packages")))
import tinylib  # noqa: E402


@torch.compile
def uses_library(x):
    y = x + 1
    y = tinylib.noisy(y)  # CALLS:library
    return y.sin()


def refusing_backend(gm, example_inputs):
    raise RuntimeError("this backend refuses every graph")


torch._dynamo.config.suppress_errors = True


@torch.compile(backend=refusing_backend)
def refused(x):  # FAIL:def
    return x.cos() + 1


uses_library(torch.randn(4))
refused(torch.randn(4))
'''


def record_library_program(base: Path) -> Path:
    """Record ``ws/app.py`` (real Inductor, a real backend error) under ``base``; returns the
    workspace folder, whose ``.dyn-inspect/runs`` holds the run. Reused across sessions
    with the corpus cache variable, like the corpus."""
    ws, lib = base / "ws", base / "libs" / "site-packages" / "tinylib"
    done = base / "recorded.json"
    if done.is_file() and (ws / "app.py").read_text() == APP and any((ws / ".dyn-inspect" / "runs").glob("2*")):
        return ws
    if base.exists():
        shutil.rmtree(base)
    ws.mkdir(parents=True)
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(LIBRARY)
    (ws / "app.py").write_text(APP)
    env = {k: v for k, v in os.environ.items() if k != "DYN_INSPECT_RUNS_DIR"}
    env["DYN_INSPECT_NO_TUI"] = "1"
    env["TORCHINDUCTOR_CACHE_DIR"] = seed(base / "inductor-cache")
    proc = subprocess.run([str(DYN_INSPECT), "--no-tui", "app.py"], cwd=ws, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    done.write_text(json.dumps({"returncode": proc.returncode}))
    return ws


# Named apart from the fixture so that a test module importing it (to register it) and taking
# `library_workspace` as a parameter does not shadow the import.
@pytest.fixture(scope="session", name="library_workspace")
@records
def library_workspace_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = os.environ.get(CACHE_ENV)
    base = Path(cache) / "lsp-library" if cache else tmp_path_factory.mktemp("lsp-library")
    return record_library_program(base)


def corpus_options(run: Run, **extra: Any) -> dict[str, Any]:
    """initializationOptions that point the server at a corpus recording (nested form)."""
    return {"dynInspect": {"runsDir": str(run.path.parent), **extra}}


def copy_run(run_dir: Path, dest: Path, logs: Sequence[str] | None = None, name: str | None = None) -> Path:
    """A copy of a recorded run directory (blobs and the chosen logs) under ``dest``, as
    ``name`` (default: the run's own)."""
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / (name or run_dir.name)
    shutil.copytree(run_dir / "blobs", out / "blobs")
    for log in run_dir.glob("*.jsonl"):
        if logs is None or log.name in logs:
            shutil.copy2(log, out / log.name)
    return out


def strict(data: bytes | str | Any, typ: Any) -> Any:
    """``data`` (JSON text or decoded JSON) as ``typ``; fails unless re-encoding the typed
    value gives back exactly the same keys, values and key order: a key the Struct does not
    declare, one it declares that is missing, or a value of another type all fail."""
    raw = data if isinstance(data, (bytes, str)) else json.dumps(data)
    value = msgspec.json.decode(raw, type=typ)
    assert json.dumps(msgspec.to_builtins(value)) == json.dumps(json.loads(raw)), f"{typ}: keys or values differ from the Struct"
    return value
