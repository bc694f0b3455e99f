"""``dyn-inspect merge``: the per-node runs of one multi-node job → one run.

Nodes with local disks each record their own run (``dyn-inspect run -- torchrun --nnodes N
--node-rank K ...``); the merge joins them so every face shows one job. The inputs are never
modified: a new run directory is written (``-o``, else a fresh run under the runs root,
which becomes ``latest``); a merge that fails removes what it wrote.

- **Ranks** are keyed by (node, global rank). A process's node is its ``process_start``'s
  ``node_rank`` (torchrun's ``GROUP_RANK``), else its input's place among the inputs
  without one. Logs are renamed ``n<node>-<log>`` (pids of two machines may clash), a
  node's launcher log ``launcher-n<node>.jsonl`` (each node's status is kept). The same
  (node, rank) in two inputs is refused: that is one node given twice, or two jobs.
- **Clocks.** Nodes do not share a clock, but torchrun starts every node's workers when the
  rendezvous completes, so the ranks' ``process_start`` times are one moment. Each
  process's start is read from its log; a node's start is the median of its ranks' (a
  machine's processes share its clock; the median ignores a restarted rank's late start),
  and every log of a node is shifted by the difference to the start of the node holding
  the lowest global rank (which keeps its clock). Clocks that agree within ``ALIGN_MIN_S``
  (or twice the start-up spread of one node's ranks) are synchronized already and left
  alone: shifting them would only add that spread as error. The offset is added to every ``t`` (and
  chromium ``ts``) and kept in ``process_start`` (``clock_offset_s``) and ``merged.json``.
- **Lines are copied as they are** when the node's clock is not shifted (a damaged line
  stays damaged; readers report it as in the input), else as JSON objects, not Structs:
  fields this version does not know survive either way; a line that is not JSON is then
  skipped and counted, as is an unterminated last line. Blobs are content-addressed: each
  is linked (or copied) once.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from dyn_inspect.engine.eventlog import (
    TOOL_VERSION,
    RecordingUnavailable,
    new_run_dir,
    point_latest,
    remove_run_dir,
    runs_root,
    valid_digest,
)
from dyn_inspect.engine.schema import LogHeader, ProcessStart, RunEnd, RunStart
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.model import RunModel, is_launcher_log
from dyn_inspect.inspector.ranks import launcher_nodes
from dyn_inspect.inspector.reader import LogFile, Refused, list_logs, open_inside
from dyn_inspect.inspector.run import refuse_without_event_logs, resolve_run

MANIFEST = "merged.json"
# Below this (or twice the ranks' start-up spread within a node) nodes' clocks count as
# synchronized and are left alone.
ALIGN_MIN_S = 1.0
_NODE_PREFIX = re.compile(r"n\d+-")
_decode = msgspec.json.Decoder(dict[str, Any])
_encode = msgspec.json.Encoder()


@dataclass
class MergedLog:
    source: str  # the input log's path
    log: str  # its name in the merged run
    node: int
    rank: int | None
    offset_s: float
    events: int = 0
    skipped_lines: int = 0


@dataclass
class MergeResult:
    run_dir: Path
    inputs: list[Path]
    logs: list[MergedLog] = field(default_factory=list)
    blobs: int = 0
    notes: list[str] = field(default_factory=list)  # what the user should know (one line each)
    duration_s: float = 0.0

    @property
    def events(self) -> int:
        return sum(m.events for m in self.logs)

    @property
    def nodes(self) -> list[int]:
        return sorted({m.node for m in self.logs})

    @property
    def offsets(self) -> dict[int, float]:
        return {m.node: m.offset_s for m in self.logs}


class _Head:
    """What the merge needs of an input run without building its model: each log's header,
    ``process_start`` and launcher events (a 130k-event node run opens in 2 s; this reads
    two lines per log). The same checks as ``Run``: logs that are not event logs are
    refused, a newer schema stops the merge with one line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.model = RunModel()
        self.logs: dict[str, LogFile] = {}
        for file in list_logs(path):
            reader = self.logs[file.name] = LogFile(file)
            launcher = is_launcher_log(file.name)
            events = reader.iter_new(light=True)
            for i, event in enumerate(events):
                if isinstance(event, (LogHeader, ProcessStart, RunStart, RunEnd)):
                    self.model.apply(event, file.name)
                if not launcher and (isinstance(event, ProcessStart) or i >= 8):
                    break
            events.close()
        refuse_without_event_logs(path, self.logs)


@dataclass
class _Input:
    path: Path
    run: _Head
    default_node: int = 0


def _node_of(inp: _Input, log: str) -> int:
    if is_launcher_log(log):
        return launcher_nodes(inp.run.model).get(log, inp.default_node)
    process = inp.run.model.processes.get(log)
    if process is not None and process.start is not None and process.start.node_rank is not None:
        return process.start.node_rank
    return inp.default_node


