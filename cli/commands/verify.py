"""``dyn-inspect verify [RUN]``: re-run the recorded command (after a fix) under the
recorder and show what changed — breaks, recompiles, compile failures, causes, compile
time — before → after, and whether the re-run verifies the fix.

The command and how it was started come from the run's ``launcher.jsonl``; where it re-runs
(the current directory or ``--in DIR`` when the program's file is there, else the recorded
one) and the verdict are inspector/reports/verify.py's; the new run lands beside the old
one. A re-run that does not verify the fix exits 1. ``--settle S`` stops the program
(SIGINT) once it went S seconds without compiling anything new, for training loops that
would otherwise run for hours (such a re-run is shown, not verified). The verdict is kept
in the new run as ``verify.json`` (editors read it to mark a diagnostic "fixed ✓ (verified
run …)" when its state is verified).
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from dyn_inspect.cli.common import open_cli_run
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reports.verify import RerunPlan, plan_rerun, verify_report
from dyn_inspect.inspector.run import Run, list_runs
from dyn_inspect.inspector.units import time_text

HELP = "re-run a recorded program (after a fix) and show breaks/recompiles/causes before → after"
VERIFY_FILE = "verify.json"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?", help="the run to verify against (default: latest)")
    parser.add_argument("--runs-dir", metavar="DIR")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--settle", type=float, metavar="S", help="stop the program after S seconds without a new compile")
    parser.add_argument(
        "--yes",
        action="store_true",
        help="re-run a run recorded as a command (`dyn-inspect run -- CMD`): verify shows it first and runs it only with this",
    )
    parser.add_argument(
        "--in",
        dest="in_dir",
        metavar="DIR",
        help="re-run in DIR when the recorded program's file is there (default: the current directory), else where it was recorded",
    )
    parser.add_argument("--timeout", type=float, default=3600.0, metavar="S", help="give up after S seconds (default 3600)")


def relaunch_argv(run: Run, allow_command: bool = False, here: str | None = None) -> tuple[list[str], RerunPlan]:
    """``dyn-inspect run`` arguments that start the recorded program again, and where
    (``plan_rerun`` from ``here``, default the current directory).

    A script or a module is re-run with this interpreter when its file is a Python file
    inside the directory it runs in (``plan_rerun``'s ``confirm`` says why not). Any other recorded command
    (``dyn-inspect run -- CMD``) is whatever the run's ``launcher.jsonl`` says, and a run
    directory can come from anywhere (a repository, a bug report): it, and a script or
    module that is not the user's (the stdlib's ``timeit`` with a statement), is re-run
    only when the user saw it and said so (``allow_command``: ``--yes``; the language
    server never passes it). docs/security.md, "What verify may run"."""
    start = run.model.run_start
    if start is None or start.mode == "import":
        raise InspectorError(f"{run.path.name} has no recorded command (an imported log or a torchrun worker's run): nothing to re-run")
    if start.mode == "notebook":
        raise InspectorError(f"{run.path.name} is a notebook cell's run: re-run the cell in its notebook (%%dyn_inspect)")
    plan = plan_rerun(start, here or os.getcwd())
    cmd = plan.command
    if plan.confirm is not None and not allow_command:
        raise InspectorError(
            f"{run.path.name} {plan.confirm}: `{shlex.join(cmd)}` in {plan.cwd} — check it, then `dyn-inspect verify --yes {run.path.name}`"
        )
    base = [sys.executable, "-m", "dyn_inspect.cli", "run", "--no-tui", "--runs-dir", str(run.path.parent)]
    if start.compile_disabled:
        base.append("--disable-compile")
    if start.profile_steps > 0:  # the same profiled steps, so that step times compare
        base.append(f"--profile={start.profile_steps}")
    if start.mode == "script" and len(cmd) >= 2:
        return base + cmd[1:], plan
    if start.mode == "module" and len(cmd) >= 3:
        return base + ["-m", *cmd[2:]], plan
    return base + ["--", *cmd], plan


def _settled(run_dir: Path, quiet_s: float) -> bool:
    """Has the run compiled something, and nothing new for ``quiet_s`` seconds?"""
    try:
        r = Run(run_dir)
    except InspectorError:
        return False
    m = r.model
    starts = [c.start.t for c in m.compiles.values() if c.start is not None]
    if not starts or any(c.capture is None for c in m.compiles.values()):
        return False
    return time.time() - max(starts) >= quiet_s


def rerun(
    run: Run, settle: float | None, timeout: float, allow_command: bool = False, here: str | None = None
) -> tuple[Path, int, bool, RerunPlan]:
    """Starts the program again; returns (new run dir, exit code, stopped by --settle, where)."""
    argv, plan = relaunch_argv(run, allow_command, here)
    cwd = plan.cwd
    if not os.path.isdir(cwd):
        raise InspectorError(f"the run was recorded in {cwd}, which does not exist here")
    before = set(list_runs(run.path.parent))
    env = dict(os.environ, DYN_INSPECT_NO_TUI="1")
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), False)
    deadline = time.time() + timeout
    stopped = False
    new: Path | None = None
    while proc.poll() is None:
        time.sleep(0.5)
        proc.stdout.read()  # drain: the program's output is in the new run, not needed here
        if new is None:
            fresh = set(list_runs(run.path.parent)) - before
            new = max(fresh, key=lambda p: p.name) if fresh else None
        if settle is not None and new is not None and not stopped and _settled(new, settle):
            os.killpg(proc.pid, signal.SIGINT)
            stopped = True
        if time.time() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise InspectorError(f"the re-run did not finish within {timeout:g}s (use --settle S to stop once compilation settled)")
    code = proc.wait()
    fresh = set(list_runs(run.path.parent)) - before
    if not fresh:
        raise InspectorError(f"the re-run (exit {code}) recorded no run — nothing compiled, or the program did not start")
    return max(fresh, key=lambda p: p.name), code, stopped, plan


def run(args: argparse.Namespace) -> int:
    before = open_cli_run(args.run, args.runs_dir)
    here = args.in_dir or os.getcwd()
    if not os.path.isdir(here):
        raise InspectorError(f"--in {here}: no such directory")
    console = make_console()
    _, plan = relaunch_argv(before, args.yes, here)
    if not args.json:
        console.print(f"verify: re-running {shlex.join(plan.command)} in {plan.cwd}", markup=False, highlight=False)
        if plan.note:
            console.print(f"  ({plan.note})", markup=False, highlight=False)
    new_dir, code, stopped, plan = rerun(before, args.settle, args.timeout, args.yes, here)
    report = verify_report(before, Run(new_dir), plan, code, stopped)
    fd = os.open(new_dir / VERIFY_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(to_json(report))
    verified = report.state == "verified"
    if args.json:
        sys.stdout.write(to_json(report) + "\n")
        return 0 if verified else 1
    print_report(console, report, new_dir.name)
    return 0 if verified else 1


def print_report(console: Console, r: typed.VerifyReport, new_id: str) -> None:
    def out(text: str, style: str | None = None) -> None:
        console.print(text, markup=False, highlight=False, style=style)

    b, a = r.before, r.after
    ended = " (stopped once compilation settled)" if r.stopped_when_settled else f" (exit {r.exit_code})"
    out(f"verify: {Path(r.before_run).name} → {new_id}{ended}")
    rows: list[tuple[str, float, float]] = [
        ("graph breaks", b.breaks_unique, a.breaks_unique),
        ("break hits", b.breaks_total, a.breaks_total),
        ("recompiles", b.recompiles, a.recompiles),
        ("failed compiles", b.failures, a.failures),
        ("causes", b.causes, a.causes),
    ]
    for label, x, y in rows:
        out(f"  {label:<16} {x:>4g} → {y:g}")
    out(f"  {'compile time':<16} {b.compile_time_s:>6.2f}s → {a.compile_time_s:.2f}s")
    if b.step_us is not None and a.step_us is not None:
        said = f": the step {r.step_change.text}" if r.step_change is not None else ""
        out(f"  {'step (profiled)':<16} {time_text(b.step_us):>7} → {time_text(a.step_us)}{said}")
    for f in r.failures_gone:
        out(f"  failure gone: {f.file}:{f.line} {f.fail_type}: {f.headline}", "green")
    for f in r.failures_remaining:
        out(f"  failure still there: {f.file}:{f.line} {f.fail_type}: {f.headline}", "yellow")
    for f in r.failures_new:
        out(f"  new failure: {f.file}:{f.line} {f.fail_type}: {f.headline}", "red")
    verified = r.state == "verified"
    for c in r.fixed:
        # not verified: the cause is gone from a re-run that did not run like the recorded one
        cost = f" (cost {time_text(c.us_per_step)}/step)" if c.us_per_step is not None else ""
        out(f"  fixed ✓  {c.title}{cost}" if verified else f"  gone from the re-run: {c.title}{cost}", "green" if verified else None)
    for t in r.remaining:
        was, now = t.us_per_step_before, t.us_per_step_after
        cost = f" ({time_text(was)} → {time_text(now)} per step)" if was is not None and now is not None else ""
        out(f"  still there: {t.title}{cost}", "yellow")
    for t in r.new:
        out(f"  new: {t.title}", "red")
    if verified:
        out(f"verified ✓ — the re-run exited {r.exit_code} as the recorded run did, with no new compile failure", "green")
    else:
        out(f"not verified — {r.reason}", "bold red")
