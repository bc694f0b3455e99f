"""What an import of TORCH_TRACE logs brought: per file its processes, records, skipped
lines, md5 mismatches and kinds kept raw (``engine/importer.py``), with the imported run's
summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dyn_inspect.engine.importer import FileImport, ImportResult
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports.summary import summary
from dyn_inspect.inspector.run import Run

if TYPE_CHECKING:
    from dyn_inspect.inspector.merge import MergeResult


def imported_file(f: FileImport) -> typed.ImportedFile:
    s = f.stats
    return typed.ImportedFile(
        file=str(f.path),
        processes=[
            typed.ImportedProcess(log=p.log, pid=p.pid, rank=p.rank, records=p.records, events=p.events, compiles=p.compiles)
            for p in f.processes
        ],
        records=s.records,
        skipped_lines=typed.SkippedLines(not_glog=s.bad_prefix, bad_json=s.bad_json),
        md5_mismatches=s.md5_mismatch,
        truncated=s.truncated,
        kept_raw=dict(f.raw_kinds.most_common()),
        normalizer_failures=f.normalizer_failures,
    )


def import_output(result: ImportResult) -> typed.Import:
    return typed.Import(
        run=str(result.run_dir),
        source=str(result.source),
        files=[imported_file(f) for f in result.files],
        skipped_files=[str(p) for p in result.skipped],
        events=result.events,
        duration_s=round(result.duration_s, 3),
    )


def import_report(result: ImportResult, run: Run) -> typed.ImportReport:
    """What ``import PATH --json`` prints: the import and ``run``'s (the imported run's) summary."""
    return typed.ImportReport(import_=import_output(result), summary=summary(run))


def import_nodes_report(parts: list[ImportResult], merged: MergeResult, run: Run) -> typed.ImportNodesReport:
    """What ``import PATH PATH... --json`` prints: each node's import, their merge, and the
    merged ``run``'s summary."""
    from dyn_inspect.inspector.reports.merge import merge_output

    return typed.ImportNodesReport(import_=[import_output(p) for p in parts], merge=merge_output(merged), summary=summary(run))