def _assign_default_nodes(inputs: list[_Input]) -> None:
    """An input whose ranks all name one node is that node; the others take the smallest
    node numbers no input names, in the order given."""
    taken: set[int] = set()
    undecided: list[_Input] = []
    for inp in inputs:
        nodes = {p.start.node_rank for p in inp.run.model.processes.values() if p.start is not None and p.rank is not None}
        nodes.discard(None)
        if len(nodes) == 1:
            inp.default_node = next(iter(nodes))  # type: ignore[assignment]
            taken.add(inp.default_node)
        else:
            taken.update(n for n in nodes if n is not None)
            undecided.append(inp)
    free = (n for n in range(1 << 20) if n not in taken)
    for inp in undecided:
        inp.default_node = next(free)


def _offsets(inputs: list[_Input]) -> dict[tuple[int, int], float]:
    """(input index, node) → seconds to add to that node's clock (see the module doc)."""
    starts: dict[tuple[int, int], list[tuple[int, float]]] = defaultdict(list)
    for i, inp in enumerate(inputs):
        for log, p in inp.run.model.processes.items():
            if p.start is not None and p.rank is not None and p.start.t:
                starts[(i, _node_of(inp, log))].append((p.rank, p.start.t - (p.start.clock_offset_s or 0.0)))
    if not starts:
        return {}
    # A node's start: the median of its ranks' (a restarted rank's late start is ignored).
    node_start = {key: statistics.median(t for _, t in group) for key, group in starts.items()}
    reference = min(starts, key=lambda key: min(starts[key]))  # the node of the lowest rank
    # Clocks that agree within the ranks' own start-up spread are synchronized (NTP): a
    # shift would only add that spread as error.
    spread = max(max(t for _, t in group) - min(t for _, t in group) for group in starts.values())
    threshold = max(ALIGN_MIN_S, 2 * spread)
    offsets = {key: node_start[reference] - t for key, t in node_start.items()}
    return {key: (off if abs(off) > threshold else 0.0) for key, off in offsets.items()}


def _target_name(log: str, node: int, taken: set[str]) -> str:
    if is_launcher_log(log):
        name = f"launcher-n{node}.jsonl"  # the node in the name: its status is found by it
    elif _NODE_PREFIX.match(log):
        name = log  # already a node's (a shared-disk or merged run)
    else:
        name = f"n{node}-{log}"
    stem, n = name.removesuffix(".jsonl"), 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}.jsonl"
    taken.add(name)
    return name


def _rewrite(raw: bytes, entry: MergedLog, node: int) -> bytes | None:
    """One line with its clock shifted (and a process_start's node and offset noted); None
    for a line that is not a JSON object (counted)."""
    try:
        event = _decode.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        if raw.strip():
            entry.skipped_lines += 1
        return None
    offset = entry.offset_s
    kind = event.get("kind")
    if offset:
        t = event.get("t")
        if isinstance(t, (int, float)) and not isinstance(t, bool) and t:
            event["t"] = t + offset
        ts = event.get("ts")
        if kind == "chromium" and isinstance(ts, (int, float)) and not isinstance(ts, bool):
            event["ts"] = ts + offset * 1e6
    if kind == "process_start":
        event.setdefault("node_rank", node)
        previous = event.get("clock_offset_s")
        total = (previous if isinstance(previous, (int, float)) else 0.0) + offset
        if total or previous is not None:
            event["clock_offset_s"] = round(total, 6)
    return _encode.encode(event) + b"\n"


def _copy_log(src: Path, dst: Path, entry: MergedLog, node: int) -> None:
    """Copy one log, shifting its clock; the input is only read. Without a shift the bytes
    are copied as they are (10× faster than decoding every line; a damaged line stays
    damaged and readers report it as in the input), only process_start is rewritten."""
    fd = open_inside(src.parent, src)
    out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "rb") as f:
            data = f.read()
        cut = data.rfind(b"\n") + 1
        if cut < len(data):
            entry.skipped_lines += 1  # an unterminated last line: never a whole event
        data = data[:cut]
        if not entry.offset_s:
            pieces, at, hit = [], 0, data.find(b'"process_start"')
            while hit >= 0:  # memmem, not a regex: a node's logs are hundreds of MB
                start = data.rfind(b"\n", 0, hit) + 1
                end = data.find(b"\n", hit) + 1
                line = _rewrite(data[start:end], entry, node)
                pieces += [data[at:start], line or b""]
                at = end
                hit = data.find(b'"process_start"', end)
            pieces.append(data[at:])
            out_data = b"".join(pieces)
            entry.events += out_data.count(b"\n")
            _write_all(out, out_data)
            return
        buf: list[bytes] = []
        for raw in data.splitlines(keepends=True):
            line = _rewrite(raw, entry, node)
            if line is not None:
                buf.append(line)
                entry.events += 1
        _write_all(out, b"".join(buf))
    finally:
        os.close(out)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _copy_blobs(src_run: Path, dst_run: Path, seen: set[str]) -> int:
    """Link (else copy) every blob of the store's own form into the merged store, once."""
    root = src_run / "blobs"
    copied = 0
    try:
        shards = sorted(os.listdir(root))
    except OSError:
        return 0
    for shard in shards:
        if len(shard) != 2:
            continue
        try:
            names = os.listdir(root / shard)
        except OSError:
            continue
        for digest in names:
            if digest in seen or not valid_digest(digest) or digest[:2] != shard:
                continue
            src = root / shard / digest
            try:
                os.close(open_inside(src_run, src))  # a regular file inside the run, nothing else
            except (OSError, Refused):
                continue
            dst_dir = dst_run / "blobs" / shard
            dst_dir.mkdir(mode=0o700, exist_ok=True)
            dst = dst_dir / digest
            try:
                os.link(src, dst)
            except OSError:
                shutil.copyfile(src, dst)
                os.chmod(dst, 0o600)
            seen.add(digest)
            copied += 1
    return copied


