"""Reading TORCH_TRACE files into ``TraceRecord``s for the normalizers.

A TORCH_TRACE line is a glog prefix and a JSON envelope; a payload follows on
tab-indented lines and the envelope's ``has_payload`` holds its md5::

    V1130 02:38:28.010000 580 torch/_dynamo/utils.py:2126] {"dynamo_start": {...}, "frame_id": 0, ...}
    \t<payload line>

The number after the time is the writing process's id (one file normally holds one
process; several are told apart). The file is streamed line by line, never loaded whole;
``.gz`` files are read transparently. What production logs contain is counted in
``TraceStats`` and skipped, the way tlparse does: lines without the glog prefix, envelopes
that are not JSON (their payload lines go with them), payloads whose md5 does not match
(kept: the text is usually still useful), a gzip stream cut short.

A trace file is untrusted input: lines are read with a bound (``max_line`` characters;
a gzip bomb of one endless line stops there) and so is the whole file (``max_total``);
crossing either raises ``TraceTooLarge`` with the limit to raise.
"""

from __future__ import annotations

import calendar
import gzip
import hashlib
import json
import re
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from dyn_inspect.engine.normalizers import TraceRecord

# V1130 02:38:28.010000 580 torch/_dynamo/utils.py:2126] {...}
_GLOG_RE = re.compile(
    r"(?P<level>[VIWEC])(?P<month>\d{2})(?P<day>\d{2}) (?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})\.(?P<us>\d{6}) +"
    r"(?P<pid>\d+) (?P<path>[^\]]*)\] (?P<json>.*)"
)
_json_decode = json.JSONDecoder().decode
MAX_LINE_MB = 64  # one glog line or payload line; torch's are far shorter
MAX_TOTAL_MB = 16384  # a whole (decompressed) trace file


class TraceTooLarge(ValueError):
    """A line or the file is over the import's bounds (``--max-line-mb``, ``--max-size-mb``)."""


@dataclass
class TraceStats:
    """What one file held: records read, and lines skipped or doubted (tlparse's Stats)."""

    records: int = 0
    bad_prefix: int = 0  # lines that are neither a glog record nor a payload line (tlparse: fail_glog)
    bad_json: int = 0  # glog lines whose envelope is not a JSON object (tlparse: fail_json)
    md5_mismatch: int = 0  # payloads whose md5 differs from has_payload (tlparse: fail_payload_md5)
    truncated: bool = False  # the file (a gzip stream) ended mid-way
    pids: Counter[int] = field(default_factory=Counter)  # records per writing process

    @property
    def skipped_lines(self) -> int:
        return self.bad_prefix + self.bad_json


def open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


class _Clock:
    """glog timestamps have no year: take the file's, and cache per second (hot path)."""

    def __init__(self, year: int) -> None:
        self.year = year
        self._key = ""
        self._base = 0.0

    def __call__(self, m: re.Match[str]) -> float:
        key = m.string[1:14]  # "MMDD HH:MM:SS"
        if key != self._key:
            self._key = key
            try:
                self._base = float(
                    calendar.timegm((self.year, int(m["month"]), int(m["day"]), int(m["h"]), int(m["m"]), int(m["s"]), 0, 0, 0))
                )
            except (ValueError, OverflowError):
                self._base = 0.0
        return self._base + int(m["us"]) / 1e6 if self._base else 0.0


def _bounded_lines(f: IO[str], path: Path, max_line: int, max_total: int) -> Iterator[str]:
    total = 0
    number = 0
    while True:
        line = f.readline(max_line + 1)
        if not line:
            return
        number += 1
        total += len(line)
        if len(line) > max_line:
            raise TraceTooLarge(
                f"{path}: line {number} is longer than {max_line >> 20} MiB (a damaged or hostile file?); "
                "raise the limit with --max-line-mb"
            )
        if total > max_total:
            raise TraceTooLarge(f"{path} is larger than {max_total >> 20} MiB uncompressed; raise the limit with --max-size-mb")
        yield line


def iter_records(
    path: Path,
    stats: TraceStats | None = None,
    max_line_mb: int = MAX_LINE_MB,
    max_total_mb: int = MAX_TOTAL_MB,
) -> Iterator[tuple[int, TraceRecord]]:
    """(writing pid, record) for every well-formed record of a TORCH_TRACE file, in order.
    Raises ``TraceTooLarge`` past the bounds."""
    stats = stats if stats is not None else TraceStats()
    clock = _Clock(time.gmtime(path.stat().st_mtime).tm_year)
    match = _GLOG_RE.match
    pending: TraceRecord | None = None
    pending_pid = 0
    expected: str | None = None
    payload: list[str] = []

    def finish() -> TraceRecord:
        assert pending is not None
        if payload or expected:
            text = "\n".join(payload)
            if expected and hashlib.md5(text.encode("utf-8", "surrogatepass")).hexdigest() != expected:
                stats.md5_mismatch += 1
            pending.payload = text
        stats.records += 1
        stats.pids[pending_pid] += 1
        return pending

    with open_text(path) as f:
        try:
            for line in _bounded_lines(f, path, max_line_mb << 20, max_total_mb << 20):
                if line[:1] == "\t":
                    if pending is not None:
                        payload.append(line[1:].rstrip("\n"))
                    continue  # the payload of a skipped (corrupted) record goes with it
                if pending is not None:
                    yield pending_pid, finish()
                    pending = None
                line = line.rstrip("\n")
                if not line.strip():
                    continue
                m = match(line)
                if m is None:
                    stats.bad_prefix += 1
                    continue
                try:
                    metadata = _json_decode(m["json"])
                except ValueError:
                    stats.bad_json += 1
                    continue
                if not isinstance(metadata, dict) or not metadata:
                    stats.bad_json += 1
                    continue
                has_payload = metadata.get("has_payload")
                expected = has_payload if isinstance(has_payload, str) else None
                payload = []
                pending_pid = int(m["pid"])
                pending = TraceRecord(metadata, None, clock(m))
        except (EOFError, zlib.error, gzip.BadGzipFile):
            stats.truncated = True  # what was read before the damage is kept
        if pending is not None:
            yield pending_pid, finish()


def looks_like_trace(path: Path) -> bool:
    """A file whose first non-empty line is a glog record with a JSON envelope."""
    try:
        with open_text(path) as f:
            for _ in range(20):
                line = f.readline(1 << 16)  # a glog prefix is short: never read an endless line
                if not line:
                    return False
                if line.strip():
                    m = _GLOG_RE.match(line.rstrip("\n"))
                    return m is not None and m["json"].startswith("{")
    except (OSError, UnicodeDecodeError, EOFError, zlib.error, gzip.BadGzipFile):
        return False
    return False
