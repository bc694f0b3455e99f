"""The LSP features the server registers: lifecycle, configuration, document sync, hover,
code lenses and code actions.

Each handler is thin: it finds the document the request is about (``ls.docs``,
``lsp.open_documents``), hands the findings placed on it to the module that translates them
(``lsp.hover``, ``lsp.code_lens``, ``lsp.code_actions``) or republishes
(``ls.publisher``, ``lsp.publishing``), and moves the answer to where the view starts in
its document (a virtual document's block). ``register`` adds them to the server.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from lsprotocol import types

from dyn_inspect.inspector.events import TOOL_VERSION
from dyn_inspect.lsp import code_actions as actions_mod
from dyn_inspect.lsp import code_lens as lens_mod
from dyn_inspect.lsp import hover as hover_mod
from dyn_inspect.lsp import verify as verify_mod
from dyn_inspect.lsp.commands import EXPORT_BUG_REPORT, export_bug_report
from dyn_inspect.lsp.documents import uri_path
from dyn_inspect.lsp.open_documents import shifted
from dyn_inspect.lsp.server import DynInspectServer  # (at run time: pygls reads the handlers' annotations)
from dyn_inspect.lsp.settings import SECTION, has_settings
from dyn_inspect.lsp.virtual_notebooks import is_virtual
from dyn_inspect.lsp.wire import guarded


@guarded(lambda: None)
def initialize(ls: DynInspectServer, params: types.InitializeParams) -> None:
    ls.set_roots(params)
    ls.configure(params.initialization_options)
    ls.say(f"dyn-inspect {TOOL_VERSION} language server; workspace {', '.join(map(str, ls.roots))}; runs in {ls.source.root}")


@guarded(lambda: None)
def initialized(ls: DynInspectServer, params: types.InitializedParams) -> None:
    # Answered but not advertised: capabilities were computed from the commands known
    # at initialize. The VS Code extension has a UI command with this id, and
    # vscode-languageclient registers every advertised command as a VS Code command
    # (a duplicate id fails the client's start); there the code action then runs the
    # extension's own export, elsewhere workspace/executeCommand reaches this handler.
    if EXPORT_BUG_REPORT not in ls.protocol.fm.commands:
        ls.command(EXPORT_BUG_REPORT)(export_bug_report)
    ls.start_following()


@guarded(lambda: None)
def shutdown(ls: DynInspectServer, params: None) -> None:
    ls.stop_following()


@guarded(lambda: None)
async def did_change_configuration(ls: DynInspectServer, params: types.DidChangeConfigurationParams) -> None:
    raw = params.settings
    caps = ls.client_capabilities.workspace
    if not has_settings(raw) and caps is not None and caps.configuration:
        # Pull model: the client only said "something changed".
        got = await ls.workspace_configuration_async(types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)]))
        raw = {SECTION: got[0]} if got and isinstance(got[0], dict) else None
    run_may_change = ls.configure(raw)
    if run_may_change:
        await ls.refresh()
    ls.publisher.publish_all()
    ls.publisher.refresh_lenses()


@guarded(lambda: None)
def did_open(ls: DynInspectServer, params: types.DidOpenTextDocumentParams) -> None:
    doc = params.text_document
    path = uri_path(doc.uri)
    if path is None or not ls.docs.reported(path, doc.language_id):
        return
    ls.publisher.publish(path, doc.uri, force=True)


@guarded(lambda: None)
def did_change(ls: DynInspectServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = uri_path(uri)
    doc = ls.workspace.text_documents.get(unquote(uri))
    if path is None or not ls.docs.reported(path, doc.language_id if doc is not None else None):
        return
    ls.publisher.schedule_publish(path, uri)


@guarded(lambda: None)
def did_close(ls: DynInspectServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    path = uri_path(uri)
    ls.docs.forget(uri)
    if path is not None and ls.docs.reported(path):
        ls.publisher.publish(path, uri)  # back to the file on disk


@guarded(lambda: None)
def notebook_changed(ls: DynInspectServer, params: Any) -> None:
    # pygls has updated its notebook and cell documents: republish onto the open cells
    # (a newly opened cell is matched by its text; an edited one keeps its match).
    ls.publisher.publish_all()


@guarded(lambda: None)
def hover(ls: DynInspectServer, params: types.HoverParams) -> types.Hover | None:
    found = ls.docs.document(params.text_document.uri, params.position.line)
    if found is None:
        return None
    path, view, start = found
    position = types.Position(params.position.line - start, params.position.character)
    answer = hover_mod.hover(view, ls.docs.placed(view), ls.index.for_path(path), position)
    if answer is not None and answer.range is not None:
        answer.range = shifted(answer.range, start)
    return answer


@guarded(list)
def code_lens(ls: DynInspectServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    uri = params.text_document.uri
    path = uri_path(uri)
    if path is not None and is_virtual(path):
        return [
            types.CodeLens(shifted(lens.range, block.start), lens.command)
            for block, view in ls.docs.block_views(uri)
            for lens in lens_mod.lenses(view, ls.index.for_path(block.path))
        ]
    found = ls.docs.document(uri)
    if found is None:
        return []
    path, view, _ = found
    return lens_mod.lenses(view, ls.index.for_path(path))


@guarded(list)
def code_action(ls: DynInspectServer, params: types.CodeActionParams) -> list[types.CodeAction | types.Command]:
    docs = ls.docs
    found = docs.document(params.text_document.uri)
    path = uri_path(params.text_document.uri)
    if found is None or (path is not None and is_virtual(path)):
        return []  # (jupyterlab-lsp applies no code actions)
    _, view, _ = found
    out = actions_mod.code_actions(view, docs.placed(view), params, ls.index.run_path, docs.view_of_path, ls.index.inlined_logging)
    if out and ls.index.run_path and not params.context.only and not docs.shows_notebook_run():
        out.append(
            types.Command(
                title="dyn-inspect: verify the fix (re-run under the recorder)",
                command=verify_mod.VERIFY,
                arguments=[ls.index.run_path],
            )
        )
    return out


def register(server: DynInspectServer) -> None:
    """The features, in the order pygls hears of them."""
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.SHUTDOWN)(shutdown)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
    # every notebook notification republishes onto the open cells
    for method in (types.NOTEBOOK_DOCUMENT_DID_CLOSE, types.NOTEBOOK_DOCUMENT_DID_CHANGE, types.NOTEBOOK_DOCUMENT_DID_OPEN):
        server.feature(method)(notebook_changed)
    server.feature(types.TEXT_DOCUMENT_HOVER)(hover)
    server.feature(types.TEXT_DOCUMENT_CODE_LENS)(code_lens)
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )(code_action)