def merge_runs(sources: list[str | os.PathLike[str]], out: Path | None = None, runs_dir: str | None = None) -> MergeResult:
    """Merge the runs at ``sources`` into a new run (``out``, else a fresh run under the
    runs root, then ``latest``). Raises ``InspectorError`` (one line) on bad input."""
    started = time.time()
    if len(sources) < 2:
        raise InspectorError("merge needs at least two runs (one per node)")
    paths = [resolve_run(s) for s in sources]
    for i, p in enumerate(paths):
        if p in paths[:i]:
            raise InspectorError(f"{p} is given twice")
    inputs = [_Input(p, _Head(p)) for p in paths]
    _assign_default_nodes(inputs)

    # (node, global rank) must be one input's: the same pair twice is a node given twice.
    owner: dict[tuple[int, int], Path] = {}
    jobs: set[str] = set()
    for inp in inputs:
        for log, proc in inp.run.model.processes.items():
            if proc.start is not None and proc.start.job_id:
                jobs.add(proc.start.job_id)
            if proc.rank is None:
                continue
            key = (_node_of(inp, log), proc.rank)
            other = owner.setdefault(key, inp.path)
            if other != inp.path:
                raise InspectorError(
                    f"rank {proc.rank} of node {key[0]} is in both {other.name} and {inp.path.name}: "
                    "merge the runs of one job, each node once"
                )
    offsets = _offsets(inputs)

    root: Path | None = None
    if out is not None:
        out = Path(out)
        if out.exists():
            raise InspectorError(f"{out} already exists: give a new directory to -o")
        try:
            out.mkdir(parents=True, mode=0o700)
            (out / "blobs").mkdir(mode=0o700)
        except OSError as exc:
            remove_run_dir(out)
            raise InspectorError(f"cannot create {out}: {exc.strerror or exc}") from None
        run_dir = out
    else:
        root = runs_root(runs_dir)
        try:
            run_dir = new_run_dir(root, point=False)
        except RecordingUnavailable as exc:
            raise InspectorError(str(exc)) from None

    result = MergeResult(run_dir=run_dir, inputs=paths)
    if len(jobs) > 1:
        result.notes.append(f"the inputs name {len(jobs)} torchrun jobs ({', '.join(sorted(jobs)[:4])}): merged anyway")
    try:
        taken: set[str] = set()
        seen_blobs: set[str] = set()
        for i, inp in enumerate(inputs):
            for src in list_logs(inp.path):
                log = src.name
                reader = inp.run.logs.get(log)
                if reader is None or reader.rejected:
                    result.notes.append(f"{inp.path.name}/{log}: not an event log; not merged")
                    continue
                node = _node_of(inp, log)
                process = inp.run.model.processes.get(log)
                entry = MergedLog(
                    str(src), _target_name(log, node, taken), node, process.rank if process else None, offsets.get((i, node), 0.0)
                )
                if (i, node) not in offsets and offsets:
                    # A node without ranked processes (only a launcher): its input's median.
                    mine = [v for (j, _), v in offsets.items() if j == i]
                    entry.offset_s = statistics.median(mine) if mine else 0.0
                _copy_log(src, run_dir / entry.log, entry, node)
                result.logs.append(entry)
            result.blobs += _copy_blobs(inp.path, run_dir, seen_blobs)
        skipped = sum(m.skipped_lines for m in result.logs)
        if skipped:
            result.notes.append(f"{skipped} lines were not whole JSON events and were skipped")
        result.duration_s = time.time() - started
        manifest = {
            "tool_version": TOOL_VERSION,
            "merged_at": started,
            "inputs": [
                {
                    "run": str(inp.path),
                    "logs": {
                        m.log: {"from": m.source, "node": m.node, "rank": m.rank, "clock_offset_s": round(m.offset_s, 6)}
                        for m in result.logs
                        if Path(m.source).parent == inp.path
                    },
                }
                for inp in inputs
            ],
        }
        fd = os.open(run_dir / MANIFEST, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(manifest, f, indent=1)
    except BaseException as exc:
        remove_run_dir(run_dir)  # no partial run; the inputs were only read
        if isinstance(exc, OSError):
            raise InspectorError(f"cannot write the merged run {run_dir}: {exc.strerror or exc}") from None
        raise
    if root is not None:
        point_latest(root, run_dir)
    return result
