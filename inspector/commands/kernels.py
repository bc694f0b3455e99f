"""``dyn-inspect kernels [RUN] [--at FILE:LINE]``: generated kernels by compile (or those
generated from one source line), with fused ops, backend, vectorization, and the run's
vectorization coverage of its CPU kernels."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.table import Table

from dyn_inspect.inspector.analysis.kernels import Vectorization, effective_isa, kernels_at, kernels_by_compile, vectorization
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.locations import parse_file_line, short_path
from dyn_inspect.inspector.model import KernelInfo, RunModel
from dyn_inspect.inspector.ranks import add_rank_argument
from dyn_inspect.inspector.reports import loc_dict, open_cli_run, print_read_warnings

HELP = "list generated kernels by compile or by source line (--at FILE:LINE), with vectorization coverage"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?", help="run directory or id (default: latest)")
    parser.add_argument("--runs-dir", metavar="DIR")
    parser.add_argument("--at", metavar="FILE:LINE", help="only kernels generated from this source line (Inductor provenance)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_rank_argument(parser)


def kernel_dict(model: RunModel, k: KernelInfo) -> dict[str, Any]:
    e = k.event
    return {
        "name": k.name,
        "compile_id": k.compile.cid,
        "log": k.compile.log,
        "backend": e.backend,
        "backward": e.backward,
        "fused_ops": list(e.fused_ops),
        "source_nodes": list(e.source_nodes),
        "vectorized": e.vectorized,
        "isa": effective_isa(model, k),
        "lines_of_code": e.lines,
        "source_lines": [loc_dict(loc) for loc in k.lines],
        "profile": {"calls": k.profile.calls, "total_us": k.profile.total_us} if k.profile else None,
    }


def coverage_dict(v: Vectorization) -> dict[str, Any]:
    return {
        "cpp_kernels": v.cpp_kernels,
        "vectorized": v.vectorized,
        "share": round(v.share, 4) if v.share is not None else None,
        "by_isa": v.by_isa,
        "cpu_isa": v.cpu_isa,
        "scalar_kernels": v.scalar,
    }


def coverage_text(v: Vectorization) -> str:
    if v.share is None:
        return "CPU kernels: none (no C++ kernels in this run)"
    isas = ", ".join(f"{isa} {n}" for isa, n in sorted(v.by_isa.items())) or "-"
    return f"CPU kernel vectorization: {v.vectorized}/{v.cpp_kernels} ({v.share:.0%}) — {isas}; CPU capability {v.cpu_isa or 'unknown'}"


def run(args: argparse.Namespace) -> int:
    r = open_cli_run(args.run, args.runs_dir, args.rank)
    print_read_warnings(r)
    m = r.model
    if args.at:
        file, line = parse_file_line(args.at)
        groups = [(None, kernels_at(m, file, line))]
    else:
        groups = [(c, ks) for c, ks in kernels_by_compile(m)]
    cov = vectorization(m)
    if args.json:
        data: dict[str, Any] = {
            "run": str(r.path),
            "at": args.at,
            "kernels": [kernel_dict(m, k) for _, ks in groups for k in ks],
            "vectorization": coverage_dict(cov),
        }
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    console = make_console()
    kernels = [k for _, ks in groups for k in ks]
    where = f" from {args.at}" if args.at else ""
    console.print(f"kernels{where}: {len(kernels)} — {short_path(str(r.path))}", markup=False, highlight=False)
    if kernels:
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
        for col in ("compile", "kernel", "backend", "fused ops", "vectorized", "source lines"):
            table.add_column(col, overflow="fold")
        for k in kernels:
            lines = ", ".join(dict.fromkeys(f"{short_path(loc.file)}:{loc.line}" for loc in k.lines)) or "-"
            vec = (effective_isa(m, k) or "scalar") if k.event.backend == "cpp" else "-"
            cid = k.compile.cid + (" bw" if k.event.backward else "")
            table.add_row(cid, k.name, k.event.backend, ", ".join(k.event.fused_ops) or "-", vec, lines)
        console.print(table)
    elif args.at:
        console.print("  (no kernel's provenance names this line: it may have no ops, or provenance was off)", markup=False, highlight=False)
    console.print(coverage_text(cov), markup=False, highlight=False)
    return 0
