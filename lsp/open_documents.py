"""What the editor has open, and which of the shown run's files and cells each document holds.

``OpenDocuments`` (the server's ``ls.docs``) answers, for the current run and index:

- which files the editor hears about at all (``reported``): Python files inside the
  workspace, the run's notebook cells (only where a cell holding their text is open) and
  jupyterlab-lsp's virtual documents of notebooks (``lsp.virtual_notebooks``);
- the open documents by path (``open_uris``), the open notebook cells matched to the run's
  recorded cells (``open_cells``, ``lsp.notebook_cells``), the recorded cells found as
  blocks of a virtual document (``blocks_of``, ``block_views``);
- the text a request or a publish is answered on (``document``, ``view``, ``view_of_path``)
  and the findings placed on it (``placed``, ``lsp.placement``);
- where a recorded location shows in the editor (``locate``).

It keeps only what it derived from the documents (cell matches, blocks, the run's cell
paths); the documents themselves are pygls's (``ls.workspace``), the run and its findings
the server's (``ls.source``, ``ls.index``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import unquote

import attrs
from lsprotocol import types

from dyn_inspect.inspector.workspace import norm_path
from dyn_inspect.lsp import diagnostics as diag_mod
from dyn_inspect.lsp import virtual_notebooks as virtual
from dyn_inspect.lsp.documents import TextView, is_python, path_uri, uri_path, view_for
from dyn_inspect.lsp.notebook_cells import cell_key, match_cells
from dyn_inspect.lsp.placement import Placed, place
from dyn_inspect.lsp.virtual_notebooks import is_virtual

if TYPE_CHECKING:
    from dyn_inspect.lsp.server import DynInspectServer


def shifted(rng: types.Range, lines: int) -> types.Range:
    return types.Range(types.Position(rng.start.line + lines, rng.start.character), types.Position(rng.end.line + lines, rng.end.character))


def shifted_diagnostic(d: types.Diagnostic, lines: int) -> types.Diagnostic:
    """``d`` on a block placed ``lines`` down its document (its related locations were
    placed by ``locate`` already)."""
    return attrs.evolve(d, range=shifted(d.range, lines))


class OpenDocuments:
    def __init__(self, ls: DynInspectServer) -> None:
        self.ls = ls
        # (run, its recorded cell -> open cell URI): the matches of the run shown only
        self._cell_matches: tuple[str | None, dict[str, str]] = (None, {})
        self._run_cells: tuple[tuple[str, int] | None, set[str]] = (None, set())  # (run, cells) -> paths
        # virtual document URI -> ((run, cells, text), its blocks): found again on edits only
        # (jupyterlab-lsp may send a changed text under the same version)
        self._blocks: dict[str, tuple[tuple[str, int, str], list[virtual.Block]]] = {}

    def reported(self, path: str, language_id: str | None = None) -> bool:
        """Files the editor hears about: Python files inside the workspace, the run's
        notebook cells (published only where a cell holding their text is open) and
        jupyterlab-lsp's virtual documents of notebooks (``lsp.virtual_notebooks``)."""
        if is_virtual(path):
            return language_id in (None, "", "python") and self.ls.ws.contains(path)
        return is_python(path, language_id) and (self.ls.ws.contains(path) or norm_path(path) in self.run_cells())

    def run_cells(self) -> set[str]:
        """The files IPython compiled the shown run's notebook cells under."""
        run = self.ls.source.run
        if run is None:
            return set()
        # Asked once per document per publish: the paths are normalized again only when
        # the run shown or its number of cells changes.
        key = (str(run.path), len(run.model.cells))
        if self._run_cells[0] != key:
            self._run_cells = (key, {norm_path(c) for c in run.model.cells})
        return self._run_cells[1]

    def view(self, path: str, uri: str | None = None) -> TextView | None:
        return view_for(self.ls.workspace, self.ls.disk, path, uri)

    def placed(self, view: TextView) -> list[Placed]:
        return place(self.ls.index.for_path(view.path), view.lines, self.ls.settings, self.ls.disk.lines)

    def open_uris(self) -> dict[str, str]:
        """norm path -> URI of each open file document, and of each open notebook cell that
        is a cell of the run shown (its path: the file IPython compiled it under)."""
        out: dict[str, str] = {}
        for uri, doc in self.ls.workspace.text_documents.items():
            path = uri_path(uri)
            if path and self.reported(path, doc.language_id):
                out[norm_path(path)] = doc.uri
        out.update(self.open_cells())
        return out

    def open_cells(self) -> dict[str, str]:
        """norm path of a recorded cell -> URI of the open notebook cell holding its text.
        A cell matched once stays matched while it is open, as an open file does: edits
        move its findings (placement), they do not drop them."""
        run = self.ls.source.run
        if run is None or not run.model.cells or not self.ls.workspace.notebook_documents:
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
        for uri in list(self.ls.workspace.text_documents):
            path = uri_path(uri)
            if path is not None and is_virtual(path):
                out.append(uri)
        return out

    def blocks_of(self, uri: str) -> list[virtual.Block]:
        """The recorded cells a virtual document holds, in its order: the run shown's cells
        found in it, or followed into it through edits. (JupyterLab's file editor sends a
        file under its own name: that is a file like any other.)"""
        doc = self.ls.workspace.text_documents.get(unquote(uri))
        run = self.ls.source.run
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
        for notebook in list(self.ls.workspace.notebook_documents.values()):
            for cell in notebook.cells:
                doc = self.ls.workspace.text_documents.get(unquote(cell.document))
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
                doc = self.ls.workspace.text_documents.get(uri)
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

    def block_views(self, uri: str) -> list[tuple[virtual.Block, TextView]]:
        """Each block of a virtual document with a view of its own lines (findings are
        placed on them as on a cell or file of their own)."""
        doc = self.ls.workspace.text_documents.get(unquote(uri))
        if doc is None:
            return []
        codec = self.ls.workspace.position_codec
        return [(b, TextView(b.path, doc.uri, b.lines, codec, doc.version)) for b in self.blocks_of(uri)]

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
        doc = self.ls.workspace.text_documents.get(unquote(uri))
        if not self.reported(path, doc.language_id if doc is not None else None):
            return None
        view = self.view(path, uri)
        return (path, view) if view is not None else None

    def shows_notebook_run(self) -> bool:
        """The run shown is a notebook cell's: verify, which re-runs a script, cannot re-run
        it (``dyn-inspect verify`` says so), so it is not offered."""
        run = self.ls.source.run
        start = run.model.run_start if run is not None else None
        return start is not None and start.mode == "notebook"

    def view_of_path(self, path: str) -> TextView | None:
        uri = self.open_uris().get(norm_path(path))
        return self.view(path, uri) if self.reported(path) else None
