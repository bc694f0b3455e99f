"""Reading event logs: tolerant, incremental, never executing anything.

A ``LogFile`` remembers its byte offset; ``poll()`` decodes only what was appended since
the last call, so following a live run costs time proportional to the new events. An
unterminated last line is held back until its newline arrives (a writer mid-``write`` or a
killed process); a corrupted line in the middle is counted and skipped; an unknown kind
(a newer writer) is kept as ``UnknownEvent``. Decoding is msgspec's JSON → Structs: no
pickle, no eval.

A run directory is untrusted input (docs/security.md). A log is read only when it is a
regular file inside the run directory (a symlink leaving it, a FIFO, a device, a directory
named ``p2.jsonl``, a symlink loop: ignored, reported once as a ``Problem``) and only when
its first line is a ``log_header`` (else it is not an event log: ignored, reported). A
header whose schema is not a version number is refused like a newer schema. Lines are
bounded (``MAX_LINE``); a line nested too deeply to decode is skipped. C0 control
characters in the log's strings (a ``graph_break`` message with ``\x1b[2J``) are turned
into visible escapes (``safe_text``) as events are decoded, so that no face — CLI, TUI,
LSP, pages — ever sends an escape sequence to a terminal. Payloads are read
through ``read_blob``: only digests of the store's own form, only regular files inside
the run directory, at most ``MAX_BLOB`` bytes.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import msgspec

from dyn_inspect.engine.eventlog import blob_path, valid_digest
from dyn_inspect.engine.schema import SCHEMA_VERSION, AnyEvent, Blob, Chromium, Event, LogHeader, UnknownEvent
from dyn_inspect.inspector.errors import InspectorError

_CHUNK = 4 << 20  # bytes read at a time: bounds memory while opening a large log
# Our events are small (payloads live in blobs): a longer line is damage, skipped unread.
MAX_LINE = 256 << 20
MAX_BLOB = 1 << 30  # the largest payload read (Inductor modules are megabytes)
_generic = msgspec.json.Decoder(dict[str, Any])

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides that
# make text display in another order than it reads ("Trojan Source").
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_CODES = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
# Each one's visible escape, for str.translate: a payload dense with them (a crafted 1 GiB
# blob of NULs) is escaped in C at the size of its result. CONTROL.sub with a Python call
# per match took 80 bytes of memory per character: `graph` on such a blob grew past 24 GB.
_ESCAPES = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" for c in _CONTROL_CODES}


def safe_text(text: str) -> str:
    """``text`` with terminal control characters written as visible escapes (``\\x1b``);
    newlines and tabs are kept."""
    if not text or CONTROL.search(text) is None:
        return text
    return text.translate(_ESCAPES)


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """Decoded JSON data (``msgspec.to_builtins``) with ``fn`` applied to every string value
    in it (keys are kept): a redactor or an escape reaching all of an event or a trace."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    return value


def _safe_value(value: Any) -> Any:
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, list):
        return [_safe_value(v) for v in value]
    if isinstance(value, dict):
        return {safe_text(k) if isinstance(k, str) else k: _safe_value(v) for k, v in value.items()}
    return value


# (msgspec takes `tag=` through its metaclass; mypy looks for it on object.__init_subclass__.)
class LightChromium(Chromium, tag="chromium"):  # type: ignore[call-arg]
    """A ``chromium`` event whose ``args`` stay undecoded JSON (``msgspec.Raw``).

    ``chromium`` is ~60 % of a run's events and its args (cache keys, metrics) most of its
    bytes, yet the model only counts these events; decoding args into dicts dominated
    opening a large run. ``LogFile.poll(light=True)`` returns these (their args stay raw
    bytes). ``Run.events()`` (exports) still returns full ``Chromium``.
    """

    args: msgspec.Raw = msgspec.Raw(b"{}")  # type: ignore[assignment]


_LIGHT_TYPES = tuple(LightChromium if t is Chromium else t for t in AnyEvent.__args__)  # type: ignore[attr-defined]


@functools.cache
def _decoder(light: bool) -> msgspec.json.Decoder[Any]:
    """The event decoder (``light``: chromium args kept raw), made when first needed: each
    takes 5 ms to build, which every start would pay (``dyn-inspect open`` of a run with a
    saved first screen reads no log before its first frame)."""
    if light:
        # (Union[...] of a tuple built at run time: the `X | Y` spelling cannot be written here.)
        return msgspec.json.Decoder(Union[_LIGHT_TYPES])  # type: ignore[valid-type]  # noqa: UP007
    return msgspec.json.Decoder(AnyEvent)


