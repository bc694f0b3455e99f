"""The findings of a finished run, kept between language-server sessions.

Building the findings (``build_index``) walks the whole model: a second or two for a
million-event run, paid every time an editor starts the server. For a finished run opened
from its index with nothing appended, the findings for a workspace depend only on that
index and on the workspace's files, so they are saved (msgpack, in this user's cache:
``~/.cache/dyn-inspect/findings/``) and read back at the next start — even before the run
is read (``peek``), when its index still covers it whole. An entry is used only for the
same run (path and index MAC), the same workspace roots, the same dyn-inspect code (``user_cache.code_fingerprint``), and while
every file it describes has the size and mtime it had; else the findings are built again. The cache is this user's own (0600 files in a 0700
directory), never a run directory: nothing here comes from a run someone sent.

Two kinds of entry. The server saves what it built under its own roots (an exact key).
``lsp.precompute`` saves a finished run's findings when its index is written, before any
editor has said which folder it opens: built with the run's working directory as the only
root, and kept under a key without roots together with their ``Scope`` — the recorded
paths the build answered with themselves (``inside``) and with nothing (``outside``). The
findings depend on the roots only through those answers, so the entry serves a server
whose roots give every one of them the same answer (the run's files inside its roots,
nothing else in them or mapped onto them); a build that mapped a recorded path onto
another file is never saved that way. A server looks for its exact entry first.
"""

from __future__ import annotations

import dataclasses
import gc
import os
from pathlib import Path

import msgspec

from dyn_inspect.engine import user_cache
from dyn_inspect.inspector.index import identity
from dyn_inspect.inspector.locations import file_version
from dyn_inspect.inspector.reports.findings import FileFindings, RunIndex
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace
from dyn_inspect.lsp.run_source import Touch

FOLDER = "findings"  # (user_cache.PRODUCTS)


class Scope(msgspec.Struct):
    """The roots an entry saved without roots is true for (see the module's docstring)."""

    inside: list[str]  # recorded paths answered with themselves: the roots must hold each
    outside: list[str]  # recorded paths answered with nothing: the roots must give nothing
    recorded_cwd: str | None
    local_cwd: str | None

    def holds_for(self, roots: list[Path]) -> bool:
        """Whether a ``Workspace`` of ``roots`` answers every recorded path as the build did."""
        ws = Workspace(roots, self.recorded_cwd, Path(self.local_cwd) if self.local_cwd else None)
        if not all(ws.contains(p) for p in self.inside):
            return False
        return all(ws.maps_to_nothing(p) for p in self.outside)


class _Entry(msgspec.Struct):
    key: bytes
    files: dict[str, tuple[int, int] | None]  # path -> (mtime_ns, size) when built (None: absent)
    index: RunIndex  # without its ``files``: those follow, one undecoded part per file
    findings: dict[str, msgspec.Raw]
    touch: Touch | None = None  # which workspace files the run compiled (choosing a run)
    scope: Scope | None = None  # saved without roots: the roots it is true for


_file_decoder = msgspec.msgpack.Decoder(FileFindings)


class _LazyFiles(dict[str, FileFindings]):
    """``RunIndex.files`` read back: each file's findings decoded when first asked for (the
    editor opens a few files of a run that spans hundreds)."""

    def __init__(self, raw: dict[str, msgspec.Raw]) -> None:
        super().__init__(raw)  # type: ignore[arg-type]  # values are Raw until asked for

    def __getitem__(self, path: str) -> FileFindings:
        value = super().__getitem__(path)
        if isinstance(value, msgspec.Raw):
            value = _file_decoder.decode(value)
            super().__setitem__(path, value)
        return value

    def get(self, path: str, default: FileFindings | None = None) -> FileFindings | None:  # type: ignore[override]
        return self[path] if path in self else default

    def values(self):  # type: ignore[no-untyped-def]  # noqa: ANN201
        return [self[p] for p in self]

    def items(self):  # type: ignore[no-untyped-def]  # noqa: ANN201
        return [(p, self[p]) for p in self]


def _key_of(run_path: Path, index_id: bytes, roots: list[Path] | None) -> bytes:
    # The model is a function of the index it was read from (nothing appended), and the
    # workspace's recorded/local directories of the model and the run's place: the index's
    # identity, the run's path and the roots decide the findings. ``roots`` None: the
    # entry that says itself which roots it holds for (``Scope``).
    # The code that built them is part of the key (``user_cache.derived_key``): a changed
    # headline or analysis builds them again.
    where = ["any roots"] if roots is None else sorted(str(r) for r in Workspace(roots).roots)
    return user_cache.derived_key(FOLDER, os.path.realpath(run_path), index_id.hex(), *where)


