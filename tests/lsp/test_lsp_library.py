"""A break inside a library (a package under site-packages, outside the workspace) shown on
the workspace line that leads into it; a backend compile failure as an Error; the default
runs folder (``<workspace>/.dyn-inspect/runs``). On a real recording of ``app.py``."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_support import (
    code_span,
    command,
    diagnostics,
    library_workspace_fixture,  # noqa: F401  (registers the library_workspace fixture)
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


def _lib(ws: Path) -> Path:
    return (ws.parent / "libs" / "site-packages" / "tinylib" / "__init__.py").resolve()


async def test_library_break_on_the_workspace_line_and_the_backend_failure(client: LanguageClient, library_workspace: Path) -> None:
    ws = library_workspace
    app = ws / "app.py"
    await start(client, ws)  # no runsDir: the workspace's .dyn-inspect/runs
    u = open_doc(client, app)
    failure, brk = sorted(await diagnostics(client, u, 2), key=lambda d: d.severity)

    call = line_of(app, "CALLS:library")
    # From where the call starts to the end of its code (the recorded frame's column).
    assert brk.range == span_of(app, call, "tinylib.noisy(y)")
    assert brk.severity == types.DiagnosticSeverity.Warning and brk.code == "GB0059"
    # Names the library location: the path after site-packages, and its line.
    lib_line = line_of(_lib(ws), "LIB:print") + 1
    assert brk.message.startswith(f"Graph break inside tinylib/__init__.py:{lib_line} (called from here): ")
    # Logged inlined into uses_library and again when noisy ran as its own frame.
    assert brk.message.endswith("(2 hits)")
    frames = [(r.location.uri, r.location.range.start.line) for r in brk.related_information or []]
    assert frames[-1] == (uri(_lib(ws)), lib_line - 1)
    assert (u, call) in frames

    assert failure.severity == types.DiagnosticSeverity.Error
    assert failure.range == code_span(app, line_of(app, "def refused("))
    assert failure.code == "BackendCompilerFailed"
    assert "this backend refuses every graph" in failure.message and "`refused`" in failure.message

    summary = await command(client, "dynInspect.summary")
    assert summary["breaks"] == 1 and summary["run"] is not None and summary["run"].startswith(str(ws.resolve()))


async def test_library_files_are_not_reported_and_library_breaks_can_be_hidden(client: LanguageClient, library_workspace: Path) -> None:
    ws = library_workspace
    await start(client, ws, {"dynInspect": {"showLibraryBreaks": False}})
    u = open_doc(client, ws / "app.py")
    (failure,) = await diagnostics(client, u, 1)
    assert failure.severity == types.DiagnosticSeverity.Error
    lib = open_doc(client, _lib(ws))
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"dynInspect": {"showLibraryBreaks": True}}))
    await wait_for(lambda: len(ours(client, u)) == 2, client, what="the library break back")
    # The library's own file is outside the workspace: nothing is ever published for it.
    assert lib not in client.diagnostics
