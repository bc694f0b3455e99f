"""``dyn-inspect diff RUN_A RUN_B``: what changed from run A to run B — graph breaks,
recompile causes and kernels added, removed or changed in count, the kernels of both runs
whose compile metadata or cost changed (config, registers, spills, shared memory, IR sizes,
target, time per step: one line each, ``a → b`` per changed value), and compile time
(total, by stage, by frame)."""

from __future__ import annotations

import argparse
import sys

from dyn_inspect.cli.common import add_rank_argument, open_cli_run, print_read_warnings
from dyn_inspect.inspector.analysis.diff import KernelChange
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reports.diff import diff_report, run_diff
from dyn_inspect.inspector.units import bytes_text, time_text

HELP = "compare two runs: graph breaks, recompiles, kernels and compile time added/removed/changed"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", help="the earlier (baseline) run")
    parser.add_argument("run_b", help="the later run")
    parser.add_argument("--runs-dir", metavar="DIR")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_rank_argument(parser)


def _bytes_change(a: int, b: int) -> str:
    """``18.3 KiB → 14.0 KiB``; in bytes where the KiB would read the same."""
    ta, tb = bytes_text(a), bytes_text(b)
    return f"{ta} → {tb}" if ta != tb else f"{a} B → {b} B"


def _us(v: float) -> str:
    return f"{v:.2f} µs" if v < 100 else time_text(v)


def value_change_text(c: KernelChange, what: str) -> str:
    """``registers 32 → 24``: one entry of ``c.changed`` as the text line shows it."""
    a, b = c.a, c.b
    if what.startswith("ir_bytes."):
        stage = what.removeprefix("ir_bytes.")
        return f"{stage} {_bytes_change(a.ir_bytes[stage], b.ir_bytes[stage])}"
    if what == "shared_bytes":
        return f"shared {_bytes_change(a.shared_bytes or 0, b.shared_bytes or 0)}"
    if what == "us_per_step":
        ta, tb = a.us_per_step or 0.0, b.us_per_step or 0.0
        share = f" ({(tb - ta) / ta:+.0%})" if ta else ""
        return f"time/step {_us(ta)} → {_us(tb)}{share}"
    return f"{what} {getattr(a, what)} → {getattr(b, what)}"


def kernel_change_text(c: KernelChange) -> str:
    return f"{c}: " + ", ".join(value_change_text(c, what) for what in c.changed)


def run(args: argparse.Namespace) -> int:
    a = open_cli_run(args.run_a, args.runs_dir, args.rank)
    b = open_cli_run(args.run_b, args.runs_dir, args.rank)
    print_read_warnings(a)
    print_read_warnings(b)
    d = run_diff(a.model, b.model)
    if args.json:
        sys.stdout.write(to_json(diff_report(d, str(a.path), str(b.path))) + "\n")
        return 0
    console = make_console()
    say = lambda s: console.print(s, markup=False, highlight=False)  # noqa: E731
    say(f"diff {a.path.name} → {b.path.name}")
    for title, changes in (("graph breaks", d.breaks), ("recompiles", d.recompiles), ("kernels", d.kernels)):
        say(f"{title}: +{len(changes.added)} -{len(changes.removed)} ~{len(changes.changed)} ({changes.same} unchanged)")
        for item, n in changes.added:
            say(f"  + {item}  ×{n}")
        for item, n in changes.removed:
            say(f"  - {item}  ×{n}")
        for item, n_a, n_b in changes.changed:
            say(f"  ~ {item}  ×{n_a} → ×{n_b}")
        if changes is d.kernels and d.kernel_changes:
            say(f"  compile metadata or cost changed: {len(d.kernel_changes)} (paired by kernel, compile id and direction)")
            for c in d.kernel_changes:
                say(f"  ≠ {kernel_change_text(c)}")
    say(f"compile time: {d.compile_time_a_s:.2f}s → {d.compile_time_b_s:.2f}s ({d.compile_time_delta_s:+.2f}s)")
    for s in d.stages:
        say(f"  {s.name}: {s.a_s:.2f}s → {s.b_s:.2f}s ({s.delta_s:+.2f}s)")
    for f in d.frames[:10]:
        say(f"  {f.name}: {f.a_s:.2f}s → {f.b_s:.2f}s ({f.delta_s:+.2f}s)")
    return 0
