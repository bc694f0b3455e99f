"""Reading TORCH_TRACE files (glog prefix + JSON envelope per line, payload on following
tab-indented lines) into ``TraceRecord``s for the normalizers.

Streams line by line (never loads the file whole); ``.gz`` files are read transparently.
Tolerates what production logs contain, like tlparse: lines without the glog prefix,
corrupted JSON, payloads whose md5 does not match — each counted in ``TraceStats``.
"""

from __future__ import annotations

import calendar
import gzip
import hashlib
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from dyn_inspect.engine.normalizers import TraceRecord

# V1130 02:38:28.010000 580 torch/_dynamo/utils.py:2126] {...}
_GLOG_RE = re.compile(
    r"^(?P<level>[VIWEC])(?P<month>\d{2})(?P<day>\d{2}) (?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})\.(?P<us>\d{6}) "
    r"(?P<thread>\d+) (?P<path>[^\]]*)\] (?P<json>.*)$"
)


@dataclass
class TraceStats:
    records: int = 0
    bad_prefix: int = 0
    bad_json: int = 0
    md5_mismatch: int = 0
    pids: set[int] = field(default_factory=set)


def _open(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _timestamp(m: re.Match[str], year: int) -> float:
    try:
        base = calendar.timegm((year, int(m["month"]), int(m["day"]), int(m["h"]), int(m["m"]), int(m["s"]), 0, 0, 0))
    except (ValueError, OverflowError):
        return 0.0
    return base + int(m["us"]) / 1e6


def read_trace(path: Path, stats: TraceStats | None = None) -> Iterator[TraceRecord]:
    stats = stats if stats is not None else TraceStats()
    year = time.gmtime(path.stat().st_mtime).tm_year
    pending: tuple[dict, float, str | None] | None = None
    payload_lines: list[str] = []

    def flush() -> TraceRecord | None:
        if pending is None:
            return None
        metadata, t, expected = pending
        payload = "\n".join(payload_lines) if payload_lines or expected else None
        if expected and payload is not None:
            if hashlib.md5(payload.encode("utf-8", "surrogatepass")).hexdigest() != expected:
                stats.md5_mismatch += 1
        stats.records += 1
        return TraceRecord(metadata, payload, t)

    with _open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("\t"):
                if pending is not None:
                    payload_lines.append(line[1:])
                continue
            record = flush()
            if record is not None:
                yield record
            pending, payload_lines = None, []
            if not line.strip():
                continue
            m = _GLOG_RE.match(line)
            if not m:
                stats.bad_prefix += 1
                continue
            try:
                metadata = json.loads(m["json"])
            except json.JSONDecodeError:
                stats.bad_json += 1
                continue
            if not isinstance(metadata, dict):
                stats.bad_json += 1
                continue
            stats.pids.add(int(m["thread"]))
            expected = metadata.get("has_payload") if isinstance(metadata.get("has_payload"), str) else None
            pending = (metadata, _timestamp(m, year), expected)
        record = flush()
        if record is not None:
            yield record


def looks_like_trace(path: Path) -> bool:
    """A file whose first non-empty line is a glog record with a JSON envelope."""
    try:
        with _open(path) as f:
            for _ in range(20):
                line = f.readline()
                if not line:
                    return False
                if line.strip():
                    return bool(_GLOG_RE.match(line.rstrip("\n"))) and "{" in line
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return False
    return False
