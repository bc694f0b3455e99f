"""``dyn-inspect diff RUN_A RUN_B``: what changed from run A to run B — graph breaks,
recompile causes and kernels added, removed or changed in count, the kernels of both runs
whose compile metadata or cost changed (config, registers, spills, shared memory, IR sizes,
target, time per step: one line each, ``a → b`` per changed value), and compile time
(total, by stage, by frame)."""

from __future__ import annotations

import argparse
import sys

from dyn_inspect.cli.common import add_rank_argument, open_cli_run, print_read_warnings
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reports.diff import diff_report, kernel_change_text, run_diff

HELP = "compare two runs: graph breaks, recompiles, kernels and compile time added/removed/changed"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", help="the earlier (baseline) run")
    parser.add_argument("run_b", help="the later run")
    parser.add_argument("--runs-dir", metavar="DIR")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_rank_argument(parser)


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
