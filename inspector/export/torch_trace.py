"""Our events written back as a TORCH_TRACE log, so a bundle's recipient can also run
``tlparse`` (or ``dyn-inspect import``) on it.

The mapping is ``docs/event-log.md``'s table read backwards: ``compile_start`` →
``dynamo_start``, ``capture`` → ``compilation_metrics`` (torch's whole record, kept in the
metrics blob), ``graph`` → ``dynamo_output_graph`` / ``aot_*_graph`` / the pre/post-grad
artifacts, ``output_code`` → ``inductor_output_code``, ``graph_break`` → the
``dynamo_graph_break_reason`` artifact, ``recompile`` → ``recompile_reasons``, ``guards`` →
``dynamo_cpp_guards_str``, ``raw`` → its own metadata and payload, and so on — each kind
written by the ``@emits`` function beside the normalizer that reads it (engine/normalizers),
this module providing the line format (``TraceWriter``). Each record is
torch's line shape: a glog prefix, a JSON envelope with the compile id, and the payload on
tab-indented lines with its md5 in ``has_payload``. File names in stacks are interned with
``str`` records, as torch does (tlparse requires it). Events that have no torch
counterpart (process lifetime, per-kernel splits of the output code, profiles) are left out.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from typing import IO, Any

from dyn_inspect.engine.normalizers import emitter_for
from dyn_inspect.engine.schema import Blob, Event, Loc
from dyn_inspect.inspector.export.redact import mode_for

# Where the glog prefix says the record was logged from: us, not torch.
_SOURCE = "dyn_inspect/export/torch_trace.py:0"

# payload(blob, mode) -> text or None when the payload is missing from the run.
PayloadFn = Callable[[Blob | None, str], str | None]


def cid_fields(cid: str | None) -> dict[str, int]:
    """ "3/1" → frame 3, compile 1; "!0/3/1" adds compiled autograd id 0."""
    if not cid:
        return {}
    out: dict[str, int] = {}
    rest = cid
    if rest.startswith("!"):
        ca, _, rest = rest[1:].partition("/")
        if ca.isdigit():
            out["compiled_autograd_id"] = int(ca)
    frame, _, n = rest.partition("/")
    if frame.isdigit() and n.isdigit():
        out["frame_id"] = int(frame)
        out["frame_compile_id"] = int(n)
    return out


# The latest time a glog prefix can name (9999-12-31): a crafted ``t`` (1e300, Infinity,
# NaN, negative) overflowed time.gmtime; it is written as the epoch, like a missing time.
_LAST_TIME = 253402300799.0


def _glog_prefix(t: float, pid: int) -> str:
    if not 0 < t <= _LAST_TIME:  # False for NaN too
        t = 0.0
    tm = time.gmtime(t)
    micros = int(round((t - int(t)) * 1e6)) % 1_000_000
    return f"V{tm.tm_mon:02d}{tm.tm_mday:02d} {tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}.{micros:06d} {pid} {_SOURCE}] "


class TraceWriter:
    """Writes one process's events as one TORCH_TRACE file. Each event kind's record is
    written by the emitter its normalizer registers (``@emits`` in engine/normalizers);
    this class is their ``TraceOut``: the line format, interned file names, payloads."""

    def __init__(self, out: IO[str], payload: PayloadFn, pid: int = 0, rank: int | None = None) -> None:
        self.out = out
        self.payload = payload
        self.pid = pid
        self.rank = rank
        self.strings: dict[str, int] = {}
        self.attempts: dict[str, int] = {}
        self.records = 0
        self.missing: list[str] = []  # what could not be written (payload missing)
        self.handles: dict[str, dict[str, str]] = {}  # cid → kernel name → provenance handle

    def emit(self, t: float, metadata: dict[str, Any], payload: str | None = None) -> None:
        if self.rank is not None and "rank" not in metadata:
            metadata = {**metadata, "rank": self.rank}
        if payload is not None:
            metadata = {**metadata, "has_payload": hashlib.md5(payload.encode("utf-8", "surrogatepass")).hexdigest()}
        self.out.write(_glog_prefix(t, self.pid) + json.dumps(metadata, default=str) + "\n")
        if payload is not None:
            for line in payload.split("\n"):
                self.out.write("\t" + line + "\n")
        self.records += 1

    def envelope(self, kind: str, body: Any, cid: str | None) -> dict[str, Any]:
        md: dict[str, Any] = {kind: body}
        md.update(cid_fields(cid))
        if cid is not None and "frame_id" in md:
            md["attempt"] = self.attempts.get(cid, 0)
        return md

    def _intern(self, t: float, path: str) -> int:
        idx = self.strings.get(path)
        if idx is None:
            idx = self.strings[path] = len(self.strings)
            self.emit(t, {"str": [path, idx]})
        return idx

    def stack(self, t: float, locs: Iterable[Loc]) -> list[dict[str, Any]]:
        return [{"line": loc.line, "name": loc.name or "", "filename": self._intern(t, loc.file), "loc": loc.code or ""} for loc in locs]

    def text(self, event: Event, field: str, what: str) -> str | None:
        """``event.<field>``'s payload as the export writes it (redacted or not)."""
        blob: Blob | None = getattr(event, field)
        text = self.payload(blob, mode_for(event, field)) if blob is not None else None
        if blob is not None and text is None:
            self.missing.append(what)
        return text

    def write(self, event: Event) -> None:
        emit = emitter_for(event)
        if emit is not None:  # kinds without a torch record (NOT_EMITTED) are left out
            emit(event, self)
