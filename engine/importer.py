"""``dyn-inspect import``: a TORCH_TRACE file or directory → a run directory.

Records go through the very ``Normalizer`` the live recorder uses, so an imported
production log reads like a recorded run in every face (one code path for both). Each
process in each trace file becomes one process log, tagged with its rank (from the file
name torch gives per-rank logs, ``..._rank_3_....log``, else from the records' ``rank``
field). A directory may hold stray files: they are listed and skipped. ``--path-map
OLD=NEW`` rewrites the source paths of the machine that wrote the log to the local
checkout, before the normalizers see them (so columns are computed on the local file).
Files are streamed record by record: memory does not grow with the log. Lines and files
are bounded (``max_line_mb``, ``max_total_mb``: a gzip bomb stops with one line); an import
that fails removes the run it started and leaves ``latest`` where it was.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dyn_inspect.engine.eventlog import (
    TOOL_VERSION,
    EventLog,
    RecordingUnavailable,
    new_run_dir,
    point_latest,
    remove_run_dir,
    runs_root,
)
from dyn_inspect.engine.normalizers import Normalizer, TraceRecord
from dyn_inspect.engine.schema import Event, ProcessEnd, ProcessStart, Raw, RunEnd, RunStart
from dyn_inspect.engine.tracefile import MAX_LINE_MB, MAX_TOTAL_MB, TraceStats, TraceTooLarge, iter_records, looks_like_trace

_RANK_RE = re.compile(r"rank_(\d+)")
# Records to look through for a "rank" field before a log without a rank in its file name
# gets its process_start (torch adds the field once the process group exists).
_RANK_LOOKAHEAD = 256


class TraceImportError(ValueError):
    """The source cannot be imported (no trace in it, output exists): one line for the user."""


@dataclass(frozen=True)
class PathMap:
    """``OLD=NEW`` prefix rewrites, applied to every path-like string of every record."""

    pairs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, specs: list[str] | None) -> PathMap:
        pairs = []
        for spec in specs or []:
            old, sep, new = spec.partition("=")
            if not sep or not old:
                raise TraceImportError(f"--path-map wants OLD=NEW, got {spec!r}")
            pairs.append((old.rstrip("/") or "/", new.rstrip("/") or "/"))
        return cls(tuple(pairs))

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def path(self, value: str) -> str:
        for old, new in self.pairs:
            if value == old:
                return new
            if value.startswith(old + "/"):
                return new + value[len(old) :]
        return value

    def text(self, value: str) -> str:
        for old, new in self.pairs:
            if old in value:
                value = value.replace(old + "/", new + "/")
        return value

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.path(value) if value[:1] in ("/", "\\") or value[1:3] == ":\\" else value
        if isinstance(value, dict):
            return {k: self._walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        return value

    def record(self, record: TraceRecord) -> None:
        """Rewrite in place: metadata strings (interned file names, stacks, co_filename)
        that are paths under OLD, and OLD/ anywhere in the payload (tracebacks, code)."""
        if not self.pairs:
            return
        record.metadata = self._walk(record.metadata)
        if record.payload:
            record.payload = self.text(record.payload)


@dataclass
class ProcessImport:
    """One process of one trace file, and the log it became."""

    log: str
    pid: int
    rank: int | None
    records: int = 0
    events: int = 0
    compiles: int = 0


@dataclass
class FileImport:
    path: Path
    stats: TraceStats
    processes: list[ProcessImport] = field(default_factory=list)
    raw_kinds: Counter[str] = field(default_factory=Counter)  # kinds no normalizer knows, kept raw
    normalizer_failures: int = 0  # records a normalizer could not read (kept raw)

    @property
    def rank(self) -> int | None:
        ranks = {p.rank for p in self.processes}
        return ranks.pop() if len(ranks) == 1 else None


@dataclass
class ImportResult:
    run_dir: Path
    source: Path
    files: list[FileImport] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)  # files that are not TORCH_TRACE logs
    duration_s: float = 0.0

    @property
    def events(self) -> int:
        return sum(p.events for f in self.files for p in f.processes)

    @property
    def normalizer_failures(self) -> int:
        return sum(f.normalizer_failures for f in self.files)


def trace_files(source: Path) -> tuple[list[Path], list[Path]]:
    """(TORCH_TRACE logs, other files) of a file or a directory (not recursive)."""
    if source.is_file():
        if not looks_like_trace(source):
            raise TraceImportError(f"{source} is not a TORCH_TRACE log (its first line is no glog record with JSON)")
        return [source], []
    if not source.is_dir():
        raise TraceImportError(f"no such file or directory: {source}")
    files, skipped = [], []
    for p in sorted(source.iterdir(), key=_file_order):
        if p.is_file() and looks_like_trace(p):
            files.append(p)
        elif not p.name.startswith("."):
            skipped.append(p)
    return files, skipped


def _file_order(p: Path) -> tuple[int, str]:
    """rank_2 before rank_10; files without a rank after ranked ones."""
    m = _RANK_RE.search(p.name)
    return (int(m[1]) if m else 1 << 30, p.name)


def _safe_stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".log", ".txt"):
        name = name.removesuffix(suffix)
    return re.sub(r"[^\w.-]", "_", name)[:80] or "trace"


class _ProcessWriter:
    """Normalizes one process's records into its log. ``process_start`` waits until the
    rank is known (or ``_RANK_LOOKAHEAD`` records passed): events wait with it."""

    def __init__(self, run_dir: Path, info: ProcessImport, file: Path) -> None:
        self.info = info
        self.file = file
        self.log = EventLog(run_dir, info.log, source="import", origin=str(file), strict=True)
        self.normalizer = Normalizer(self.log.blobs)
        self.first_t = 0.0
        self.last_t = 0.0
        self.started = False
        self.held: list[Event] = []

    def feed(self, record: TraceRecord, raw_kinds: Counter[str]) -> None:
        info = self.info
        info.records += 1
        if record.t:
            self.first_t = self.first_t or record.t
            self.last_t = record.t
        if info.rank is None:
            rank = record.metadata.get("rank")
            if isinstance(rank, int) and not isinstance(rank, bool):
                info.rank = rank
        failures = self.normalizer.failures
        events = self.normalizer.feed(record)
        if self.normalizer.failures == failures:
            for event in events:
                if type(event) is Raw:
                    raw_kinds[event.torch_kind] += 1
        if self.started:
            self._write(events)
        else:
            self.held.extend(events)
            if info.rank is not None or info.records >= _RANK_LOOKAHEAD:
                self._start()

    def _write(self, events: list[Event]) -> None:
        write = self.log.write
        for event in events:
            write(event)
        self.info.events += len(events)

    def _start(self) -> None:
        self.started = True
        self.log.write(
            ProcessStart(
                t=self.first_t,
                argv=[str(self.file)],
                cwd="",
                pid=self.info.pid,
                ppid=0,
                executable="",
                python="",
                platform="",
                hostname="",
                rank=self.info.rank,
            )
        )
        held, self.held = self.held, []
        self._write(held)

    def close(self) -> int:
        if not self.started:
            self._start()
        self._write(self.normalizer.finish())
        self.log.write(ProcessEnd(t=self.last_t, duration_s=max(self.last_t - self.first_t, 0.0)))
        self.log.close()
        self.info.compiles = len(self.normalizer.ctx.captured)
        return self.normalizer.failures


def _import_file(
    run_dir: Path, index: int, file: Path, path_map: PathMap, max_line_mb: int = MAX_LINE_MB, max_total_mb: int = MAX_TOTAL_MB
) -> FileImport:
    stats = TraceStats()
    result = FileImport(path=file, stats=stats)
    m = _RANK_RE.search(file.name)
    file_rank = int(m[1]) if m else None
    stem = _safe_stem(file)
    writers: dict[int, _ProcessWriter] = {}
    try:
        for pid, record in iter_records(file, stats, max_line_mb, max_total_mb):
            writer = writers.get(pid)
            if writer is None:
                name = f"p{index}-{stem}.jsonl" if not writers else f"p{index}-{stem}-pid{pid}.jsonl"
                info = ProcessImport(log=name, pid=pid, rank=file_rank)
                result.processes.append(info)
                writer = writers[pid] = _ProcessWriter(run_dir, info, file)
            path_map.record(record)
            writer.feed(record, result.raw_kinds)
    finally:
        for writer in writers.values():
            result.normalizer_failures += writer.close()
    return result


def import_trace(
    source: Path,
    out: Path | None = None,
    runs_dir: str | None = None,
    path_map: PathMap | list[str] | None = None,
    max_line_mb: int = MAX_LINE_MB,
    max_total_mb: int = MAX_TOTAL_MB,
) -> ImportResult:
    """Import a TORCH_TRACE file or directory into a new run (``out``, else a fresh run
    directory under the runs root, which then becomes ``latest``). On any failure the new
    run is removed and ``latest`` is untouched; bounds crossed raise ``TraceImportError``."""
    mapping = path_map if isinstance(path_map, PathMap) else PathMap.parse(path_map)
    source = Path(source)
    files, skipped = trace_files(source)
    if not files:
        looked = f" (looked at {len(skipped)} files)" if source.is_dir() else ""
        raise TraceImportError(f"{source} holds no TORCH_TRACE log{looked}")
    root: Path | None = None
    if out is not None:
        if out.exists():
            raise TraceImportError(f"{out} already exists: give a new directory to -o")
        out.mkdir(parents=True, mode=0o700)
        run_dir = out
        try:
            (out / "blobs").mkdir(mode=0o700)
        except OSError:
            remove_run_dir(out)
            raise
    else:
        root = runs_root(runs_dir)
        try:
            run_dir = new_run_dir(root, point=False)
        except RecordingUnavailable as exc:
            raise TraceImportError(str(exc)) from None
    started = time.time()
    result = ImportResult(run_dir=run_dir, source=source, skipped=skipped)
    launcher: EventLog | None = None
    try:
        launcher = EventLog(run_dir, "launcher.jsonl", source="import", origin=str(source), strict=True)
        launcher.write(
            RunStart(
                t=started, command=["dyn-inspect", "import", str(source)], cwd=str(Path.cwd()), mode="import", tool_version=TOOL_VERSION
            )
        )
        for index, file in enumerate(files):
            result.files.append(_import_file(run_dir, index, file, mapping, max_line_mb, max_total_mb))
        result.duration_s = time.time() - started
        launcher.write(RunEnd(exit_code=0, duration_s=result.duration_s))
        launcher.close()
    except BaseException as exc:
        # No partial run: what was written goes, ``latest`` stays where it was.
        if launcher is not None:
            launcher.close()
        remove_run_dir(run_dir)
        if isinstance(exc, TraceTooLarge):
            raise TraceImportError(str(exc)) from None
        raise
    if root is not None:
        point_latest(root, run_dir)
    return result
