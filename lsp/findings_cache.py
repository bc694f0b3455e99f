"""The findings of a finished run, kept between language-server sessions.

Building the findings (``build_index``) walks the whole model: a second or two for a
million-event run, paid every time an editor starts the server. For a finished run opened
from its index with nothing appended, the findings for a workspace depend only on that
index and on the workspace's files, so they are saved (msgpack, in this user's cache:
``~/.cache/dyn-inspect/findings/``) and read back at the next start — even before the run
is read (``peek``), when its index still covers it whole. An entry is used only for the
same run (path and index MAC), the same workspace roots, the same dyn-inspect, and while
every file it describes has the size and mtime it had; else the findings are built again. The cache is this user's own (0600 files in a 0700
directory), never a run directory: nothing here comes from a run someone sent.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import os
import tempfile
from pathlib import Path

import msgspec

from dyn_inspect.inspector.events import TOOL_VERSION
from dyn_inspect.inspector.index import cache_dir, identity
from dyn_inspect.inspector.locations import file_version
from dyn_inspect.inspector.run import Run
from dyn_inspect.lsp.findings import FileFindings, RunIndex, Workspace
from dyn_inspect.lsp.run_source import Touch

FORMAT = 2  # bump when RunIndex or the findings' meaning changes
MAX_ENTRIES = 64


class _Entry(msgspec.Struct):
    format: int
    key: bytes
    files: dict[str, tuple[int, int] | None]  # path -> (mtime_ns, size) when built (None: absent)
    index: RunIndex  # without its ``files``: those follow, one undecoded part per file
    findings: dict[str, msgspec.Raw]
    touch: Touch | None = None  # which workspace files the run compiled (choosing a run)


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


def _key_of(run_path: Path, index_id: bytes, roots: list[Path]) -> bytes:
    # The model is a function of the index it was read from (nothing appended), and the
    # workspace's recorded/local directories of the model and the run's place: the index's
    # identity, the run's path and the roots decide the findings.
    h = hashlib.blake2b(digest_size=20)
    for part in (FORMAT, TOOL_VERSION, os.path.realpath(run_path), index_id.hex(), *sorted(str(r) for r in Workspace(roots).roots)):
        h.update(repr(part).encode() + b"\0")
    return h.digest()


def _key(run: Run, ws: Workspace) -> bytes | None:
    if run.index_id is None or run.read_on_open or not run.model.finished:
        return None  # not exactly an index's model (or still growing): nothing to reuse
    return _key_of(run.path, run.index_id, [Path(r) for r in ws.roots])


def _folder() -> Path:
    return cache_dir() / "findings"


def load(run: Run, ws: Workspace) -> RunIndex | None:
    """The saved findings of ``run`` for ``ws``, if still true; else None."""
    key = _key(run, ws)
    entry = _read(key) if key is not None else None
    return entry.index if entry is not None else None


def peek(run_path: Path, roots: list[Path]) -> tuple[RunIndex, Touch] | None:
    """The saved findings (and touch) of the run at ``run_path`` for ``roots`` without
    reading the run: when its index still covers it whole (``index.identity``)."""
    index_id = identity(run_path)
    if index_id is None:
        return None
    entry = _read(_key_of(run_path, index_id, roots))
    if entry is None or entry.touch is None:
        return None
    return entry.index, entry.touch


def _read(key: bytes) -> _Entry | None:
    path = _folder() / f"{key.hex()}.msgpack"
    gc_was_enabled = gc.isenabled()
    gc.disable()  # many small acyclic objects: the collector's passes would double the time
    try:
        data = path.read_bytes()
        entry = msgspec.msgpack.decode(data, type=_Entry)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    finally:
        if gc_was_enabled:
            gc.enable()
    if entry.format != FORMAT or entry.key != key:
        return None
    if any(file_version(p) != stamp for p, stamp in entry.files.items()):
        return None  # a file changed since: its findings (lines, texts) may differ
    entry.index.files = _LazyFiles(entry.findings)
    return entry


def save(run: Run, ws: Workspace, index: RunIndex, touch: Touch | None = None) -> None:
    """Keep ``index`` (and the run's ``touch``) for the next session (best effort)."""
    key = _key(run, ws)
    if key is None:
        return
    files = {p: file_version(p) for p in {*index.files, *index.baselines}}
    folder = _folder()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".findings-", suffix=".tmp", dir=folder)
        findings = {p: msgspec.Raw(msgspec.msgpack.encode(ff)) for p, ff in index.files.items()}
        entry = _Entry(FORMAT, key, files, dataclasses.replace(index, files={}), findings, touch)
        with os.fdopen(fd, "wb") as f:
            f.write(msgspec.msgpack.encode(entry))
        os.replace(tmp, folder / f"{key.hex()}.msgpack")
        _prune(folder)
    except OSError:
        pass


def _prune(folder: Path) -> None:
    entries = sorted(folder.glob("*.msgpack"), key=lambda p: p.stat().st_mtime)
    for old in entries[:-MAX_ENTRIES]:
        try:
            old.unlink()
        except OSError:
            pass
