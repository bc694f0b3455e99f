"""The language server (pygls 2): its state, lifecycle and the following of the run.

Layout after Microsoft's vscode-pylint ``lsp_server.py`` and ruff's server: one
``LanguageServer`` whose handlers are thin and delegate to small modules, each a part a
newcomer can name:

- ``features`` — the LSP features registered (lifecycle, configuration, document sync,
  hover, code lenses, code actions) and ``commands`` — ``workspace/executeCommand``, the
  contract with the VS Code extension (``details_file``: details shown by the server);
- ``open_documents`` (``ls.docs``) — the open buffers, notebook cells and jupyterlab-lsp's
  virtual documents (``notebook_cells``, ``virtual_notebooks``), and which of the run's
  files each holds; ``documents`` — their text, else the file on disk;
- ``publishing`` (``ls.publisher``) — diagnostics pushed and code lens refreshes;
- ``settings`` (what the client configures), ``run_source``/``run_listing`` (which run,
  following it; the listed runs), ``findings_cache`` (the per-file index the report layer
  builds, ``inspector/reports/findings.py``, saved and read back);
- the translators of findings onto the current text: ``placement``/``source_lines``,
  ``diagnostics``, ``hover``, ``code_lens``, ``code_actions``, ``edits``, ``verify``.

Concurrency: one asyncio task polls the run every ``POLL_S``; reading the log and building
the index happen in a worker thread under a lock, and the finished ``RunIndex`` is swapped
in whole. Handlers only read the current index, so a request is answered from a complete
snapshot and never waits for a big run to load. Every handler is guarded
(``wire.guarded``): an unexpected error is logged once (``window/logMessage``) and
answered with an empty result.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from dyn_inspect.inspector.events import TOOL_VERSION
from dyn_inspect.inspector.reports.findings import RunIndex, build_index
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace
from dyn_inspect.lsp import findings_cache, wire
from dyn_inspect.lsp.documents import DiskCache, uri_path
from dyn_inspect.lsp.open_documents import OpenDocuments
from dyn_inspect.lsp.publishing import Publisher
from dyn_inspect.lsp.run_listing import ListingCache
from dyn_inspect.lsp.run_source import POLL_S, PollResult, RunSource, touch_of
from dyn_inspect.lsp.settings import Settings, apply_settings
from dyn_inspect.lsp.virtual_notebooks import real_root
from dyn_inspect.lsp.wire import AnsweringProtocol

log = logging.getLogger(__name__)

# A run this big with no saved findings shows the open files' findings first (their own
# build) and then the rest: at 1M events 0.45-0.55 s, then 0.45-0.5 s more, where the
# whole build was 0.9-1.0 s before anything showed. Smaller runs build whole at once.
OPEN_FIRST_EVENTS = 50_000
LENS_REFRESH_S = 1.0


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
        self.docs = OpenDocuments(self)
        self.publisher = Publisher(self)
        self.source = RunSource(self.roots[0], open_files=self.docs.open_for_choosing)
        self.index = RunIndex()
        self.disk = DiskCache()
        self.listings = ListingCache()
        self.said: set[str] = set()
        self._lock: asyncio.Lock | None = None
        self._peeked = False  # the first poll tried the findings cache before reading a run
        # the open files' findings were shown first: (run, workspace, event count) to build whole
        self._rest: tuple[Run, Workspace, int] | None = None
        self._follow: asyncio.Task[None] | None = None
        self._cells_seen: set[str] = set()  # the run's notebook cells when last published

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
        self.source = RunSource(self.roots[0], roots=self.roots, open_files=self.docs.open_for_choosing)

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
            open_now = self.docs.open_paths()
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
        elif self.workspace.notebook_documents and self.docs.run_cells() != self._cells_seen:
            # The run was read after its findings came from the cache: only now are its
            # notebook cells known, and open cells can be matched to them.
            self.publisher.publish_all()
        self._cells_seen = self.docs.run_cells() if self.workspace.notebook_documents else set()
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
            self.publisher.publish_all()
        else:
            self.publisher.publish_all(changed_only=old)
        self.publisher.lenses_due = True
        log.debug("republished in %.1f ms", (time.perf_counter() - t0) * 1000)

    async def follow(self) -> None:
        while True:
            try:
                await self.refresh()
                # Lens titles change with every compile of a live run: ask the client to
                # re-read them at most once a second, not at every poll.
                if self.publisher.lenses_due and self.publisher.lenses_sent_s() >= LENS_REFRESH_S:
                    self.publisher.refresh_lenses()
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


def create_server() -> DynInspectServer:
    # The handlers' modules import this one: pygls resolves their ``ls: DynInspectServer``
    # annotations when a command is called, so the class must be there at run time.
    from dyn_inspect.lsp import commands, features

    server = DynInspectServer()
    wire.answering(server)
    features.register(server)
    commands.register(server)
    return server
