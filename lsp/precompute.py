"""A finished run's findings, computed when its index is written, so that the first editor
start after the run shows them at once (``findings_cache``) instead of building them.

Building the findings of a million-event run takes seconds, and nobody should wait for
them at the end of their program: ``after_index_written`` (the CLI registers it in
``index.WRITTEN``) starts ``python -m dyn_inspect.lsp.precompute RUN`` detached, at low
priority, for a finished run of at least ``MIN_EVENTS`` events (below that the server builds
them in well under a tenth of a second). The child opens the run as the server does (the
LSP's kinds, from the index), builds the findings with the run's working directory as the
workspace root and saves them for any roots they hold for (``save_for_any_roots``). It
is best effort: it never writes into the run, a run it cannot read is one line on its
stderr (devnull when detached) and exit status 1, and the server builds what is missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dyn_inspect.inspector.run import Run

MIN_EVENTS = 20_000
MIN_EVENTS_ENV = "DYN_INSPECT_PRECOMPUTE_MIN_EVENTS"  # tests: 0 precomputes every run
OFF_ENV = "DYN_INSPECT_NO_PRECOMPUTE"  # set: no precompute at all


def min_events() -> int:
    try:
        return int(os.environ.get(MIN_EVENTS_ENV, MIN_EVENTS))
    except ValueError:
        return MIN_EVENTS


def after_index_written(run: Run, index_path: Path) -> None:
    """``index.WRITTEN`` listener: start the precompute for a finished run big enough."""
    if os.environ.get(OFF_ENV) or not run.model.finished or run.model.event_count < min_events():
        return
    spawn(run.path)


def spawn(run_dir: Path) -> bool:
    """Start the precompute of ``run_dir`` in its own session (it outlives this process,
    and a Ctrl-C in the terminal does not reach it); False when it could not be started."""
    try:
        subprocess.Popen(
            [sys.executable, "-m", "dyn_inspect.lsp.precompute", str(run_dir)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return False
    return True


def precompute(run_dir: Path) -> str:
    """Build and save the findings of the finished run at ``run_dir``; what happened, in a
    few words. Raises only ``InspectorError`` (a run that cannot be read)."""
    from dyn_inspect.inspector import index
    from dyn_inspect.inspector.locations import run_cwd
    from dyn_inspect.inspector.reports.findings import build_index
    from dyn_inspect.inspector.run import Run
    from dyn_inspect.inspector.workspace import Workspace
    from dyn_inspect.lsp import findings_cache
    from dyn_inspect.lsp.run_source import touch_of

    if index.identity(run_dir) is None:
        return "skipped: no current index covers the run (it grew, or is not ours)"
    run = Run(run_dir, skip=index.NOT_FOR_FINDINGS)
    if not (run.from_index and run.read_on_open == 0 and run.model.finished):
        return "skipped: the run is not finished or not exactly its index"
    cwd = run_cwd(run.model)
    if not cwd or not os.path.isdir(cwd):
        return "skipped: the run's working directory is not here"
    roots = [Path(cwd)]
    ws = Workspace.for_run(roots, run)
    if findings_cache.load(run, ws) is not None:
        return "already saved"
    built = build_index(run, ws)
    touch = touch_of(run, roots, ws)
    if not findings_cache.save_for_any_roots(run, ws, built, touch):
        return "not saved: a recorded path maps onto another file (the server builds them)"
    return f"saved the findings of {len(built.files)} files"


def main(argv: list[str] | None = None) -> int:
    from dyn_inspect.inspector.errors import InspectorError

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m dyn_inspect.lsp.precompute RUN_DIR", file=sys.stderr)
        return 2
    try:
        os.nice(10)  # background work: the user's next command comes first
    except (OSError, AttributeError):
        pass
    try:
        print(f"dyn-inspect precompute: {precompute(Path(args[0]))}", file=sys.stderr)
    except InspectorError as exc:
        print(f"dyn-inspect precompute: {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        print(f"dyn-inspect precompute: cannot read {args[0]}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
