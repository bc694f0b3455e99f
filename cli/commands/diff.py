"""``dyn-inspect diff RUN_A RUN_B``: what changed from run A to run B — graph breaks,
recompile causes and kernels added, removed or changed in count, and compile time (total,
by stage, by frame)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from dyn_inspect.inspector.analysis.diff import Changes, RunDiff, diff_runs
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.ranks import add_rank_argument
from dyn_inspect.inspector.reports import open_cli_run, print_read_warnings

HELP = "compare two runs: graph breaks, recompiles, kernels and compile time added/removed/changed"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", help="the earlier (baseline) run")
    parser.add_argument("run_b", help="the later run")
    parser.add_argument("--runs-dir", metavar="DIR")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_rank_argument(parser)


def changes_dict(c: Changes[Any], kinds: tuple[type[Any], type[Any], type[Any]]) -> Any:
    """``kinds``: the Structs of the whole changes, of an added/removed item, of a changed one."""
    whole, counted, changed = kinds
    return whole(
        added=[counted(**asdict(item), count=n) for item, n in c.added],
        removed=[counted(**asdict(item), count=n) for item, n in c.removed],
        changed=[changed(**asdict(item), count_a=a, count_b=b) for item, a, b in c.changed],
        unchanged=c.same,
    )


def diff_dict(d: RunDiff, a: str, b: str) -> typed.DiffReport:
    return typed.DiffReport(
        a=a,
        b=b,
        graph_breaks=changes_dict(d.breaks, (typed.BreakChanges, typed.DiffBreakCount, typed.DiffBreakChange)),
        recompiles=changes_dict(d.recompiles, (typed.RecompileChanges, typed.DiffRecompileCount, typed.DiffRecompileChange)),
        kernels=changes_dict(d.kernels, (typed.KernelChanges, typed.DiffKernelCount, typed.DiffKernelChange)),
        compile_time=typed.CompileTimeDiff(
            a_s=round(d.compile_time_a_s, 4),
            b_s=round(d.compile_time_b_s, 4),
            delta_s=round(d.compile_time_delta_s, 4),
            by_stage=[
                typed.StageTime(stage=s.name, a_s=round(s.a_s, 4), b_s=round(s.b_s, 4), delta_s=round(s.delta_s, 4)) for s in d.stages
            ],
            by_frame=[
                typed.FrameTime(frame=f.name, a_s=round(f.a_s, 4), b_s=round(f.b_s, 4), delta_s=round(f.delta_s, 4)) for f in d.frames
            ],
        ),
    )


def run(args: argparse.Namespace) -> int:
    a = open_cli_run(args.run_a, args.runs_dir, args.rank)
    b = open_cli_run(args.run_b, args.runs_dir, args.rank)
    print_read_warnings(a)
    print_read_warnings(b)
    d = diff_runs(a.model, b.model, min_time_change_s=0.05)
    if args.json:
        sys.stdout.write(to_json(diff_dict(d, str(a.path), str(b.path))) + "\n")
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
    say(f"compile time: {d.compile_time_a_s:.2f}s → {d.compile_time_b_s:.2f}s ({d.compile_time_delta_s:+.2f}s)")
    for s in d.stages:
        say(f"  {s.name}: {s.a_s:.2f}s → {s.b_s:.2f}s ({s.delta_s:+.2f}s)")
    for f in d.frames[:10]:
        say(f"  {f.name}: {f.a_s:.2f}s → {f.b_s:.2f}s ({f.delta_s:+.2f}s)")
    return 0
