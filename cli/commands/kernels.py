"""``dyn-inspect kernels [RUN] [--at FILE:LINE] [--sort KEY]``: generated kernels by compile
(or those generated from one source line), with fused ops, backend, vectorization, the
run's vectorization coverage of its CPU kernels, and — for a ``--profile-kernels`` run —
time per step, calls per step and achieved bandwidth / FLOP rate (``analysis.costs``)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from dyn_inspect.cli.common import add_run_arguments, printed_json, read_run
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.locations import file_line, parse_file_line, short_path
from dyn_inspect.inspector.outputs.reports import KernelProfile, LibraryKernel, Vectorization
from dyn_inspect.inspector.reports.kernels import SORTS, kernels_report, listed_kernels
from dyn_inspect.inspector.units import bytes_text, rate_text, time_text

HELP = "list generated kernels by compile or by source line (--at FILE:LINE), with vectorization coverage"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, json=True, rank=True)
    parser.add_argument("--at", metavar="FILE:LINE", help="only kernels generated from this source line (Inductor provenance)")
    parser.add_argument(
        "--sort",
        choices=SORTS,
        help="order: time (per step, default for a profiled run), calls, bandwidth, flops, "
        "registers, spills, shared (Triton compile metadata), name, compile",
    )


def coverage_text(v: Vectorization) -> str:
    if v.share is None:
        return "CPU kernels: none (no C++ kernels in this run)"
    isas = ", ".join(f"{isa} {n}" for isa, n in sorted(v.by_isa.items())) or "-"
    return f"CPU kernel vectorization: {v.vectorized}/{v.cpp_kernels} ({v.share:.0%}) — {isas}; CPU capability {v.cpu_isa or 'unknown'}"


def _cost_cells(p: KernelProfile | None) -> list[str]:
    if p is None:
        return ["-", "-", "-", "-"]
    gflops = p.tflops * 1e3 if p.tflops is not None else None
    return [time_text(p.us_per_step), f"{p.calls_per_step:g}", rate_text(p.bandwidth_gbps, "", p.peak_gbps), rate_text(gflops, "")]


def run(args: argparse.Namespace) -> int:
    r = read_run(args)
    found, order = listed_kernels(r.model, parse_file_line(args.at) if args.at else None, args.sort)
    report = kernels_report(r, found, args.at, order)
    if printed_json(args, report):
        return 0
    kernels = report.kernels
    profiled = any(k.profile is not None for k in kernels)
    console = make_console()
    where = f" from {args.at}" if args.at else ""
    sorted_by = f", by {order}" if order else ""
    console.print(f"kernels{where}: {len(kernels)}{sorted_by} — {short_path(str(r.path))}", markup=False, highlight=False)
    with_meta = any(k.compile is not None for k in kernels)
    if kernels:
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
        # A kernel name is an identifier: kept whole while it fits beside the figures (the
        # ops and lines wrap first); one longer than that (GPT-2's backward fuses twenty ops
        # into 170 characters) folds onto a second line rather than squeezing every figure
        # to an ellipsis. Figures never shrink below their header.
        table.add_column("compile", no_wrap=True, min_width=7)
        longest = max(len(k.name) for k in kernels)
        table.add_column("kernel", overflow="fold", min_width=min(longest, 64))
        if profiled:
            for col in ("time/step", "calls/step", "GB/s", "GFLOP/s"):
                table.add_column(col, justify="right", no_wrap=True, min_width=len(col))
        if with_meta:
            table.add_column("config", overflow="fold", min_width=12)
            for col in ("regs", "spills", "smem"):
                table.add_column(col, justify="right", no_wrap=True, min_width=max(len(col), 6))
        for col in ("backend", "fused ops", "vectorized", "source lines"):
            table.add_column(col, overflow="fold")
        for k in kernels:
            lines = ", ".join(dict.fromkeys(file_line(loc.file, loc.line) for loc in k.source_lines if loc is not None)) or "-"
            vec = (k.isa or "scalar") if k.backend == "cpp" else "-"
            cid = k.compile_id + (" bw" if k.backward else "")
            cost_cells = _cost_cells(k.profile) if profiled else []
            meta_cells: list[str] = []
            if with_meta:
                c = k.compile
                meta_cells = [
                    c.config if c is not None else "-",
                    _num(c.registers if c is not None else None),
                    _num(c.spills if c is not None else None),
                    bytes_text(c.shared_bytes if c is not None else None),
                ]
            table.add_row(cid, k.name, *cost_cells, *meta_cells, k.backend, ", ".join(k.fused_ops) or "-", vec, lines)
        console.print(table)
    elif args.at:
        console.print(
            "  (no kernel's provenance names this line: it may have no ops, or provenance was off)", markup=False, highlight=False
        )
    if report.library_kernels:
        _print_library(console, report.library_kernels)
    console.print(coverage_text(report.vectorization), markup=False, highlight=False)
    return 0


def _print_library(console: Any, library: list[LibraryKernel]) -> None:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan", title_justify="left")
    table.add_column("compile", no_wrap=True)
    # cuBLAS/CUTLASS names are whole C++ signatures: the argument list goes, and what is
    # left is cut with an ellipsis rather than pushing the numbers off the screen.
    table.add_column("library kernel", no_wrap=True, overflow="ellipsis", max_width=72)
    table.add_column("op", no_wrap=True)
    for col in ("time/step", "calls/step", "GB/s", "GFLOP/s"):
        table.add_column(col, justify="right", no_wrap=True)
    for lk in library:
        table.add_row((lk.compile_id or "-") + (" bw" if lk.backward else ""), lk.name, lk.op or "-", *_cost_cells(lk.profile))
    console.print(f"library kernels (profiled): {len(library)}", markup=False, highlight=False)
    console.print(table)


def _num(v: int | None) -> str:
    return "-" if v is None else str(v)
