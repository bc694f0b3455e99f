"""The language server wiring (pygls 2): lifecycle, documents, features and commands.

Layout after Microsoft's vscode-pylint ``lsp_server.py``: one ``LanguageServer`` with
handlers that delegate to small modules — ``settings`` (what the client configures),
``run_source`` (which run, following it), ``findings_cache`` (the per-file index the
report layer builds, ``inspector/reports/findings.py``, saved and read back),
``placement``/``source_lines`` (onto the current text), ``diagnostics``, ``hover``,
``code_lens``, ``code_actions``; notebooks: ``notebook_cells`` (LSP 3.17 notebook
documents, VS Code) and ``virtual_notebooks`` (jupyterlab-lsp's one document per notebook).

Concurrency: one asyncio task polls the run every ``POLL_S``; reading the log and building
the index happen in a worker thread under a lock, and the finished ``RunIndex`` is swapped
in whole. Handlers only read the current index, so a request is answered from a complete
snapshot and never waits for a big run to load. Every handler is guarded: an unexpected
error is logged once (``window/logMessage``) and answered with an empty result.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import shlex
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

import attrs
import msgspec
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.server import LanguageServer

from dyn_inspect.inspector.events import TOOL_VERSION
from dyn_inspect.inspector.locations import inside
from dyn_inspect.inspector.outputs.lsp import SERVER_COMMANDS, LspFunctionDetails, LspSummary, LspVerifyError
from dyn_inspect.inspector.outputs.reports import VerifyReport
from dyn_inspect.inspector.reports.findings import RunIndex, build_index, signature
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace, norm_path
from dyn_inspect.lsp import code_actions as actions_mod
from dyn_inspect.lsp import code_lens as lens_mod
from dyn_inspect.lsp import diagnostics as diag_mod
from dyn_inspect.lsp import edits as edits_mod
from dyn_inspect.lsp import findings_cache
from dyn_inspect.lsp import hover as hover_mod
from dyn_inspect.lsp import verify as verify_mod
from dyn_inspect.lsp import virtual_notebooks as virtual
from dyn_inspect.lsp.documents import DiskCache, TextView, is_python, path_uri, uri_path, view_for
from dyn_inspect.lsp.notebook_cells import cell_key, match_cells
from dyn_inspect.lsp.placement import Placed, place, place_function
from dyn_inspect.lsp.run_source import POLL_S, ListingCache, PollResult, RunSource, touch_of
from dyn_inspect.lsp.settings import SECTION, Settings, apply_settings, has_settings
from dyn_inspect.lsp.virtual_notebooks import is_virtual, real_root
from dyn_inspect.lsp.wire import AnsweringProtocol

log = logging.getLogger(__name__)

SELECT_RUN = SERVER_COMMANDS["selectRun"]
LIST_RUNS = SERVER_COMMANDS["listRuns"]
SUMMARY = SERVER_COMMANDS["summary"]
SHOW_DETAILS = lens_mod.SHOW_DETAILS
SHOW_IN_TUI = actions_mod.SHOW_IN_TUI
EXPORT_BUG_REPORT = actions_mod.EXPORT_BUG_REPORT
CHANGE_DEBOUNCE_S = 0.15
# A run this big with no saved findings shows the open files' findings first (their own
# build) and then the rest: at 1M events 0.45-0.55 s, then 0.45-0.5 s more, where the
# whole build was 0.9-1.0 s before anything showed. Smaller runs build whole at once.
OPEN_FIRST_EVENTS = 50_000
LENS_REFRESH_S = 1.0

# A handler (sync or async); guarded() hands back one of the same signature.
F = TypeVar("F", bound=Callable[..., Any])
_converter = get_converter()


class DynInspectServer(LanguageServer):
    def __init__(self) -> None:
        # AnsweringProtocol: a request with wrongly typed params gets an error response.
        super().__init__(
            "dyn-inspect",
            TOOL_VERSION,
            protocol_cls=AnsweringProtocol,
            # LSP 3.17 notebook documents: the Python cells of any notebook (lsp.notebook_cells)
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(cells=[types.NotebookCellLanguage(language="python")], notebook="*")
                ]
            ),
        )
        self.settings = Settings()
        self.roots: list[Path] = [Path.cwd()]
        self.ws = Workspace(self.roots)
        self.source = RunSource(self.roots[0], open_files=self.open_for_choosing)
        self.index = RunIndex()
        self.disk = DiskCache()
        self.listings = ListingCache()
        self.published: dict[str, str] = {}  # uri -> the diagnostics last sent (JSON)
        self.said: set[str] = set()
        self._lock: asyncio.Lock | None = None
        self._peeked = False  # the first poll tried the findings cache before reading a run
        # the open files' findings were shown first: (run, workspace, event count) to build whole
        self._rest: tuple[Run, Workspace, int] | None = None
        self._follow: asyncio.Task[None] | None = None
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._lenses_due = False
        self._lenses_sent = 0.0
        self._cells_seen: set[str] = set()  # the run's notebook cells when last published
        # (run, its recorded cell -> open cell URI): the matches of the run shown only
        self._cell_matches: tuple[str | None, dict[str, str]] = (None, {})
        self._run_cells: tuple[tuple[str, int] | None, set[str]] = (None, set())  # (run, cells) -> paths
        # virtual document URI -> ((run, cells, text), its blocks): found again on edits only
        # (jupyterlab-lsp may send a changed text under the same version)
        self._blocks: dict[str, tuple[tuple[str, int, str], list[virtual.Block]]] = {}
        self.verdict: verify_mod.Verdict | None = None  # the last dynInspect.verify's
        self._saved_verdict: tuple[str | None, verify_mod.Verdict | None] = (None, None)

    # -- messages ----------------------------------------------------------------------

    def say(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """One ``window/logMessage`` per distinct message (a stuck problem is not repeated)."""
        if message in self.said:
            return
        self.said.add(message)
        log.info("%s", message)
        try:
            self.window_log_message(types.LogMessageParams(kind, f"dyn-inspect: {message}"))
        except Exception:  # no client connected (yet): the log above keeps it
            pass

    def show_once(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """A visible ``window/showMessage`` (a notification), once per message and session."""
        key = f"show:{message}"
        if key in self.said:
            return
        self.said.add(key)
        try:
            self.window_show_message(types.ShowMessageParams(kind, f"dyn-inspect: {message}"))
        except Exception:
            pass

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would show a popup per error; a log line is enough and never repeats.
        self.say(f"internal error: {type(error).__name__}: {error}", types.MessageType.Error)

    # -- configuration ----------------------------------------------------------------

    def configure(self, raw: Any) -> bool:
        """Apply settings; True when the run shown may change."""
        self.settings, problems = apply_settings(self.settings, raw)
        for p in problems:
            self.say(p, types.MessageType.Warning)
        return self.source.configure(self.settings.runs_dir, self.settings.run)

    def set_roots(self, params: types.InitializeParams) -> None:
        roots: list[Path] = []
        for folder in params.workspace_folders or []:
            path = uri_path(folder.uri)
            if path:
                roots.append(real_root(Path(path)))
        if not roots:
            root = uri_path(params.root_uri) if params.root_uri else params.root_path
            if root:
                roots.append(real_root(Path(root)))
        self.roots = roots or [Path.cwd()]
        self.ws = Workspace(self.roots)
        self.source = RunSource(self.roots[0], roots=self.roots, open_files=self.open_for_choosing)

    # -- following the run ------------------------------------------------------------

    @property
    def lock(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    def _poll_and_index(self) -> tuple[PollResult, RunIndex | None]:
        t0 = time.perf_counter()
        if self.source.run is None and not self._peeked:
            # The first poll: a finished run's saved findings are shown before the run is
            # read (a million-event run: milliseconds instead of a third of a second);
            # the next poll reads it and republishes only what differs (nothing).
            self._peeked = True
            early = self.source.cached_choice(lambda path: findings_cache.peek(path, self.roots))
            if early is not None:
                log.debug("findings of %s from the cache, before reading it", early[0])
                return PollResult(changed=True, switched=True), early[1]
        result = self.source.poll()
        t1 = time.perf_counter()
        index = self._findings(result.switched) if result.changed else None
        if index is not None:
            log.debug("poll %.1f ms, index %.1f ms", (t1 - t0) * 1000, (time.perf_counter() - t1) * 1000)
        return result, index

    def _findings(self, switched: bool) -> RunIndex:
        """The findings of the run shown: from the cache when a finished run was just
        opened from its index (a million-event run: milliseconds, not seconds), else built
        (and then kept for the next session)."""
        run = self.source.run
        ws = Workspace.for_run(self.roots, run)
        self._rest = None  # what is built now replaces a partial index
        if switched and run is not None:
            cached = findings_cache.load(run, ws)
            if cached is not None:
                log.debug("findings of %s from the cache", run.path)
                return cached
            open_now = self.open_paths()
            if open_now and run.model.event_count >= OPEN_FIRST_EVENTS:
                self._rest = (run, ws, run.model.event_count)
                return build_index(run, ws, only=open_now)
        return self._whole(run, ws, switched)

    def _whole(self, run: Run | None, ws: Workspace, save: bool) -> RunIndex:
        index = build_index(run, ws)
        if save and run is not None:
            findings_cache.save(run, ws, index, touch_of(run, self.roots, ws))  # (the same workspace: not built again)
        return index

    def _rest_of_findings(self) -> RunIndex | None:
        """The whole findings after the open files' were shown; None when a poll since
        replaced them (or the run changed: the next poll rebuilds)."""
        rest, self._rest = self._rest, None
        if rest is None:
            return None
        run, ws, count = rest
        if self.source.run is not run or run.model.event_count != count:
            return None
        return self._whole(run, ws, save=True)

    async def refresh(self) -> None:
        async with self.lock:
            result, index = await asyncio.to_thread(self._poll_and_index)
        for message in result.messages:
            self.say(message)
        for message in result.shown:
            self.show_once(message)
        if index is not None:
            self._show(index, result.switched)
        elif self.workspace.notebook_documents and self.run_cells() != self._cells_seen:
            # The run was read after its findings came from the cache: only now are its
            # notebook cells known, and open cells can be matched to them.
            self.publish_all()
        self._cells_seen = self.run_cells() if self.workspace.notebook_documents else set()
        if self._rest is not None:
            # The open files are shown; now the findings of every other file.
            async with self.lock:
                whole = await asyncio.to_thread(self._rest_of_findings)
            if whole is not None:
                self._show(whole, switched=False)

    def _show(self, index: RunIndex, switched: bool) -> None:
        t0 = time.perf_counter()
        old, self.index = self.index, index
        if switched or old.run_path != index.run_path:
            self.publish_all()
        else:
            self.publish_all(changed_only=old)
        self._lenses_due = True
        log.debug("republished in %.1f ms", (time.perf_counter() - t0) * 1000)

    async def follow(self) -> None:
        while True:
            try:
                await self.refresh()
                # Lens titles change with every compile of a live run: ask the client to
                # re-read them at most once a second, not at every poll.
                if self._lenses_due and time.monotonic() - self._lenses_sent >= LENS_REFRESH_S:
                    self.refresh_lenses()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # keep following whatever one poll hit
                self.say(f"following the run failed: {type(exc).__name__}: {exc}", types.MessageType.Error)
            await asyncio.sleep(POLL_S)

    def start_following(self) -> None:
        if self._follow is None or self._follow.done():
            self._follow = asyncio.get_running_loop().create_task(self.follow())

    def stop_following(self) -> None:
        if self._follow is not None:
            self._follow.cancel()
            self._follow = None

    def refresh_lenses(self) -> None:
        self._lenses_due = False
        self._lenses_sent = time.monotonic()
        caps = self.client_capabilities.workspace
        if caps and caps.code_lens and caps.code_lens.refresh_support:
            try:
                self.workspace_code_lens_refresh(None)
            except Exception:
                pass

    # -- documents and diagnostics -----------------------------------------------------

    def reported(self, path: str, language_id: str | None = None) -> bool:
        """Files the editor hears about: Python files inside the workspace, the run's
        notebook cells (published only where a cell holding their text is open) and
        jupyterlab-lsp's virtual documents of notebooks (``lsp.virtual_notebooks``)."""
        if is_virtual(path):
            return language_id in (None, "", "python") and self.ws.contains(path)
        return is_python(path, language_id) and (self.ws.contains(path) or norm_path(path) in self.run_cells())

    def run_cells(self) -> set[str]:
        """The files IPython compiled the shown run's notebook cells under."""
        run = self.source.run
        if run is None:
            return set()
        # Asked once per document per publish: the paths are normalized again only when
        # the run shown or its number of cells changes.
        key = (str(run.path), len(run.model.cells))
        if self._run_cells[0] != key:
            self._run_cells = (key, {norm_path(c) for c in run.model.cells})
        return self._run_cells[1]

    def view(self, path: str, uri: str | None = None) -> TextView | None:
        return view_for(self.workspace, self.disk, path, uri)

    def placed(self, view: TextView) -> list[Placed]:
        return place(self.index.for_path(view.path), view.lines, self.settings, self.disk.lines)

    def open_uris(self) -> dict[str, str]:
        """norm path -> URI of each open file document, and of each open notebook cell that
        is a cell of the run shown (its path: the file IPython compiled it under)."""
        out: dict[str, str] = {}
        for uri, doc in self.workspace.text_documents.items():
            path = uri_path(uri)
            if path and self.reported(path, doc.language_id):
                out[norm_path(path)] = doc.uri
        out.update(self.open_cells())
        return out

    def open_cells(self) -> dict[str, str]:
        """norm path of a recorded cell -> URI of the open notebook cell holding its text.
        A cell matched once stays matched while it is open, as an open file does: edits
        move its findings (placement), they do not drop them."""
        run = self.source.run
        if run is None or not run.model.cells or not self.workspace.notebook_documents:
            return {}
        texts = self.open_cell_texts()
        key = str(run.path)
        matched = self._cell_matches[1] if self._cell_matches[0] == key else {}
        kept = {path: uri for path, uri in matched.items() if uri in texts}
        unmatched = [(uri, text) for uri, text in texts.items() if uri not in kept.values()]
        for file, uri in match_cells({f: c.source for f, c in run.model.cells.items()}, unmatched).items():
            kept.setdefault(norm_path(file), uri)
        self._cell_matches = (key, kept)
        return dict(kept)

    def locate(self) -> diag_mod.Locate:
        """Where the editor shows a recorded location: in the open notebook cell holding a
        recorded cell's text, or at its lines in a notebook's virtual document, else in the
        file itself (a cell's file never exists)."""
        cells = self.open_cells()
        placed = {norm_path(b.path): (uri, b.start) for uri in self.virtual_uris() for b in self.blocks_of(uri)}

        def locate(path: str, rng: types.Range) -> types.Location:
            key = norm_path(path)
            if key in cells:
                return types.Location(cells[key], rng)
            if key in placed:
                uri, start = placed[key]
                return types.Location(uri, shifted(rng, start))
            return types.Location(path_uri(path), rng)

        return locate

    def virtual_uris(self) -> list[str]:
        """URIs of the open virtual documents (``lsp.virtual_notebooks``)."""
        out = []
        for uri in list(self.workspace.text_documents):
            path = uri_path(uri)
            if path is not None and is_virtual(path):
                out.append(uri)
        return out

    def blocks_of(self, uri: str) -> list[virtual.Block]:
        """The recorded cells a virtual document holds, in its order: the run shown's cells
        found in it, or followed into it through edits. (JupyterLab's file editor sends a
        file under its own name: that is a file like any other.)"""
        doc = self.workspace.text_documents.get(unquote(uri))
        run = self.source.run
        if doc is None:
            return []
        key = (str(run.path) if run is not None else "", len(run.model.cells) if run is not None else 0, doc.source)
        cached = self._blocks.get(doc.uri)
        if cached is not None and cached[0] == key:
            return cached[1]
        out: list[virtual.Block] = []
        if run is not None and run.model.cells:
            out = virtual.blocks({f: c.source for f, c in run.model.cells.items()}, doc.source)
            before = self._blocks.get(doc.uri)
            if before is not None and before[0][:2] == key[:2]:
                # a cell found in the text before this edit and not as it is now: followed
                # through the edit (its findings move with its lines), as an open cell is
                found = {b.path for b in out}
                moved = [b for b in before[1] if b.path not in found]
                if moved:
                    out = sorted(out + virtual.carried(moved, before[0][2], doc.source), key=lambda b: b.start)
        self._blocks[doc.uri] = (key, out)
        return out

    def forget(self, uri: str) -> None:
        """Drops what was kept for a document that closed (a virtual document's blocks)."""
        self._blocks.pop(unquote(uri), None)

    def open_cell_texts(self) -> dict[str, str]:
        """URI -> text of each code cell of the open notebooks."""
        texts = {}
        for notebook in list(self.workspace.notebook_documents.values()):
            for cell in notebook.cells:
                doc = self.workspace.text_documents.get(unquote(cell.document))
                if doc is not None and cell.kind == types.NotebookCellKind.Code:
                    texts[doc.uri] = doc.source
        return texts

    def open_for_choosing(self) -> set[str]:
        """``open_paths`` and the text of every open notebook code cell (``cell_key``): the
        run shown is the newest that compiled code in one of them, and a cell of a run not
        shown has no path among the open ones (``open_cells`` matches the run shown only)."""
        out = self.open_paths()
        try:
            out.update(k for k in map(cell_key, self.open_cell_texts().values()) if k is not None)
            for uri in self.virtual_uris():
                doc = self.workspace.text_documents.get(uri)
                if doc is not None:
                    out.update(virtual.block_keys(doc.source))
        except RuntimeError:  # the documents changed under the poll thread: next poll
            pass
        return out

    def open_paths(self) -> set[str]:
        """Real paths of the open Python documents (the run shown is chosen by them)."""
        try:
            return set(self.open_uris())
        except RuntimeError:  # the documents dict changed under the poll thread: next poll
            return set()

    def publish(self, path: str, uri: str | None = None, force: bool = False) -> None:
        uri = uri or path_uri(path)
        verdict = self.current_verdict()
        view = self.view(path, uri)
        diagnostics: list[types.Diagnostic] = []
        if is_virtual(path):
            # jupyterlab-lsp's document of a whole notebook: every recorded block's findings,
            # each at its block's lines, in one list
            locate = self.locate()  # once for the document, not per block
            for block, block_view in self.block_views(uri):
                diagnostics += [shifted_diagnostic(d, block.start) for d in self.diagnostics(block.path, block_view, locate)]
            view = None  # (verify's hints are about files)
        elif view is not None:
            diagnostics = self.diagnostics(path, view)
        diagnostics = verify_mod.annotate(diagnostics, verdict, self.index.run_path) + verify_mod.verified_hints(verdict, path, view)
        key = json.dumps(_converter.unstructure(diagnostics), sort_keys=True)
        if not force and self.published.get(uri, "[]") == key:
            return
        self.published[uri] = key
        version = view.version if view is not None else None
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    def diagnostics(self, path: str, view: TextView, locate: diag_mod.Locate | None = None) -> list[types.Diagnostic]:
        """The diagnostics of ``path``'s findings on ``view``'s text."""
        placed = self.placed(view)
        built = diag_mod.build(placed, view, self.settings, locate or self.locate())
        return edits_mod.annotate(placed, built, self.index.baselines.get(norm_path(path)), view.lines)

    def block_views(self, uri: str) -> list[tuple[virtual.Block, TextView]]:
        """Each block of a virtual document with a view of its own lines (findings are
        placed on them as on a cell or file of their own)."""
        doc = self.workspace.text_documents.get(unquote(uri))
        if doc is None:
            return []
        codec = self.workspace.position_codec
        return [(b, TextView(b.path, doc.uri, b.lines, codec, doc.version)) for b in self.blocks_of(uri)]

    def show_verdict(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """A verify's outcome is news the user asked for: a visible message, and the log."""
        log.info("%s", message)
        try:
            self.window_show_message(types.ShowMessageParams(kind, message))
            self.window_log_message(types.LogMessageParams(kind, message))
        except Exception:  # no client connected: the log above keeps it
            pass

    def rerun_dir(self, run_path: str) -> str:
        """Where verify re-runs ``run_path``'s program: the workspace folder its paths map to
        (a run recorded in another checkout re-runs the edits made here), else its own
        recorded directory when that is in the workspace."""
        shown = self.source.run
        try:
            run = shown if shown is not None and Path(shown.path).resolve() == Path(run_path).resolve() else Run(run_path)
            ws = Workspace.for_run(self.roots, run)
        except Exception:  # noqa: BLE001 - an unreadable run: the CLI says why
            return str(self.roots[0])
        if ws.recorded_cwd and any(inside(ws.recorded_cwd, r) for r in self.roots):
            return ws.recorded_cwd
        return str(ws.local_cwd or self.roots[0])

    def current_verdict(self) -> verify_mod.Verdict | None:
        """The verify verdict about the run shown: this session's, else the one an earlier
        verify saved in the run (``verify.json``)."""
        if (
            self.verdict is not None
            and self.index.run_path
            and Path(self.verdict.after_run).resolve() == Path(self.index.run_path).resolve()
        ):
            return self.verdict
        if self._saved_verdict[0] != self.index.run_path:
            self._saved_verdict = (self.index.run_path, verify_mod.from_run(self.index.run_path))
        return self._saved_verdict[1]

    def publish_all(self, changed_only: RunIndex | None = None) -> None:
        """Republish every file whose diagnostics changed (and clear those now empty).

        ``changed_only``: the previous index of the same run; files whose findings did not
        change since it are skipped without recomputing (a growing run touches few files).
        """
        open_docs = self.open_uris()
        targets: dict[str, str] = {}
        cells = self.run_cells()
        for path in self.index.files:
            if self.reported(path) and (path in open_docs or path not in cells):  # (a cell: only where it is open)
                targets[path] = open_docs.get(path) or path_uri(path)
        targets.update(open_docs)
        for uri in list(self.published):
            published = uri_path(uri)
            if published is not None:
                targets.setdefault(norm_path(published), uri)
        for target, uri in targets.items():
            if changed_only is not None and uri in self.published and not is_virtual(target):
                before, now = changed_only.files.get(target), self.index.files.get(target)
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
                self.say(f"diagnostics for {path} failed: {type(exc).__name__}: {exc}", types.MessageType.Error)

        self._pending[uri] = asyncio.get_running_loop().create_task(later())

    def document(self, uri: str, line: int = 0) -> tuple[str, TextView, int] | None:
        """(path, view, first line) for a request on ``uri`` at ``line``; None for what we do
        not report on. The first line is where the view starts in the document: 0, but for
        a virtual document, whose block holding ``line`` is the view."""
        path = uri_path(uri)
        if path is not None and is_virtual(path):
            for block, view in self.block_views(uri):
                if block.start <= line < block.end:
                    return block.path, view, block.start
            return None
        found = self._document(uri, path)
        return (*found, 0) if found is not None else None

    def _document(self, uri: str, path: str | None) -> tuple[str, TextView] | None:
        if path is None:
            # a notebook cell: the recorded cell whose text it holds
            cell = next((p for p, u in self.open_cells().items() if unquote(u) == unquote(uri)), None)
            view = self.view(cell, uri) if cell is not None else None
            return (cell, view) if cell is not None and view is not None else None
        doc = self.workspace.text_documents.get(unquote(uri))
        if not self.reported(path, doc.language_id if doc is not None else None):
            return None
        view = self.view(path, uri)
        return (path, view) if view is not None else None

    def shows_notebook_run(self) -> bool:
        """The run shown is a notebook cell's: verify, which re-runs a script, cannot re-run
        it (``dyn-inspect verify`` says so), so it is not offered."""
        run = self.source.run
        start = run.model.run_start if run is not None else None
        return start is not None and start.mode == "notebook"

    def view_of_path(self, path: str) -> TextView | None:
        uri = self.open_uris().get(norm_path(path))
        return self.view(path, uri) if self.reported(path) else None

    # -- commands ---------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """``dynInspect.summary`` (``outputs.lsp.LspSummary``)."""
        return command_result(
            LspSummary(
                breaks=self.index.unique_breaks,
                recompiles=self.index.recompiles,
                run=self.index.run_path,
                degraded=list(self.index.degraded),
            )
        )

    def details(self, file: str, line: int) -> dict[str, Any]:
        """``dynInspect.showDetails`` (``outputs.lsp.LspFunctionDetails``)."""
        ff = self.index.for_path(file)
        view = self.view_of_path(file)
        for fn in ff.functions if ff is not None else []:
            now = place_function(view.lines, fn) if view is not None else None
            if line in (now, fn.def_line):
                found = {"found": True, "run": self.index.run_path, **lens_mod.details(fn, now or fn.def_line)}
                found["markdown"] = lens_mod.details_markdown(found)
                return command_result(msgspec.convert(found, LspFunctionDetails))
        return command_result(LspFunctionDetails(found=False, run=self.index.run_path, file=file, line=line))

    def present(self, details: dict[str, Any]) -> None:
        """Show a function's details where the client can: a generated read-only Markdown
        document (``window/showDocument``), else a message. Editors other than VS Code drop
        a command's JSON result, so this is what their users see."""
        mode = self.settings.show_content
        if mode == "none":
            return
        if not details.get("found"):
            self.window_show_message(
                types.ShowMessageParams(
                    types.MessageType.Info,
                    f"dyn-inspect: no compiled function at {details.get('file')}:{details.get('line')} in the run shown",
                )
            )
            return
        caps = self.client_capabilities.window
        can_show = bool(caps and caps.show_document and caps.show_document.support)
        if mode == "message" or (mode == "auto" and not can_show):
            self.window_show_message(
                types.ShowMessageParams(types.MessageType.Info, f"dyn-inspect: {details.get('function')}: {details.get('title')}")
            )
            return
        path = write_details_document(details)
        if path is None:
            self.window_show_message(
                types.ShowMessageParams(types.MessageType.Info, f"dyn-inspect: {details.get('function')}: {details.get('title')}")
            )
            return
        self.window_show_document(types.ShowDocumentParams(uri=path_uri(str(path)), take_focus=True))

    def run_arg(self, args: tuple[Any, ...]) -> str | None:
        first = args[0] if args else None
        return first if isinstance(first, str) and first else self.index.run_path


def shifted(rng: types.Range, lines: int) -> types.Range:
    return types.Range(types.Position(rng.start.line + lines, rng.start.character), types.Position(rng.end.line + lines, rng.end.character))


def shifted_diagnostic(d: types.Diagnostic, lines: int) -> types.Diagnostic:
    """``d`` on a block placed ``lines`` down its document (its related locations were
    placed by ``locate`` already)."""
    return attrs.evolve(d, range=shifted(d.range, lines))


def command_result(value: msgspec.Struct) -> dict[str, Any]:
    """A command's result as plain JSON data (what pygls sends), from its typed output."""
    data: dict[str, Any] = msgspec.to_builtins(value)
    return data


def _private_folder(path: Path) -> bool:
    """Create ``path`` (0700) if missing; True when it is a real directory of ours that
    nobody else can write (a planted symlink or another user's folder is refused)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    own = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    if not (stat.S_ISDIR(st.st_mode) and own) or st.st_mode & 0o022:
        return False
    if st.st_mode & 0o077:
        # ours and nobody else could write in it (an earlier version made it 0755): only
        # readable by others, so nothing can have been planted; close it and use it
        try:
            os.chmod(path, 0o700, follow_symlinks=False)
        except (OSError, NotImplementedError):
            return False
    return True


def write_details_document(details: dict[str, Any]) -> Path | None:
    """The details as ``<tmp>/dyn-inspect-<uid>/details/<function>-<line>.md`` (read-only:
    it is generated, edits would be lost). ``/tmp`` is shared: each folder must be ours and
    private, and the file is created anew without following links (a planted symlink is
    never written through). None when it cannot be written safely."""
    base = Path(tempfile.gettempdir()) / f"dyn-inspect-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    folder = base / "details"
    if not (_private_folder(base) and _private_folder(folder)):
        return None
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(details.get("function", "function")))[:80]
    path = folder / f"{name}-{details.get('line', 0)}.md"
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # our own folder: only we could have put it there
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(details.get("markdown") or lens_mod.details_markdown(details))
            os.fchmod(f.fileno(), 0o400)
    except OSError:
        return None
    return path


def guarded(empty: Callable[[], object]) -> Callable[[F], F]:
    """Answer ``empty()`` and log once instead of failing a request."""

    def wrap(f: F) -> F:
        if asyncio.iscoroutinefunction(f):

            @functools.wraps(f)
            async def async_wrapper(*args: Any) -> object:
                try:
                    return await f(*args)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    _server_of(args).say(f"{f.__name__} failed: {type(exc).__name__}: {exc}", types.MessageType.Error)
                    return empty()

            return async_wrapper  # type: ignore[return-value]  # same signature as f (functools.wraps)

        @functools.wraps(f)
        def wrapper(*args: Any) -> object:
            try:
                return f(*args)
            except Exception as exc:
                _server_of(args).say(f"{f.__name__} failed: {type(exc).__name__}: {exc}", types.MessageType.Error)
                return empty()

        return wrapper  # type: ignore[return-value]  # same signature as f (functools.wraps)

    return wrap


_current: DynInspectServer | None = None


def _server_of(args: tuple[Any, ...]) -> DynInspectServer:
    if args and isinstance(args[0], DynInspectServer):
        return args[0]
    assert _current is not None
    return _current


def create_server() -> DynInspectServer:
    global _current
    server = _current = DynInspectServer()

    @server.feature(types.INITIALIZE)
    @guarded(lambda: None)
    def initialize(ls: DynInspectServer, params: types.InitializeParams) -> None:
        ls.set_roots(params)
        ls.configure(params.initialization_options)
        ls.say(f"dyn-inspect {TOOL_VERSION} language server; workspace {', '.join(map(str, ls.roots))}; runs in {ls.source.root}")

    @server.feature(types.INITIALIZED)
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

    @server.feature(types.SHUTDOWN)
    @guarded(lambda: None)
    def shutdown(ls: DynInspectServer, params: None) -> None:
        ls.stop_following()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
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
        ls.publish_all()
        ls.refresh_lenses()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded(lambda: None)
    def did_open(ls: DynInspectServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        path = uri_path(doc.uri)
        if path is None or not ls.reported(path, doc.language_id):
            return
        ls.publish(path, doc.uri, force=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded(lambda: None)
    def did_change(ls: DynInspectServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = uri_path(uri)
        doc = ls.workspace.text_documents.get(unquote(uri))
        if path is None or not ls.reported(path, doc.language_id if doc is not None else None):
            return
        ls.schedule_publish(path, uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded(lambda: None)
    def did_close(ls: DynInspectServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = uri_path(uri)
        ls.forget(uri)
        if path is not None and ls.reported(path):
            ls.publish(path, uri)  # back to the file on disk

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    @guarded(lambda: None)
    def notebook_changed(ls: DynInspectServer, params: Any) -> None:
        # pygls has updated its notebook and cell documents: republish onto the open cells
        # (a newly opened cell is matched by its text; an edited one keeps its match).
        ls.publish_all()

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded(lambda: None)
    def hover(ls: DynInspectServer, params: types.HoverParams) -> types.Hover | None:
        found = ls.document(params.text_document.uri, params.position.line)
        if found is None:
            return None
        path, view, start = found
        position = types.Position(params.position.line - start, params.position.character)
        answer = hover_mod.hover(view, ls.placed(view), ls.index.for_path(path), position)
        if answer is not None and answer.range is not None:
            answer.range = shifted(answer.range, start)
        return answer

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    @guarded(list)
    def code_lens(ls: DynInspectServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        uri = params.text_document.uri
        path = uri_path(uri)
        if path is not None and is_virtual(path):
            return [
                types.CodeLens(shifted(lens.range, block.start), lens.command)
                for block, view in ls.block_views(uri)
                for lens in lens_mod.lenses(view, ls.index.for_path(block.path))
            ]
        found = ls.document(uri)
        if found is None:
            return []
        path, view, _ = found
        return lens_mod.lenses(view, ls.index.for_path(path))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    @guarded(list)
    def code_action(ls: DynInspectServer, params: types.CodeActionParams) -> list[types.CodeAction | types.Command]:
        found = ls.document(params.text_document.uri)
        path = uri_path(params.text_document.uri)
        if found is None or (path is not None and is_virtual(path)):
            return []  # (jupyterlab-lsp applies no code actions)
        _, view, _ = found
        out = actions_mod.code_actions(view, ls.placed(view), params, ls.index.run_path, ls.view_of_path, ls.index.inlined_logging)
        if out and ls.index.run_path and not params.context.only and not ls.shows_notebook_run():
            out.append(
                types.Command(
                    title="dyn-inspect: verify the fix (re-run under the recorder)",
                    command=verify_mod.VERIFY,
                    arguments=[ls.index.run_path],
                )
            )
        return out

    # -- workspace/executeCommand (the contract with the VS Code extension) -------------

    @server.command(SELECT_RUN)
    @guarded(dict)
    async def select_run(ls: DynInspectServer, *args: Any) -> dict[str, Any]:
        run = args[0] if args and isinstance(args[0], str) and args[0] else None
        ls.settings = replace(ls.settings, run=run)
        ls.source.configure(ls.settings.runs_dir, run)
        await ls.refresh()
        return ls.summary()

    @server.command(LIST_RUNS)
    @guarded(list)
    async def list_runs(ls: DynInspectServer, *args: Any) -> list[dict[str, Any]]:
        def rows() -> list[dict[str, Any]]:
            out = []
            for path in ls.source.list_runs():
                row = ls.listings.row(path, ls.source.run)
                if row is not None:
                    out.append(command_result(row))
            return out

        async with ls.lock:
            return await asyncio.to_thread(rows)

    @server.command(verify_mod.VERIFY)
    @guarded(dict)
    async def verify(ls: DynInspectServer, *args: Any) -> dict[str, Any]:
        run_path = args[0] if args and isinstance(args[0], str) and args[0] else ls.index.run_path
        if not run_path:
            ls.say("no run to verify", types.MessageType.Warning)
            return {}
        ls.say(f"verifying — re-running the program of {Path(run_path).name}…")
        try:
            verdict = await asyncio.to_thread(verify_mod.run_verify, run_path, cwd=ls.rerun_dir(run_path))
        except Exception as exc:  # noqa: BLE001 - the re-run failed: say why, change nothing
            ls.show_verdict(f"dyn-inspect: verify failed: {exc}", types.MessageType.Error)
            return command_result(LspVerifyError(error=str(exc)))
        ls.verdict = verdict
        await ls.refresh()
        ls.publish_all()
        ls.show_verdict(verdict.message(), types.MessageType.Info if verdict.verified else types.MessageType.Warning)
        try:
            return command_result(msgspec.convert(verdict.data, VerifyReport))
        except msgspec.ValidationError:  # written by an older dyn-inspect: passed on as it is
            return verdict.data

    @server.command(SUMMARY)
    @guarded(dict)
    def summary(ls: DynInspectServer, *args: Any) -> dict[str, Any]:
        return ls.summary()

    @server.command(SHOW_DETAILS)
    @guarded(dict)
    def show_details(ls: DynInspectServer, *args: Any) -> dict[str, Any]:
        if len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], int):
            return command_result(LspFunctionDetails(found=False, error="expected arguments [file, line]"))
        file = uri_path(args[0]) if args[0].startswith("file:") else args[0]
        result = ls.details(file or args[0], args[1])
        ls.present(result)
        return result

    @server.command(SHOW_IN_TUI)
    @guarded(lambda: None)
    def show_in_tui(ls: DynInspectServer, *args: Any) -> str | None:
        run = ls.run_arg(args)
        if run is None:
            ls.say("no run to show")
            return None
        command = f"dyn-inspect open {shlex.quote(run)}"
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, f"Open the inspector in a terminal: {command}"))
        return command

    @guarded(lambda: None)
    def export_bug_report(ls: DynInspectServer, *args: Any) -> str | None:
        run = ls.run_arg(args)
        if run is None:
            ls.say("no run to export")
            return None
        out = (
            args[1] if len(args) > 1 and isinstance(args[1], str) and args[1] else os.path.join(str(ls.roots[0]), "dyn-inspect-report.zip")
        )
        command = f"dyn-inspect export {shlex.quote(run)} -o {shlex.quote(out)}"
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, f"Export the bug report in a terminal: {command}"))
        return command

    return server