# Kinds never shown as text (timers; their args stay raw): not checked for control chars.
_NO_TEXT = frozenset({LightChromium, Chromium})


def safe_name(name: str) -> str:
    """A file name of the run as text to show: bytes that are not UTF-8 (kept by the file
    system as surrogates) and control characters written as visible escapes. A log named
    ``p1\x1b]0;title\x07.jsonl`` is the run's data too: its name reached the terminal in
    every read warning and in ``export``'s list of what it skipped."""
    if name.isprintable():
        return name
    return safe_text(name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))


@dataclass
class Problem:
    file: str  # the log's name, made safe to show (``safe_name``)
    line: int
    message: str

    def __post_init__(self) -> None:
        self.file = safe_name(self.file)

    def __str__(self) -> str:
        # line 0: the whole file (not read at all)
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


class Refused(Exception):
    """A file of the run that is not read (its ``str`` says why, for one warning)."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_inside(root: Path, path: Path) -> int:
    """A read-only descriptor of ``path`` if it is a regular file inside ``root`` (following
    symlinks that stay inside); raises ``Refused`` otherwise. Never blocks (a FIFO is
    opened non-blocking and then refused)."""
    try:
        real = os.path.realpath(path)
        base = os.path.realpath(root)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on older Pythons
        raise Refused(f"cannot be resolved ({exc})") from None
    if real != base and not real.startswith(base.rstrip(os.sep) + os.sep):
        raise Refused("is a symlink that leaves the run directory; ignored")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused("is a symlink loop; ignored") from None
        raise Refused(f"cannot be read ({exc.strerror}); ignored") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise Refused(f"is {_kind(mode)}, not a regular file; ignored")
    return fd


def read_blob(run_dir: Path, blob: Blob | str) -> bytes | None:
    """A payload's bytes, or None when it is missing, not the store's own digest, not a
    regular file inside the run, or larger than ``MAX_BLOB``."""
    digest = blob if isinstance(blob, str) else blob.digest
    if not valid_digest(digest):
        return None
    try:
        fd = open_inside(run_dir, blob_path(run_dir, digest))
    except (OSError, Refused):
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_BLOB + 1)
    except OSError:
        return None
    return data if len(data) <= MAX_BLOB else None


def blob_readable(run_dir: Path, blob: Blob | str) -> bool:
    digest = blob if isinstance(blob, str) else blob.digest
    if not valid_digest(digest):
        return False
    try:
        os.close(open_inside(run_dir, blob_path(run_dir, digest)))
    except (OSError, Refused):
        return False
    return True


@dataclass
class LogFile:
    path: Path
    offset: int = 0
    line_no: int = 0
    header: LogHeader | None = None
    problems: list[Problem] = field(default_factory=list)
    _partial: bytes = b""
    rejected: bool = False  # not read (not a regular file inside the run, or no header)
    _skipping: bool = False  # inside a line longer than MAX_LINE

    def poll(self, light: bool = False) -> list[Event | UnknownEvent]:
        """Events appended since the last call. ``light``: ``chromium`` events come back as
        ``LightChromium`` (args not decoded) — what the model needs, several times faster."""
        return list(self.iter_new(light))

    def iter_new(self, light: bool = False) -> Generator[Event | UnknownEvent, None, None]:
        """``poll`` as a generator, reading the file in bounded chunks: a consumer that does
        not keep the events (the model drops ``chromium``) holds one chunk, not the log."""
        if self.rejected:
            return
        try:
            fd = open_inside(self.path.parent, self.path)
        except FileNotFoundError:
            return
        except Refused as exc:
            self._reject(str(exc))
            return
        except OSError as exc:
            self._reject(f"cannot be read ({exc.strerror}); ignored")
            return
        decoder = _decoder(light)
        with os.fdopen(fd, "rb") as f:
            f.seek(self.offset)
            while True:
                chunk = f.read(_CHUNK)
                if not chunk:
                    return
                self.offset += len(chunk)
                data = self._partial + chunk if self._partial else chunk
                cut = data.rfind(b"\n")
                if cut < 0:
                    self._partial = data  # a line longer than a chunk (or unterminated)
                    if len(data) > MAX_LINE:
                        self._skip_long_line()
                    continue
                self._partial = data[cut + 1 :]
                lines = data[:cut].split(b"\n")
                if self._skipping:
                    self._skipping = False
                    lines = lines[1:]  # the rest of the overlong line
                controls = b"\\u00" in data  # one scan per chunk, not per line
                for raw in lines:
                    self.line_no += 1
                    try:
                        # The common case inline (this loop is the cost of opening a big run).
                        event = decoder.decode(raw)
                    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                        if not raw.strip():
                            continue
                        event = self._decode(raw, decoder)
                        if event is None:
                            if self.header is None:
                                self._reject("is not a dyn-inspect event log (its first line is no log header); ignored")
                                return
                            continue
                    if controls and b"\\u00" in raw and type(event) not in _NO_TEXT:
                        # A control character in a string (JSON escapes it: \u001b): decode
                        # again with the strings made safe (the rare path).
                        event = self._decode(self._neutralized(raw), decoder) or event
                    if type(event) is LogHeader:
                        self._check_header(event)
                    elif self.header is None:
                        self._reject("is not a dyn-inspect event log (its first line is no log header); ignored")
                        return
                    yield event
                if len(self._partial) > MAX_LINE:
                    self._skip_long_line()

    @staticmethod
    def _neutralized(raw: bytes) -> bytes:
        """The line with control characters in its strings made visible (see safe_text)."""
        try:
            data = _generic.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            return raw  # not a JSON object: the decoder reports it
        return msgspec.json.encode(_safe_value(data))

    def _skip_long_line(self) -> None:
        self.problems.append(Problem(self.path.name, self.line_no + 1, f"line longer than {MAX_LINE >> 20} MiB skipped"))
        self._partial = b""
        self._skipping = True
        self.line_no += 1

    def _reject(self, why: str) -> None:
        self.rejected = True
        self._partial = b""
        self.problems.append(Problem(self.path.name, 0, why))

    def _check_header(self, event: LogHeader) -> None:
        if event.schema < 1:
            raise InspectorError(f"{self.path} has an invalid event-log schema {event.schema!r}: not a dyn-inspect log")
        if event.schema > SCHEMA_VERSION:
            raise InspectorError(
                f"{self.path} was written by a newer dyn-inspect (event-log schema {event.schema}); "
                f"this version reads schema {SCHEMA_VERSION} and older — upgrade dyn-inspect"
            )
        self.header = event

    def _decode(self, raw: bytes, decoder: msgspec.json.Decoder[Any] | None = None) -> Event | UnknownEvent | None:
        if decoder is None:
            decoder = _decoder(False)
        try:
            event = decoder.decode(raw)
        except msgspec.ValidationError:
            try:
                data = _generic.decode(raw)
            except (RecursionError, msgspec.DecodeError) as exc:
                self._unreadable(exc)
                return None
            kind = str(data.get("kind"))
            if kind == "log_header":
                # A header this version cannot vouch for is refused like a newer schema:
                # skipping it would read the rest of the file with the wrong meaning.
                raise InspectorError(
                    f"{self.path} has an invalid log header (schema {data.get('schema')!r}): not a dyn-inspect log this version reads"
                ) from None
            t = data.get("t")
            return UnknownEvent(
                kind=kind,
                data=data,
                t=float(t) if isinstance(t, (int, float)) else 0.0,
                cid=data.get("cid") if isinstance(data.get("cid"), str) else None,
            )
        except (RecursionError, msgspec.DecodeError) as exc:
            self._unreadable(exc)
            return None
        return event

    def _unreadable(self, exc: Exception) -> None:
        """Note a line that could not be decoded (too deeply nested, or not JSON) as skipped."""
        why = "line nested too deeply to read; skipped" if isinstance(exc, RecursionError) else "corrupted line skipped"
        self.problems.append(Problem(self.path.name, self.line_no, why))

    @property
    def skipping(self) -> bool:
        """Inside a line longer than ``MAX_LINE`` (its rest is not read)."""
        return self._skipping

    def unterminated_tail(self) -> int:
        """Bytes of an unfinished last line (a killed writer, or one still writing)."""
        return len(self._partial)


def list_logs(run_dir: Path) -> list[Path]:
    """The ``*.jsonl`` names of a run (``LogFile`` decides whether each may be read)."""
    try:
        names = sorted(os.listdir(run_dir))
    except OSError:
        return []
    return [run_dir / n for n in names if n.endswith(".jsonl")]