def _usable(run: Run) -> bool:
    """Exactly an index's model, finished: its findings can be reused."""
    return run.index_id is not None and not run.read_on_open and run.model.finished


def _key(run: Run, ws: Workspace) -> bytes | None:
    if not _usable(run):
        return None  # not exactly an index's model (or still growing): nothing to reuse
    assert run.index_id is not None
    return _key_of(run.path, run.index_id, [Path(r) for r in ws.roots])


def _lookup(run_path: Path, index_id: bytes, roots: list[Path]) -> _Entry | None:
    """The entry for these roots: the server's own, else one saved without roots that
    holds for them."""
    entry = _read(_key_of(run_path, index_id, roots))
    if entry is not None:
        return entry
    general = _read(_key_of(run_path, index_id, None))
    if general is not None and general.scope is not None and general.scope.holds_for(roots):
        return general
    return None


def _folder() -> Path:
    return user_cache.folder(FOLDER)


def load(run: Run, ws: Workspace) -> RunIndex | None:
    """The saved findings of ``run`` for ``ws``, if still true; else None."""
    if not _usable(run):
        return None
    assert run.index_id is not None
    entry = _lookup(run.path, run.index_id, [Path(r) for r in ws.roots])
    return entry.index if entry is not None else None


def peek(run_path: Path, roots: list[Path]) -> tuple[RunIndex, Touch] | None:
    """The saved findings (and touch) of the run at ``run_path`` for ``roots`` without
    reading the run: when its index still covers it whole (``index.identity``)."""
    index_id = identity(run_path)
    if index_id is None:
        return None
    entry = _lookup(run_path, index_id, roots)
    if entry is None or entry.touch is None:
        return None
    return entry.index, entry.touch


def _read(key: bytes) -> _Entry | None:
    data = user_cache.read(_folder(), key)
    if data is None:
        return None
    gc_was_enabled = gc.isenabled()
    gc.disable()  # many small acyclic objects: the collector's passes would double the time
    try:
        entry = msgspec.msgpack.decode(data, type=_Entry)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    finally:
        if gc_was_enabled:
            gc.enable()
    if entry.key != key:
        return None
    if any(file_version(p) != stamp for p, stamp in entry.files.items()):
        return None  # a file changed since: its findings (lines, texts) may differ
    entry.index.files = _LazyFiles(entry.findings)
    return entry


def save(run: Run, ws: Workspace, index: RunIndex, touch: Touch | None = None) -> None:
    """Keep ``index`` (and the run's ``touch``), built with ``ws``, for the next session
    under the server's roots (best effort)."""
    key = _key(run, ws)
    if key is not None:
        _write(key, ws, index, touch, None)


def save_for_any_roots(run: Run, ws: Workspace, index: RunIndex, touch: Touch) -> bool:
    """Keep ``index``, built with ``ws`` (and ``touch``, with the same ``ws``), for every
    server whose roots answer its recorded paths as ``ws`` did; False when not saved (a
    path was mapped onto another file, which other roots may map otherwise)."""
    if not _usable(run) or ws.remapped:
        return False
    assert run.index_id is not None
    scope = Scope(
        inside=sorted(ws.inside),
        outside=sorted(ws.outside),
        recorded_cwd=ws.recorded_cwd,
        local_cwd=str(ws.local_cwd) if ws.local_cwd is not None else None,
    )
    return _write(_key_of(run.path, run.index_id, None), ws, index, touch, scope)


def _write(key: bytes, ws: Workspace, index: RunIndex, touch: Touch | None, scope: Scope | None) -> bool:
    # Every workspace file the build read (def lines, line texts, the lr fix's parse)
    # besides those it describes: a change to any of them may change the findings.
    files = {p: file_version(p) for p in {*index.files, *index.baselines, *ws.inside}}
    findings = {p: msgspec.Raw(msgspec.msgpack.encode(ff)) for p, ff in index.files.items()}
    entry = _Entry(key, files, dataclasses.replace(index, files={}), findings, touch, scope)
    return user_cache.write(_folder(), key, msgspec.msgpack.encode(entry))
