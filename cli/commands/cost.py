"""``dyn-inspect cost [RUN]``: where a profiled step's time goes — compiled graphs, the eager
code graph breaks leave between them, guard checks, wrappers, everything outside — and what
each break costs per step (``inspector.reports.cost``; the run needs ``--profile N``); with
``--eager RUN`` (the same program under ``--disable-compile --profile N``) the speedup and
after how many steps compiling pays back."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.table import Table

from dyn_inspect.cli.common import add_run_arguments, open_cli_run, printed_json, read_run
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import file_line, short_path
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports import cost
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.units import share_text, time_text

HELP = "where a profiled step's time goes (compiled graphs, eager in compiled code, guard checks) and what each break costs"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, json=True, rank=True)
    parser.add_argument(
        "--eager",
        metavar="RUN",
        help="the same program recorded with `--disable-compile --profile N`: the speedup, and when compiling pays back",
    )


def _eager_run(arg: str, runs_dir: str | None) -> Run:
    eager = open_cli_run(arg, runs_dir)
    start = eager.model.run_start
    if start is None or not start.compile_disabled:
        raise InspectorError(
            f"{eager.path.name} compiled: --eager takes a run recorded with `dyn-inspect run --disable-compile --profile N`"
        )
    if not eager.model.step_profiles:
        raise InspectorError(f"{eager.path.name} has no profiled steps: record it with `dyn-inspect run --disable-compile --profile N`")
    return eager


def _print_process(console: object, p: typed.StepBreakdown, several: bool) -> None:
    print_ = console.print  # type: ignore[attr-defined]
    head = f"{p.steps} profiled steps, {time_text(p.step_us)} per step ({p.device})"
    if p.plain_step_us is not None:
        head += f"; without the profiler {time_text(p.plain_step_us)} per step ({p.plain_steps} steps)"
        if p.profiler_slowdown is not None and p.profiler_slowdown >= 1.25:
            head += f"\n(the profiler slowed the step {p.profiler_slowdown:.1f}×, eager code most: the times below are under it)"
    who = (f"rank {p.rank}" if p.rank is not None else Path(p.log).name) + ": " if several else ""
    print_(f"\n{who}{head}", markup=False, highlight=False, style="bold")
    if p.noise is not None:
        print_(f"  {p.noise.text}", markup=False, highlight=False, style="yellow" if p.noise.busy or p.noise.oversubscribed else "dim")
        if p.noise.fix:
            print_(f"  fix: {p.noise.fix}", markup=False, highlight=False, style="yellow")
    if p.ab is not None:
        print_(f"  is compiling worth it: {p.ab.text}", markup=False, highlight=False, style="bold")
    elif p.ab_note:
        print_(f"  no compiled-against-eager steps in this run: {p.ab_note}", markup=False, highlight=False, style="dim")
    gpu = p.device == "cuda"
    rows = [
        (
            "compiled graphs",
            p.compiled_us,
            "forward and backward" + (f" (their kernels: {time_text(p.device_us)} of GPU time)" if gpu else ""),
        ),
        ("eager in compiled code", p.eager_in_regions_us, "Python left in compiled frames: graph breaks, returns"),
        ("guard checks", p.guards_us, "cache lookups before each compiled frame"),
        ("wrappers", p.overhead_us, "Dynamo's and AOTAutograd's around each graph"),
        ("outside compiled code", p.outside_us, "loss, optimizer, data, other eager Python"),
    ]
    if p.device_wait_us:
        rows.insert(2, ("waiting for the GPU", p.device_wait_us, "a break's `.item()` or sync waiting for the work queued before it"))
    table = Table(box=None, pad_edge=False, show_edge=False, show_header=False)
    for col in ("what", "time", "share", "note"):
        table.add_column(col, justify="right" if col in ("time", "share") else "left", no_wrap=col != "note")
    for what, us, note in rows:
        table.add_row(what, time_text(us), share_text(us, p.step_us), note)
    print_(table)
    if p.figures and any(f.spread is not None for f in p.figures):
        print_("\nspread over the steps:", markup=False, highlight=False, style="bold")
        for f in p.figures:
            print_(f"  {f.text}", markup=False, highlight=False)
    if p.breaks:
        print_("\ngraph breaks by time per step:", markup=False, highlight=False, style="bold")
        for i, b in enumerate(p.breaks, 1):
            print_(f"  {i}. {file_line(b.file, b.line)}  {b.reason}", markup=False, highlight=False)
            print_(f"     {b.text}", markup=False, highlight=False)
    if p.regions:
        print_("\ncompiled regions (per step):", markup=False, highlight=False, style="bold")
        regions = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan")
        regions.add_column("compile", no_wrap=True)
        regions.add_column("function", overflow="fold")
        for col in ("calls", "total", "graph", "eager", "guards", "wrappers", *(["GPU"] if gpu else [])):
            regions.add_column(col, justify="right", no_wrap=True)
        for r in p.regions:
            regions.add_row(
                r.compile_id,
                r.function or "-",
                f"{r.calls_per_step:g}",
                time_text(r.us_per_step),
                time_text(r.compiled_us),
                time_text(r.eager_us),
                time_text(r.guards_us),
                time_text(r.overhead_us),
                *([time_text(r.device_us)] if gpu else []),
            )
        print_(regions)
    if p.backward:
        names = ", ".join(
            f"{b.compile_id or '?'} {time_text(b.us_per_step)}" + (f" (GPU {time_text(b.device_us)})" if gpu else "") for b in p.backward
        )
        print_(f"backward graphs (per step): {names}", markup=False, highlight=False)


def run(args: argparse.Namespace) -> int:
    r = read_run(args)
    report = cost(r, _eager_run(args.eager, args.runs_dir) if args.eager else None)
    if printed_json(args, report):
        return 0
    console = make_console()
    console.print(f"cost — {short_path(report.run)}", markup=False, highlight=False)
    if report.message:
        console.print(f"  {report.message}", markup=False, highlight=False)
        return 0
    if report.eager is not None:
        console.print(f"  against {short_path(report.eager.eager_run)}: {report.eager.text}", markup=False, highlight=False, style="bold")
        for f in report.eager.functions:
            console.print(f"    {f.text}", markup=False, highlight=False, style="yellow" if f.slower_compiled else None)
    for p in report.processes:
        _print_process(console, p, len(report.processes) > 1)
    return 0
