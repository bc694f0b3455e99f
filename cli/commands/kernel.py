"""``dyn-inspect kernel NAME [RUN] [--stage S [--side-by-side]] [--repro [-o FILE]]``: one
kernel in full — what it fuses and where it came from, what Triton made of it (config,
autotuning, registers, spills, shared memory, target), how it was launched (``--profile``),
its IR stages (``--kernel-ir`` runs), and a runnable repro of it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from dyn_inspect.cli.common import add_run_arguments, open_cli_run, print_read_warnings
from dyn_inspect.inspector.console import make_console, safe_text
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import short_path
from dyn_inspect.inspector.model import KernelInfo, RunModel
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reports.kernels import (
    KERNEL_STAGES,
    find_kernel,
    kernel,
    kernel_report,
    kernel_repro,
    kernel_stage,
    kernel_stages,
    launch_lines,
    stage_beside_source,
    user_lines,
)

HELP = "one kernel in full: compile metadata, launches, IR stages (--stage), a runnable repro (--repro)"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="kernel name (as `dyn-inspect kernels` lists it)")
    add_run_arguments(parser, json=True, rank=True)
    parser.add_argument("--compile", metavar="CID", help="the compile, when several made a kernel of this name")
    parser.add_argument("--backward", action="store_true", help="the backward graph's kernel of this name")
    parser.add_argument("--stage", choices=KERNEL_STAGES, help="print one stage: the kernel's source, or an IR kept by `run --kernel-ir`")
    parser.add_argument("--side-by-side", action="store_true", help="with --stage: the kernel's source beside the stage")
    parser.add_argument("--repro", action="store_true", help="write a script that runs and times this kernel as compiled")
    parser.add_argument("-o", "--output", metavar="FILE", help="with --repro: where to write it (default: stdout)")
    parser.add_argument("--force", action="store_true", help="with -o: overwrite FILE if it exists")


def run(args: argparse.Namespace) -> int:
    r = open_cli_run(args.run, args.runs_dir, args.rank)
    print_read_warnings(r)
    k = find_kernel(r.model, args.name, args.compile, args.backward)
    source = r.blob_text(k.event.source)
    if args.repro:
        out = kernel_repro(k, source, r, Path(args.output).name if args.output else "k.py")
        if out.script is None:
            raise InspectorError(out.why_not or "no repro")
        if args.output:
            target = Path(args.output)
            if target.exists() and not args.force:
                raise InspectorError(f"{args.output} exists: pass --force to overwrite it")
            try:
                target.write_text(out.script, encoding="utf-8")
            except OSError as err:
                raise InspectorError(f"cannot write {args.output}: {err.strerror or err}") from err
            print(f"wrote {args.output}: python {args.output} runs {k.name} as compiled")
        else:
            sys.stdout.write(out.script)
        return 0
    stage_text = kernel_stage(r, k, args.stage) if args.stage else None
    if args.json:
        sys.stdout.write(to_json(kernel_report(r, k, source, args.stage, stage_text)) + "\n")
        return 0
    console = make_console()
    if args.stage:
        assert stage_text is not None
        lines = user_lines(k) or "no user line recorded"
        console.print(f"{k.name} — {args.stage} (compile {k.compile.cid}) — from {lines}", markup=False, highlight=False)
        beside = stage_beside_source(args.stage, stage_text, source) if args.side_by_side else None
        if beside is not None:
            table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan", expand=True, show_lines=True)
            table.add_column("line", justify="right", no_wrap=True)
            table.add_column("source", overflow="fold", ratio=1)
            table.add_column(args.stage, overflow="fold", ratio=1)
            for line, text, ir in beside:
                table.add_row(str(line) if line is not None else "-", Text(text), Text(ir))
            console.print(table)
        elif args.side_by_side and args.stage != "source":
            say_err = f"dyn-inspect: {args.stage} carries no line information (cuobjdump -sass): shown whole\n"
            sys.stderr.write(say_err)
            sys.stdout.write(safe_text(stage_text if stage_text.endswith("\n") else stage_text + "\n"))
        else:
            sys.stdout.write(safe_text(stage_text if stage_text.endswith("\n") else stage_text + "\n"))
        return 0
    _print_detail(console, r.model, k, source, str(r.path))
    return 0


def _print_detail(console: object, m: RunModel, k: KernelInfo, source: str, run_path: str) -> None:
    d = kernel(m, k, source)
    say = lambda text: console.print(text, markup=False, highlight=False)  # type: ignore[attr-defined]  # noqa: E731
    say(
        f"{d.name} — compile {d.compile_id}{' (backward)' if d.backward else ''}, {d.backend}, {d.lines_of_code} lines — {short_path(run_path)}"
    )
    if d.fused_ops:
        say("  fused: " + ", ".join(d.fused_ops))
    say("  from: " + (user_lines(k) or "no user line recorded"))
    if d.isa or d.vectorized:
        say(f"  vectorized: {d.isa or d.vectorized}")
    c = d.compile
    if c is not None:
        say(f"  compiled: {c.headline}")
        say(f"  autotune: {c.autotune}")
        if c.tried:
            # Indented under the header lines: rich's padding, not spaces in the cells.
            table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold cyan", padding=(0, 1, 0, 1))
            for col in ("config tried", "time", "regs", "spills", "smem (B)"):
                table.add_column(col, justify="left" if col == "config tried" else "right")
            for t in c.tried:
                time = "failed" if t.failed else (f"{t.time_ms * 1e3:.1f} µs" if t.time_ms is not None else "-")
                table.add_row(
                    t.config,
                    time,
                    *("-" if v is None else str(v) for v in (t.registers, t.spills, t.shared_bytes)),
                )
            console.print(Padding(table, (0, 0, 0, 3), expand=False))  # type: ignore[attr-defined]
        if c.ir_bytes:
            sizes = ", ".join(f"{s} {n / 1024:.1f} KiB{' (kept)' if s in c.ir_kept else ''}" for s, n in c.ir_bytes.items())
            say(f"  IR: {sizes}")
    elif d.backend == "triton":
        say("  compile metadata: not recorded (Triton's autotuner was not seen: an imported log, or a run of an older dyn-inspect)")
    p = d.profile
    if p is not None:
        say(f"  profiled: {p.us_per_step:.1f} µs per step, {p.calls_per_step:g} calls per step")
    origin, launched = launch_lines(k, source)
    if launched:
        say(f"  launches ({origin}):")
        for line in launched:
            say(f"    {line}")
    for finding in d.launch_findings:
        say(f"  ! {finding}")
    say(f"  stages: {', '.join(kernel_stages(k))} (`dyn-inspect kernel {d.name} --stage S`)")
