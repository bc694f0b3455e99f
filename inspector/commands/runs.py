"""``dyn-inspect runs``: the runs under the runs directory, oldest first — when, command,
outcome and counts. A run that cannot be read is listed with why, not skipped."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from rich.table import Table

from dyn_inspect.engine.eventlog import runs_root
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.run import Run, latest_run, list_runs

HELP = "list recorded runs: when, command, outcome, breaks/recompiles/kernels"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs-dir", metavar="DIR", help="runs directory (default: ./.dyn-inspect/runs)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run_row(path: Any, latest: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"id": path.name, "path": str(path), "latest": path == latest}
    try:
        r = Run(path)
    except InspectorError as exc:
        row.update({"status": "unreadable", "error": str(exc)})
        return row
    m = r.model
    start = next((p.start for p in m.processes.values() if p.start), None)
    started = m.run_start.t if m.run_start and m.run_start.t else (start.t if start else None)
    row.update(
        {
            "started": started,
            "command": m.run_start.command if m.run_start else (start.argv if start else []),
            "status": m.status,
            "exit_code": m.exit_code,
            "duration_s": m.run_end.duration_s if m.run_end else None,
            "processes": len(m.processes),
            "frames": len(m.frames),
            "compiles": len(m.compiles),
            "graph_breaks": {"unique": len(m.breaks), "total": m.total_break_hits()},
            "recompiles": len(m.recompiles),
            "recompile_limit_hits": len(m.recompile_limits),
            "kernels": len(m.kernels),
            "compile_time_s": round(m.total_compile_time(), 4),
            "problems": len(r.problems),
        }
    )
    return row


def run(args: argparse.Namespace) -> int:
    root = runs_root(args.runs_dir)
    paths = list_runs(root)
    latest = latest_run(root)
    rows = [run_row(p, latest) for p in paths]
    if args.json:
        sys.stdout.write(json.dumps({"runs_dir": str(root), "runs": rows}, indent=2) + "\n")
        return 0
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
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["started"])) if row["started"] else "-"
        outcome = row["status"] + (f" (exit {row['exit_code']})" if row["exit_code"] not in (None, 0) else "")
        gb = row["graph_breaks"]
        table.add_row(
            rid, when, " ".join(row["command"]), outcome, f"{gb['unique']}/{gb['total']}", str(row["recompiles"]),
            str(row["kernels"]), f"{row['compile_time_s']:.1f}",
        )
    console.print(table)
    return 0
