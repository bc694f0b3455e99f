"""``dyn-inspect import``: a TORCH_TRACE file or directory → a run directory.

Uses the very normalizers the live recorder uses, so an imported production log reads
like a recorded run in every face. One process log per trace file (per rank);
``--path-map OLD=NEW`` rewrites source paths so editors find the local checkout.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from dyn_inspect.engine.eventlog import TOOL_VERSION, EventLog, new_run_dir, runs_root
from dyn_inspect.engine.normalizers import Normalizer, TraceRecord
from dyn_inspect.engine.schema import ProcessEnd, ProcessStart, RunEnd, RunStart
from dyn_inspect.engine.tracefile import TraceStats, looks_like_trace, read_trace

_RANK_RE = re.compile(r"rank_(\d+)")


@dataclass
class ImportResult:
    run_dir: Path
    files: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    stats: dict[str, TraceStats] = field(default_factory=dict)
    events: int = 0
    normalizer_failures: int = 0


def _remap(record: TraceRecord, path_map: list[tuple[str, str]]) -> None:
    """Rewrite path prefixes in interned strings and payload text."""
    if not path_map:
        return
    body = record.metadata.get("str")
    if isinstance(body, list) and body and isinstance(body[0], str):
        for old, new in path_map:
            if body[0].startswith(old):
                body[0] = new + body[0][len(old):]
    if record.payload:
        for old, new in path_map:
            record.payload = record.payload.replace(old, new)
    for key in ("compilation_metrics", "inductor_output_code"):
        m = record.metadata.get(key)
        if isinstance(m, dict):
            for field_name in ("co_filename", "fail_user_frame_filename"):
                value = m.get(field_name)
                if isinstance(value, str):
                    for old, new in path_map:
                        if value.startswith(old):
                            m[field_name] = new + value[len(old):]


def trace_files(source: Path) -> tuple[list[Path], list[Path]]:
    if source.is_file():
        return [source], []
    files, skipped = [], []
    for p in sorted(source.iterdir()):
        if p.is_file() and looks_like_trace(p):
            files.append(p)
        elif p.is_file():
            skipped.append(p)
    return files, skipped


def import_trace(
    source: Path,
    out: Path | None = None,
    runs_dir: str | None = None,
    path_map: list[tuple[str, str]] | None = None,
) -> ImportResult:
    files, skipped = trace_files(source)
    if not files:
        raise ValueError(f"{source} holds no TORCH_TRACE log")
    if out is not None:
        out.mkdir(parents=True, exist_ok=False, mode=0o700)
        (out / "blobs").mkdir(mode=0o700)
        run_dir = out
    else:
        run_dir = new_run_dir(runs_root(runs_dir))
    result = ImportResult(run_dir=run_dir, files=files, skipped=skipped)
    started = time.time()
    launcher = EventLog(run_dir, "launcher.jsonl", source="import", origin=str(source))
    launcher.write(RunStart(t=started, command=["import", str(source)], cwd=str(Path.cwd()), mode="import", tool_version=TOOL_VERSION))
    for index, file in enumerate(files):
        rank_m = _RANK_RE.search(file.name)
        rank = int(rank_m[1]) if rank_m else None
        log = EventLog(run_dir, f"p{index}-{file.stem}.jsonl", source="import", origin=str(file))
        stats = result.stats[file.name] = TraceStats()
        normalizer = Normalizer(log.blobs)
        first = True
        last_t = 0.0
        for record in read_trace(file, stats):
            _remap(record, path_map or [])
            if first:
                first = False
                log.write(_process_start(file, record, rank))
            if rank is None and isinstance(record.metadata.get("rank"), int):
                rank = record.metadata["rank"]
            for event in normalizer.feed(record):
                log.write(event)
                result.events += 1
            last_t = record.t or last_t
        if first:
            log.write(_process_start(file, None, rank))
        log.write(ProcessEnd(t=last_t, duration_s=0.0))
        result.normalizer_failures += normalizer.failures
        log.close()
    launcher.write(RunEnd(exit_code=0, duration_s=time.time() - started))
    launcher.close()
    return result


def _process_start(file: Path, record: TraceRecord | None, rank: int | None) -> ProcessStart:
    if record is not None and isinstance(record.metadata.get("rank"), int):
        rank = record.metadata["rank"]
    return ProcessStart(
        t=record.t if record else 0.0,
        argv=[str(file)],
        cwd="",
        pid=0,
        ppid=0,
        executable="",
        python="",
        platform="",
        hostname="",
        rank=rank,
    )
