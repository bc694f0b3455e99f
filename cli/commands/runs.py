"""``dyn-inspect runs``: the runs under the runs directory, oldest first — when, command,
outcome and counts. A run that cannot be read is listed with why, not skipped.

``runs --prune [--keep N]`` deletes all but the newest N runs; the run ``latest`` points
at and runs still recording (a live process on this host) are always kept."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
from rich.table import Table

from dyn_inspect.cli.arguments import whole_number
from dyn_inspect.engine.eventlog import runs_root
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reader import Refused, open_inside
from dyn_inspect.inspector.reports.runs import runs_report
from dyn_inspect.inspector.run import Run, latest_run, list_runs

HELP = "list recorded runs: when, command, outcome, breaks/recompiles/kernels (--prune deletes old ones)"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs-dir", metavar="DIR", help="runs directory (default: ./.dyn-inspect/runs)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--prune", action="store_true", help="delete old runs, keeping the newest --keep (and latest, and live ones)")
    parser.add_argument(
        "--keep", type=_keep_count, default=None, metavar="N", help="with --prune: how many of the newest runs to keep (default 5)"
    )


DEFAULT_KEEP = 5


_keep_count = whole_number("runs", 0, "--keep cannot be negative")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _header_pids(path: Path) -> list[int]:
    """The writers' pids from each log's first line (``log_header``)."""
    pids = []
    for log in path.glob("*.jsonl"):
        try:  # (never a plain open: a FIFO named *.jsonl would hang `runs` for good)
            with os.fdopen(open_inside(path, log), "rb") as f:
                head = json.loads(f.readline(4096) or b"{}")
        except (OSError, ValueError, Refused):
            continue
        if isinstance(head, dict) and head.get("kind") == "log_header" and isinstance(head.get("pid"), int):
            pids.append(head["pid"])
    return pids


def _is_live(path: Path, m: RunModel) -> bool:
    """Still recording: no end written and a writer of its logs alive on this host."""
    if m.status != "running":
        return False
    host = socket.gethostname()
    pids = _header_pids(path)
    pids += [p.start.pid for p in m.processes.values() if p.start is not None and p.start.hostname == host]
    return any(_alive(pid) for pid in pids if pid > 0)


def prune(root: Path, keep: int) -> tuple[list[Path], list[Path]]:
    """(deleted, kept because live) — all but the newest ``keep`` runs and latest."""
    paths = list_runs(root)
    latest = latest_run(root)
    old = paths[: max(0, len(paths) - keep)]
    deleted: list[Path] = []
    live: list[Path] = []
    for path in old:
        if latest is not None and path.resolve() == latest.resolve():
            continue
        try:
            m = Run(path).model
        except (InspectorError, OSError, ValueError):
            # Not a run of ours (`runs` lists it so): a runs folder can be a symlink to
            # anyone's data, where any folder holding a *.jsonl would look like a run.
            continue
        if _is_live(path, m):
            live.append(path)
            continue
        shutil.rmtree(path)
        deleted.append(path)
    return deleted, live


def run(args: argparse.Namespace) -> int:
    root = runs_root(args.runs_dir)
    if args.keep is not None and not args.prune:
        raise InspectorError("--keep goes with --prune: dyn-inspect runs --prune --keep N")
    if args.prune:
        return _run_prune(args, root)
    paths = list_runs(root)
    latest = latest_run(root)
    report = runs_report(root, paths, latest)
    if args.json:
        sys.stdout.write(to_json(report) + "\n")
        return 0
    rows: list[dict[str, Any]] = msgspec.to_builtins(report.runs)
    console = make_console()
    if not rows:
        console.print(f"no runs in {root} — record one with `dyn-inspect your_script.py`", markup=False, highlight=False)
        return 0
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
    for col in ("run", "started", "command", "outcome", "breaks", "recompiles", "kernels", "compile s"):
        table.add_column(col, overflow="fold")
    for row in rows:
        rid = row["id"] + (" *" if row["latest"] else "")
        if row["status"] == "unreadable":
            table.add_row(rid, "-", "-", f"unreadable: {row['error']}", "-", "-", "-", "-")
            continue
        when = _when(row["started"])
        outcome = row["status"] + (f" (exit {row['exit_code']})" if row["exit_code"] not in (None, 0) else "")
        gb = row["graph_breaks"]
        table.add_row(
            rid,
            when,
            " ".join(row["command"]),
            outcome,
            f"{gb['unique']}/{gb['total']}",
            str(row["recompiles"]),
            str(row["kernels"]),
            f"{row['compile_time_s']:.1f}",
        )
    console.print(table)
    return 0


def _when(t: float | None) -> str:
    """A start time as local date and time; "-" for none, or for one no calendar holds
    (a crafted 1e300 or NaN: localtime raises, and one bad run must not hide the others)."""
    if not t:
        return "-"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))
    except (OverflowError, ValueError, OSError):
        return "-"


def _run_prune(args: argparse.Namespace, root: Path) -> int:
    keep = DEFAULT_KEEP if args.keep is None else args.keep
    if not root.is_dir():
        raise InspectorError(f"no runs directory at {root}")
    try:
        deleted, live = prune(root, keep)
    except OSError as exc:
        raise InspectorError(f"cannot delete a run in {root}: {exc}") from None
    if args.json:
        report = typed.PruneReport(runs_dir=str(root), deleted=[str(p) for p in deleted], kept_live=[str(p) for p in live])
        sys.stdout.write(to_json(report) + "\n")
        return 0
    console = make_console()
    left = len(list_runs(root))
    console.print(f"deleted {len(deleted)} run(s) from {root}; {left} left", markup=False, highlight=False)
    for path in live:
        console.print(f"kept {path.name}: still recording", markup=False, highlight=False)
    return 0
