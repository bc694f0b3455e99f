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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from dyn_inspect.engine.schema import SCHEMA_VERSION, AnyEvent, Event, LogHeader, UnknownEvent
from dyn_inspect.inspector.errors import InspectorError

_typed = msgspec.json.Decoder(AnyEvent)
_generic = msgspec.json.Decoder(dict[str, Any])


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

    def poll(self) -> list[Event | UnknownEvent]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        if not data:
            return []
        self.offset += len(data)
        data = self._partial + data
        cut = data.rfind(b"\n")
        if cut < 0:
            self._partial = data
            return []
        self._partial = data[cut + 1 :]
        events: list[Event | UnknownEvent] = []
        for raw in data[:cut].split(b"\n"):
            self.line_no += 1
            if not raw.strip():
                continue
            event = self._decode(raw)
            if event is not None:
                events.append(event)
        return events

    def _decode(self, raw: bytes) -> Event | UnknownEvent | None:
        try:
            event = _typed.decode(raw)
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
        if isinstance(event, LogHeader):
            if event.schema > SCHEMA_VERSION:
                raise InspectorError(
                    f"{self.path} was written by a newer dyn-inspect (event-log schema {event.schema}); "
                    f"this version reads schema {SCHEMA_VERSION} and older — upgrade dyn-inspect"
                )
            self.header = event
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
