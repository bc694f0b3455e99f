"""What the server pushes to the client unasked: diagnostics and code lens refreshes.

``Publisher`` (the server's ``ls.publisher``) sends ``textDocument/publishDiagnostics`` for
a file, an open notebook cell or a virtual document (``publish``) when the list differs
from the one last sent (always for a document just opened); ``publish_all`` republishes every file whose findings
changed since the previous index of the same run (and clears those now empty);
``schedule_publish`` debounces a burst of edits; ``refresh_lenses`` asks the client to
re-read its code lenses. The diagnostics themselves are built by ``lsp.diagnostics``
(placed findings), ``lsp.edits`` (what an edit since the run changed) and ``lsp.verify``
(the last verify's verdict, which this object keeps).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from lsprotocol.converters import get_converter

from dyn_inspect.inspector.reports.findings import RunIndex, signature
from dyn_inspect.inspector.workspace import norm_path
from dyn_inspect.lsp import diagnostics as diag_mod
from dyn_inspect.lsp import edits as edits_mod
from dyn_inspect.lsp import verify as verify_mod
from dyn_inspect.lsp.documents import TextView, path_uri, uri_path
from dyn_inspect.lsp.open_documents import shifted_diagnostic
from dyn_inspect.lsp.virtual_notebooks import is_virtual

if TYPE_CHECKING:
    from dyn_inspect.lsp.server import DynInspectServer

CHANGE_DEBOUNCE_S = 0.15
_converter = get_converter()


class Publisher:
    def __init__(self, ls: DynInspectServer) -> None:
        self.ls = ls
        self.published: dict[str, str] = {}  # uri -> the diagnostics last sent (JSON)
        self._pending: dict[str, asyncio.Task[None]] = {}
        self.lenses_due = False
        self._lenses_sent = 0.0
        self.verdict: verify_mod.Verdict | None = None  # the last dynInspect.verify's
        self._saved_verdict: tuple[str | None, verify_mod.Verdict | None] = (None, None)

    def publish(self, path: str, uri: str | None = None, force: bool = False) -> None:
        ls, docs = self.ls, self.ls.docs
        uri = uri or path_uri(path)
        verdict = self.current_verdict()
        view = docs.view(path, uri)
        diagnostics: list[types.Diagnostic] = []
        if is_virtual(path):
            # jupyterlab-lsp's document of a whole notebook: every recorded block's findings,
            # each at its block's lines, in one list
            locate = docs.locate()  # once for the document, not per block
            for block, block_view in docs.block_views(uri):
                diagnostics += [shifted_diagnostic(d, block.start) for d in self.diagnostics(block.path, block_view, locate)]
            view = None  # (verify's hints are about files)
        elif view is not None:
            diagnostics = self.diagnostics(path, view)
        diagnostics = verify_mod.annotate(diagnostics, verdict, ls.index.run_path) + verify_mod.verified_hints(verdict, path, view)
        key = json.dumps(_converter.unstructure(diagnostics), sort_keys=True)
        if not force and self.published.get(uri, "[]") == key:
            return
        self.published[uri] = key
        version = view.version if view is not None else None
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    def diagnostics(self, path: str, view: TextView, locate: diag_mod.Locate | None = None) -> list[types.Diagnostic]:
        """The diagnostics of ``path``'s findings on ``view``'s text."""
        docs = self.ls.docs
        placed = docs.placed(view)
        built = diag_mod.build(placed, view, self.ls.settings, locate or docs.locate())
        return edits_mod.annotate(placed, built, self.ls.index.baselines.get(norm_path(path)), view.lines)

    def current_verdict(self) -> verify_mod.Verdict | None:
        """The verify verdict about the run shown: this session's, else the one an earlier
        verify saved in the run (``verify.json``)."""
        run_path = self.ls.index.run_path
        if self.verdict is not None and run_path and Path(self.verdict.after_run).resolve() == Path(run_path).resolve():
            return self.verdict
        if self._saved_verdict[0] != run_path:
            self._saved_verdict = (run_path, verify_mod.from_run(run_path))
        return self._saved_verdict[1]

    def publish_all(self, changed_only: RunIndex | None = None) -> None:
        """Republish every file whose diagnostics changed (and clear those now empty).

        ``changed_only``: the previous index of the same run; files whose findings did not
        change since it are skipped without recomputing (a growing run touches few files).
        """
        docs, index = self.ls.docs, self.ls.index
        open_docs = docs.open_uris()
        targets: dict[str, str] = {}
        cells = docs.run_cells()
        for path in index.files:
            if docs.reported(path) and (path in open_docs or path not in cells):  # (a cell: only where it is open)
                targets[path] = open_docs.get(path) or path_uri(path)
        targets.update(open_docs)
        for uri in list(self.published):
            published = uri_path(uri)
            if published is not None:
                targets.setdefault(norm_path(published), uri)
        for target, uri in targets.items():
            if changed_only is not None and uri in self.published and not is_virtual(target):
                before, now = changed_only.files.get(target), index.files.get(target)
                if before is not None and now is not None and signature(before) == signature(now):
                    continue
                if before is None and now is None:
                    continue
            self.publish(target, uri)

    def schedule_publish(self, path: str, uri: str) -> None:
        """Debounced: a burst of edits republishes once, after the typing pauses."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()

        async def later() -> None:
            await asyncio.sleep(CHANGE_DEBOUNCE_S)
            self._pending.pop(uri, None)
            try:
                self.publish(path, uri)
            except Exception as exc:
                self.ls.say(f"diagnostics for {path} failed: {type(exc).__name__}: {exc}", types.MessageType.Error)

        self._pending[uri] = asyncio.get_running_loop().create_task(later())

    def lenses_sent_s(self) -> float:
        """Seconds since the client was last asked to re-read its code lenses."""
        return time.monotonic() - self._lenses_sent

    def refresh_lenses(self) -> None:
        self.lenses_due = False
        self._lenses_sent = time.monotonic()
        caps = self.ls.client_capabilities.workspace
        if caps and caps.code_lens and caps.code_lens.refresh_support:
            try:
                self.ls.workspace_code_lens_refresh(None)
            except Exception:
                pass
