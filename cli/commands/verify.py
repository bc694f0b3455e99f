"""``dyn-inspect verify [RUN]``: re-run the recorded command (after a fix) under the
recorder and show what changed — breaks, recompiles, causes, compile time — before → after.

The command, its working directory and how it was started come from the run's
``launcher.jsonl``; the new run lands beside the old one. ``--settle S`` stops the
program (SIGINT) once it went S seconds without compiling anything new, for training
loops that would otherwise run for hours: compilation is what verify is about. The
verdict is kept in the new run as ``verify.json`` (editors read it to mark a diagnostic
"fixed ✓ (verified run …)").
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from dyn_inspect.inspector.analysis.causes import Cause, causes
from dyn_inspect.inspector.analysis.diff import diff_runs
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.reports import open_cli_run
from dyn_inspect.inspector.run import Run, list_runs

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
    parser.add_argument("--timeout", type=float, default=3600.0, metavar="S", help="give up after S seconds (default 3600)")


@dataclass
class Counts:
    breaks_unique: int
    breaks_total: int
    recompiles: int
    limit_hits: int
    causes: int
    compile_time_s: float

    @classmethod
    def of(cls, m: RunModel, found: list[Cause]) -> Counts:
        return cls(
            len(m.breaks), m.total_break_hits(), len(m.recompiles), len(m.recompile_limits), len(found), round(m.total_compile_time(), 3)
        )

    def output(self) -> typed.VerifyCounts:
        return typed.VerifyCounts(**self.__dict__, recompile_limit_hits=self.limit_hits)


def _cause_key(c: Cause) -> tuple[object, ...]:
    """A cause's identity across an edit (lines move): kind + frames + what changed, or
    the break's type and the line's text."""
    if c.break_group is not None:
        e = c.break_group.first
        site = c.sites[0] if c.sites else e.loc
        return ("graph_break", e.gb_type, Path(site.file).name, (site.code or e.loc.code or "").strip())
    f = c.frames[0] if c.frames else None
    return ("recompile", f.name if f else "", c.title.split(" → ")[0])


def relaunch_argv(run: Run, allow_command: bool = False) -> tuple[list[str], str]:
    """``dyn-inspect run`` arguments that start the recorded program again, and its cwd.

    A script or a module is re-run with this interpreter. Any other recorded command
    (``dyn-inspect run -- CMD``) is whatever the run's ``launcher.jsonl`` says, and a run
    directory can come from anywhere (a repository, a bug report): it is re-run only when
    the user saw it and said so (``allow_command``: ``--yes``; the language server never
    passes it). docs/security.md, "What verify may run"."""
    start = run.model.run_start
    if start is None or start.mode == "import":
        raise InspectorError(f"{run.path.name} has no recorded command (an imported log or a torchrun worker's run): nothing to re-run")
    if start.mode == "notebook":
        raise InspectorError(f"{run.path.name} is a notebook cell's run: re-run the cell in its notebook (%%dyn_inspect)")
    cmd = list(start.command)
    base = [sys.executable, "-m", "dyn_inspect.cli", "run", "--no-tui", "--runs-dir", str(run.path.parent)]
    if start.compile_disabled:
        base.append("--disable-compile")
    if start.mode == "script" and len(cmd) >= 2:
        return base + cmd[1:], start.cwd
    if start.mode == "module" and len(cmd) >= 3:
        return base + ["-m", *cmd[2:]], start.cwd
    if not allow_command:
        raise InspectorError(
            f"{run.path.name} was recorded as a command, which verify runs only when you confirm it: "
            f"`{shlex.join(cmd)}` in {start.cwd} — check it, then `dyn-inspect verify --yes {run.path.name}`"
        )
    return base + ["--", *cmd], start.cwd


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


def rerun(run: Run, settle: float | None, timeout: float, allow_command: bool = False) -> tuple[Path, int, bool]:
    """Starts the program again; returns (new run dir, exit code, stopped by --settle)."""
    argv, cwd = relaunch_argv(run, allow_command)
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
    return max(fresh, key=lambda p: p.name), code, stopped


def verdict(before: Run, after: Run, exit_code: int, stopped: bool) -> typed.VerifyReport:
    cb, ca = causes(before.model), causes(after.model)
    keys_after = {_cause_key(c) for c in ca}
    keys_before = {_cause_key(c) for c in cb}
    d = diff_runs(before.model, after.model)
    return typed.VerifyReport(
        before_run=str(before.path),
        after_run=str(after.path),
        before=Counts.of(before.model, cb).output(),
        after=Counts.of(after.model, ca).output(),
        fixed=[typed.FixedCause(title=c.title, kind=c.kind, recompiles=c.recompile_count) for c in cb if _cause_key(c) not in keys_after],
        remaining=[typed.CauseTitle(title=c.title, kind=c.kind) for c in cb if _cause_key(c) in keys_after],
        new=[typed.CauseTitle(title=c.title, kind=c.kind) for c in ca if _cause_key(c) not in keys_before],
        breaks_removed=len(d.breaks.removed),
        breaks_added=len(d.breaks.added),
        exit_code=exit_code,
        stopped_when_settled=stopped,
    )


def run(args: argparse.Namespace) -> int:
    before = open_cli_run(args.run, args.runs_dir)
    console = make_console()
    _, cwd = relaunch_argv(before, args.yes)
    if not args.json:
        shown = " ".join(before.model.run_start.command if before.model.run_start else [])
        console.print(f"verify: re-running {shown} in {cwd}", markup=False, highlight=False)
    new_dir, code, stopped = rerun(before, args.settle, args.timeout, args.yes)
    after = Run(new_dir)
    report = verdict(before, after, code, stopped)
    fd = os.open(new_dir / VERIFY_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(to_json(report))
    if args.json:
        sys.stdout.write(to_json(report) + "\n")
        return 0
    data: dict[str, Any] = msgspec.to_builtins(report)
    b, a = data["before"], data["after"]
    console.print(
        f"verify: {Path(data['before_run']).name} → {new_dir.name}"
        + (" (stopped once compilation settled)" if stopped else f" (exit {code})"),
        markup=False,
        highlight=False,
    )
    for label, key in (
        ("graph breaks", "breaks_unique"),
        ("break hits", "breaks_total"),
        ("recompiles", "recompiles"),
        ("causes", "causes"),
    ):
        console.print(f"  {label:<13} {b[key]:>4} → {a[key]:<4}", markup=False, highlight=False)
    console.print(f"  {'compile time':<13} {b['compile_time_s']:>6.2f}s → {a['compile_time_s']:.2f}s", markup=False, highlight=False)
    for c in data["fixed"]:
        console.print(f"  fixed ✓  {c['title']}", markup=False, highlight=False, style="green")
    for c in data["remaining"]:
        console.print(f"  still there: {c['title']}", markup=False, highlight=False, style="yellow")
    for c in data["new"]:
        console.print(f"  new: {c['title']}", markup=False, highlight=False, style="red")
    return 0
