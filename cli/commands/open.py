"""``dyn-inspect open [RUN]``: browse a finished (or still running) run in the TUI."""

from __future__ import annotations

import argparse
import gc
import sys

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.run import resolve_run
from dyn_inspect.tui.view_list import VIEWS

HELP = "open a run in the terminal UI (default: the latest run)"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?", help="run directory or id (default: latest)")
    parser.add_argument("--runs-dir", metavar="DIR", help="where runs are stored (default ./.dyn-inspect/runs)")
    parser.add_argument("--view", choices=[v.id for v in VIEWS if v.always], default="overview", help="the view to start in")


def run(args: argparse.Namespace) -> int:
    path = resolve_run(args.run, args.runs_dir)
    if not (sys.stdout.isatty() and sys.stdin.isatty()):
        raise InspectorError("`dyn-inspect open` needs a terminal; use `dyn-inspect summary` (or --json) in scripts")
    # No cyclic GC until the first frame is on the screen (InspectorApp turns it back on):
    # importing Textual and building the screen make many objects and no garbage.
    gc.disable()
    from dyn_inspect.tui import first_screen

    opening = first_screen.opening(path, args.view)
    from dyn_inspect.tui.app import run_open

    return run_open(path, initial_view=args.view, opening=opening)
