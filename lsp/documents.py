"""The text a finding is placed on: the open document when the editor has it, else the
file on disk (cached by mtime), with conversions between code points and the client's
position encoding (UTF-16 unless negotiated otherwise)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import PositionCodec, Workspace

from dyn_inspect.inspector.source_files import read_source, source_version
from dyn_inspect.lsp.source_lines import Span

PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
MAX_DISK_BYTES = 8 * 1024 * 1024  # a generated 100 MB "Python" file is not worth reading


@dataclass(frozen=True)
class TextView:
    path: str
    uri: str
    lines: list[str]  # without line terminators
    codec: PositionCodec
    version: int | None = None

    def position(self, line0: int, char: int) -> types.Position:
        if 0 <= line0 < len(self.lines):
            return types.Position(line0, self.codec.client_num_units(self.lines[line0][:char]))
        return types.Position(max(0, line0), 0)

    def range(self, span: Span) -> types.Range:
        return types.Range(self.position(span.line, span.start), self.position(span.line, span.end))

    def char_at(self, pos: types.Position) -> tuple[int, int]:
        """A client position as (0-based line, code-point column)."""
        server = self.codec.position_from_client_units(self.lines, types.Position(pos.line, pos.character))
        return server.line, server.character


def uri_path(uri: str) -> str | None:
    """The filesystem path of a ``file:`` URI, else None (untitled:, git:, ...)."""
    if not uri.startswith("file:"):
        return None
    try:
        return to_fs_path(uri)
    except Exception:  # malformed URI from a client: not a file we know
        return None


def path_uri(path: str) -> str:
    return from_fs_path(path) or Path(path).as_uri()


def is_python(path: str, language_id: str | None = None) -> bool:
    if language_id is not None and language_id not in ("python", ""):
        return False
    return path.endswith(PYTHON_SUFFIXES)


class DiskCache:
    """Lines of files that are not open in the editor, re-read when their mtime changes."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[float, int, list[str]]] = {}

    def lines(self, path: str) -> list[str] | None:
        version = source_version(path)  # the one reader's rules: a FIFO, /dev/stdin or /proc never
        if version is None:
            self._cache.pop(path, None)
            return None
        cached = self._cache.get(path)
        if cached is not None and (cached[0], cached[1]) == version:
            return cached[2]
        if version[1] > MAX_DISK_BYTES:
            return None
        text = read_source(path)
        if text is None:
            return None
        lines = text.splitlines()
        self._cache[path] = (*version, lines)
        return lines


def view_for(workspace: Workspace, disk: DiskCache, path: str, uri: str | None = None) -> TextView | None:
    """The current text of ``path``: the open document if any, else the disk file."""
    uri = uri or path_uri(path)
    codec = workspace.position_codec
    doc = workspace.text_documents.get(unquote(uri))
    if doc is None:
        # Clients may quote differently (%3A vs :): fall back to a path comparison.
        for candidate in workspace.text_documents.values():
            if uri_path(candidate.uri) == path:
                doc = candidate
                break
    if doc is not None:
        return TextView(path, doc.uri, doc.source.splitlines(), codec, doc.version)
    lines = disk.lines(path)
    if lines is None:
        return None
    return TextView(path, uri, lines, codec)
