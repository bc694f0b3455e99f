"""Reading event logs: tolerant, incremental, never executing anything.

A ``LogFile`` remembers its byte offset; ``poll()`` decodes only what was appended since
the last call, so following a live run costs time proportional to the new events. An
unterminated last line is held back until its newline arrives (a writer mid-``write`` or a
killed process); a corrupted line in the middle is counted and skipped; an unknown kind
(a newer writer) is kept as ``UnknownEvent``. Decoding is msgspec's JSON → Structs: no
pickle, no eval.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import msgspec

from dyn_inspect.engine.schema import SCHEMA_VERSION, AnyEvent, Chromium, Event, LogHeader, UnknownEvent
from dyn_inspect.inspector.errors import InspectorError

_typed = msgspec.json.Decoder(AnyEvent)
_CHUNK = 4 << 20  # bytes read at a time: bounds memory while opening a large log
_generic = msgspec.json.Decoder(dict[str, Any])


class LightChromium(Chromium, tag="chromium"):
    """A ``chromium`` event whose ``args`` stay undecoded JSON (``msgspec.Raw``).

    ``chromium`` is ~60 % of a run's events and its args (cache keys, metrics) most of its
    bytes, yet the model only counts these events; decoding args into dicts dominated
    opening a large run. ``LogFile.poll(light=True)`` returns these; ``args_dict()`` decodes
    the args on demand. ``Run.events()`` (exports) still returns full ``Chromium``.
    """

    args: msgspec.Raw = msgspec.Raw(b"{}")  # type: ignore[assignment]

    def args_dict(self) -> dict[str, Any]:
        try:
            return _generic.decode(self.args)
        except msgspec.DecodeError:
            return {}


_LIGHT_TYPES = tuple(LightChromium if t is Chromium else t for t in AnyEvent.__args__)  # type: ignore[attr-defined]
_typed_light = msgspec.json.Decoder(Union[_LIGHT_TYPES])  # type: ignore[valid-type]


@dataclass
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass
class LogFile:
    path: Path
    offset: int = 0
    line_no: int = 0
    header: LogHeader | None = None
    problems: list[Problem] = field(default_factory=list)
    _partial: bytes = b""

    def poll(self, light: bool = False) -> list[Event | UnknownEvent]:
        """Events appended since the last call. ``light``: ``chromium`` events come back as
        ``LightChromium`` (args not decoded) — what the model needs, several times faster."""
        return list(self.iter_new(light))

    def iter_new(self, light: bool = False) -> Iterator[Event | UnknownEvent]:
        """``poll`` as a generator, reading the file in bounded chunks: a consumer that does
        not keep the events (the model drops ``chromium``) holds one chunk, not the log."""
        try:
            f = open(self.path, "rb")
        except FileNotFoundError:
            return
        decoder = _typed_light if light else _typed
        with f:
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
                    continue
                self._partial = data[cut + 1 :]
                for raw in data[:cut].split(b"\n"):
                    self.line_no += 1
                    try:
                        # The common case inline (this loop is the cost of opening a big run).
                        event = decoder.decode(raw)
                    except (msgspec.ValidationError, msgspec.DecodeError):
                        if not raw.strip():
                            continue
                        event = self._decode(raw, decoder)
                        if event is None:
                            continue
                    if type(event) is LogHeader:
                        self._check_header(event)
                    yield event

    def _check_header(self, event: LogHeader) -> None:
        if event.schema > SCHEMA_VERSION:
            raise InspectorError(
                f"{self.path} was written by a newer dyn-inspect (event-log schema {event.schema}); "
                f"this version reads schema {SCHEMA_VERSION} and older — upgrade dyn-inspect"
            )
        self.header = event

    def _decode(self, raw: bytes, decoder: msgspec.json.Decoder = _typed) -> Event | UnknownEvent | None:
        try:
            event = decoder.decode(raw)
        except msgspec.ValidationError:
            try:
                data = _generic.decode(raw)
            except msgspec.DecodeError:
                self.problems.append(Problem(self.path.name, self.line_no, "corrupted line skipped"))
                return None
            kind = str(data.get("kind"))
            return UnknownEvent(kind=kind, data=data, t=float(data.get("t") or 0), cid=data.get("cid"))
        except msgspec.DecodeError:
            self.problems.append(Problem(self.path.name, self.line_no, "corrupted line skipped"))
            return None
        return event

    def unterminated_tail(self) -> int:
        """Bytes of an unfinished last line (a killed writer, or one still writing)."""
        return len(self._partial)


def list_logs(run_dir: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(run_dir))
    except OSError:
        return []
    return [run_dir / n for n in names if n.endswith(".jsonl")]
