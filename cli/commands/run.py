"""``dyn-inspect run`` (and the bare ``dyn-inspect train.py``): record a program."""

from __future__ import annotations

import argparse
import gc
import os
import sys

from dyn_inspect.cli.arguments import whole_number
from dyn_inspect.inspector.errors import InspectorError

HELP = "run a Python script, module or command under the recorder"


_positive_int = whole_number("steps", 1, "the number of steps must be at least 1")


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", dest="module", metavar="MODULE", help="run a module like python -m")
    parser.add_argument("--no-tui", action="store_true", help="no live TUI; print a summary at the end")
    parser.add_argument("--disable-compile", action="store_true", help="run the same program eagerly (recorded as such)")
    parser.add_argument(
        "--no-provenance",
        action="store_true",
        help="do not map kernels to source lines from Inductor's codegen (nothing the program sees changes either way)",
    )
    parser.add_argument(
        "--profile",
        "--profile-kernels",
        dest="profile_kernels",
        type=_positive_int,
        default=0,
        metavar="N",
        help="profile N steady-state steps after compilation: where a step's time goes "
        "(compiled regions, the eager code between them, guard checks; `dyn-inspect cost`), "
        "time per kernel and per source line",
    )
    parser.add_argument(
        "--all-graphs",
        action="store_true",
        help="also record the graphs Inductor prints before its pre-grad, joint and post-grad passes (costs compile time)",
    )
    parser.add_argument(
        "--kernel-ir",
        action="store_true",
        help="keep each Triton kernel's IR (TTIR, TTGIR, LLIR, PTX, SASS) for `dyn-inspect kernel NAME --stage` (GPU runs)",
    )
    parser.add_argument("--runs-dir", metavar="DIR", help="where runs are stored (default ./.dyn-inspect/runs, env DYN_INSPECT_RUNS_DIR)")
    parser.add_argument("--json", action="store_true", help="print the end summary as JSON")
    parser.add_argument("target", nargs="?", help="script.py, or with `--` a command (e.g. -- torchrun ...)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")


def _spec(args: argparse.Namespace):  # noqa: ANN202 - LaunchSpec, imported lazily
    from dyn_inspect.engine.launcher import LaunchSpec, child_command

    rest = list(args.args or [])
    if args.module:
        target = args.module
        extra = ([args.target] if args.target else []) + rest
        mode = "module"
    elif args.target == "--" or (args.target is None and rest[:1] == ["--"]):
        command = rest[1:] if rest[:1] == ["--"] else rest
        if not command:
            raise InspectorError("nothing to run after `--`")
        target, extra, mode = command[0], command[1:], "command"
    elif args.target is not None:
        target, extra = args.target, rest
        if rest[:1] == ["--"]:
            extra = rest[1:]
        # An executable without .py (a venv's python, torchrun) is a command, not a script.
        if target.endswith(".py") or (os.path.isfile(target) and not os.access(target, os.X_OK)):
            if not os.path.isfile(target):
                raise InspectorError(f"no such script: {target}")
            mode = "script"
        else:
            mode = "command"
    else:
        raise InspectorError("give a script to run: dyn-inspect train.py [args...]")
    return LaunchSpec(
        command=child_command(target, extra, mode),  # type: ignore[arg-type]
        mode=mode,  # type: ignore[arg-type]
        runs_dir=args.runs_dir,
        compile_disabled=args.disable_compile,
        provenance=not args.no_provenance,
        profile_kernels=getattr(args, "profile_kernels", 0) or 0,
        all_graphs=getattr(args, "all_graphs", False),
        kernel_ir=getattr(args, "kernel_ir", False),
    )


def _inside_other_run() -> bool:
    """Started by torchrun (``torchrun --no-python dyn-inspect ...``) or inside a recorded run."""
    return bool(os.environ.get("TORCHELASTIC_RUN_ID") or os.environ.get("DYN_INSPECT_RUN_DIR"))


def _want_tui(args: argparse.Namespace) -> bool:
    if args.no_tui or args.json or os.environ.get("DYN_INSPECT_NO_TUI"):
        return False
    if _inside_other_run():
        return False  # torchrun workers share one terminal; a nested run has its parent's face
    if not (sys.stdout.isatty() and sys.stdin.isatty()):
        return False
    try:
        import dyn_inspect.tui.app  # noqa: F401
    except ImportError:
        return False
    return True


def run(args: argparse.Namespace) -> int:
    from dyn_inspect.engine.eventlog import RecordingUnavailable

    spec = _spec(args)
    # A runs directory that cannot hold the run is refused before the program starts
    # (docs/security.md): one line, exit 2, nothing left behind.
    try:
        collecting = gc.isenabled()
        gc.disable()  # to the TUI's first frame (see `open`); the TUI turns it back on
        if _want_tui(args):
            from dyn_inspect.tui.app import run_live

            return run_live(spec)
        if collecting:
            gc.enable()
        from dyn_inspect.engine.launcher import end_like, run_foreground

        run_dir, exit_code, killed_by = run_foreground(spec)
    except RecordingUnavailable as exc:
        raise InspectorError(f"{exc}; nothing was run (choose another place with --runs-dir)") from None
    from dyn_inspect.cli.commands.summary import print_summary
    from dyn_inspect.inspector.run import Run

    if os.environ.get("DYN_INSPECT_RUN_DIR") or (os.environ.get("TORCHELASTIC_RUN_ID") and os.environ.get("RANK", "0") != "0"):
        return end_like(exit_code, killed_by)  # one summary per torchrun job (rank 0's), none from a nested run
    out = sys.stderr if not args.json else sys.stdout
    if out is not None:  # (a closed stream: print(file=None) would write to stdout)
        try:
            print_summary(Run(run_dir, recorder=True), as_json=args.json, file=out)
        except InspectorError as exc:
            if sys.stderr is not None:
                print(f"dyn-inspect: {exc}", file=sys.stderr)
    # Killed by a signal: the launcher dies by it too (a Ctrl-C'd shell loop stops).
    return end_like(exit_code, killed_by)
