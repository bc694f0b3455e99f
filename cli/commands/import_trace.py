"""``dyn-inspect import PATH [-o RUN_DIR] [--path-map OLD=NEW]``: a TORCH_TRACE file or
directory (one log per rank, stray files skipped) → a run every face reads.

Prints what each file held (ranks, records, lines skipped, md5 mismatches, kinds kept raw)
and then the run's summary; ``--json`` prints both as one JSON object.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.text import Text

from dyn_inspect.cli.arguments import whole_number
from dyn_inspect.engine.importer import FileImport, ImportResult, PathMap, TraceImportError, import_trace
from dyn_inspect.engine.tracefile import MAX_LINE_MB, MAX_TOTAL_MB
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import short_path
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reports.imports import import_nodes_report, import_report
from dyn_inspect.inspector.run import Run

HELP = "import a TORCH_TRACE log (file or directory of per-rank logs) as a run"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="+",
        help="a TORCH_TRACE file (.log or .log.gz) or a directory of them; several: one per node of a job, merged into one run",
    )
    parser.add_argument("-o", "--output", metavar="RUN_DIR", help="write the run here (default: a new run under the runs dir)")
    parser.add_argument("--runs-dir", metavar="DIR", help="runs root when -o is not given (default ./.dyn-inspect/runs)")
    parser.add_argument(
        "--path-map",
        metavar="OLD=NEW",
        action="append",
        default=[],
        help="rewrite source paths under OLD (the machine that wrote the log) to NEW (your checkout); repeatable",
    )
    parser.add_argument(
        "--max-line-mb",
        type=_megabytes,
        default=MAX_LINE_MB,
        metavar="MB",
        help=f"refuse a file with a line longer than this (default {MAX_LINE_MB}; a damaged or hostile log)",
    )
    parser.add_argument(
        "--max-size-mb",
        type=_megabytes,
        default=MAX_TOTAL_MB,
        metavar="MB",
        help=f"refuse a file larger than this uncompressed (default {MAX_TOTAL_MB})",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")


_megabytes = whole_number("MiB", 1, "the limit must be at least 1 MiB")


def _file_line(f: FileImport) -> str:
    s = f.stats
    rank = f"rank {f.rank}" if f.rank is not None else "no rank"
    compiles = sum(p.compiles for p in f.processes)
    parts = [f"{s.records} records", f"{compiles} compile{'s' if compiles != 1 else ''}"]
    if len(f.processes) > 1:
        parts.append(f"{len(f.processes)} processes")
    doubts = []
    if s.bad_prefix or s.bad_json:
        doubts.append(f"{s.skipped_lines} corrupted line{'s' if s.skipped_lines != 1 else ''} skipped")
    if s.md5_mismatch:
        doubts.append(f"{s.md5_mismatch} payload md5 mismatch{'es' if s.md5_mismatch != 1 else ''}")
    if s.truncated:
        doubts.append("file ends mid-stream (truncated)")
    if f.normalizer_failures:
        doubts.append(f"{f.normalizer_failures} record{'s' if f.normalizer_failures != 1 else ''} not understood (kept raw)")
    line = f"  {rank:8} {f.path.name}: {', '.join(parts)}"
    return line + (f"; {', '.join(doubts)}" if doubts else "")


def print_import(result: ImportResult, run: Run, file: Any = None) -> None:
    out = file or sys.stdout
    console = make_console(out)
    n = len(result.files)
    console.print(
        Text.assemble(
            ("dyn-inspect", "bold"),
            f": imported {n} TORCH_TRACE file{'s' if n != 1 else ''} into {short_path(str(result.run_dir))} ({result.duration_s:.2f}s)",
        )
    )
    for f in result.files:
        console.print(_file_line(f), markup=False, highlight=False)
    if result.skipped:
        names = ", ".join(p.name for p in result.skipped)
        console.print(f"  skipped (not TORCH_TRACE logs): {names}", markup=False, highlight=False)
    raw: dict[str, int] = {}
    for f in result.files:
        for kind, count in f.raw_kinds.items():
            raw[kind] = raw.get(kind, 0) + count
    if raw:
        kinds = ", ".join(f"{k} ×{v}" for k, v in sorted(raw.items(), key=lambda kv: -kv[1]))
        console.print(f"  kept raw (no normalizer for the kind): {kinds}", markup=False, highlight=False)
    from dyn_inspect.cli.commands.summary import print_summary

    print_summary(run, file=out)


def _import_one(args: argparse.Namespace, path: str, out: Path | None) -> ImportResult:
    source = Path(path)
    if not source.exists():
        raise InspectorError(f"no such file or directory: {path}")
    try:
        path_map = PathMap.parse(args.path_map)
        return import_trace(
            source,
            out=out,
            runs_dir=args.runs_dir,
            path_map=path_map,
            max_line_mb=args.max_line_mb,
            max_total_mb=args.max_size_mb,
        )
    except TraceImportError as exc:
        raise InspectorError(str(exc)) from exc
    except PermissionError as exc:
        raise InspectorError(f"cannot read {exc.filename}: permission denied") from exc
    except MemoryError:
        raise InspectorError(f"cannot import {path}: out of memory (lower --max-line-mb / --max-size-mb)") from None
    except OSError as exc:
        raise InspectorError(f"cannot import {path}: {exc.strerror or exc}") from exc


def _import_nodes(args: argparse.Namespace) -> int:
    """Several nodes' TORCH_TRACE directories: each imported on its own (node = its place
    in the list), then merged into one run (inspector/merge.py); the parts are removed."""
    import tempfile

    from dyn_inspect.inspector.merge import merge_runs

    out = Path(args.output) if args.output else None
    if out is not None and out.exists():
        raise InspectorError(f"{out} already exists: give a new directory to -o")
    with tempfile.TemporaryDirectory(prefix="dyn-inspect-import-") as tmp:
        parts = [_import_one(args, path, Path(tmp) / f"node{i}") for i, path in enumerate(args.path)]
        merged = merge_runs([p.run_dir for p in parts], out=out, runs_dir=args.runs_dir)
    run = Run(merged.run_dir)
    if args.json:
        sys.stdout.write(to_json(import_nodes_report(parts, merged, run)) + "\n")
        return 0
    for i, part in enumerate(parts):
        print(f"node {i}: {part.source} — {len(part.files)} TORCH_TRACE file{'s' if len(part.files) != 1 else ''}")
        for f in part.files:
            print(_file_line(f))
    print(f"dyn-inspect: merged {len(parts)} nodes into {short_path(str(merged.run_dir))}")
    from dyn_inspect.cli.commands.summary import print_summary

    print_summary(run)
    return 0


def run(args: argparse.Namespace) -> int:
    if len(args.path) > 1:
        return _import_nodes(args)
    result = _import_one(args, args.path[0], Path(args.output) if args.output else None)
    imported = Run(result.run_dir)
    if args.json:
        sys.stdout.write(to_json(import_report(result, imported)) + "\n")
        return 0
    print_import(result, imported)
    return 0
