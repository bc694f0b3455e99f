"""What the report commands share: the ``--rank R`` option, opening the run a command names
(narrowed to those ranks) and printing what could not be read of it on stderr, printing a
report as ``--json``, and a console that prints text as it is."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console

from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import file_line
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.outputs.reports import DdpSplitSite
from dyn_inspect.inspector.ranks import format_ranks, select_rank
from dyn_inspect.inspector.reports.reading import read_warnings
from dyn_inspect.inspector.run import Run, open_run


def parse_ranks(text: str) -> tuple[int, ...]:
    """``--rank`` values: "3", "0-3,7", "0–3" (an en dash too) → sorted unique ranks."""
    out: set[int] = set()
    for part in text.replace("–", "-").split(","):
        part = part.strip()
        lo, dash, hi = part.partition("-")
        try:
            if dash:
                a, b = int(lo), int(hi)
                if a > b:
                    raise argparse.ArgumentTypeError(f"rank range {part!r} runs backwards (write {b}-{a})")
                out.update(range(a, b + 1))
            else:
                out.add(int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected ranks like 3 or 0-3,7, got {text!r}") from None
    if any(r < 0 for r in out):
        raise argparse.ArgumentTypeError(f"ranks are not negative, got {text!r}")
    return tuple(sorted(out))


def add_run_arguments(parser: argparse.ArgumentParser, *, json: bool = False, rank: bool = False) -> None:
    """The run a reading command reads (``RUN``, ``--runs-dir``), and with ``json`` its
    ``--json`` and with ``rank`` its ``--rank``."""
    parser.add_argument("run", nargs="?", help="run directory or id (default: latest)")
    parser.add_argument("--runs-dir", metavar="DIR")
    if json:
        parser.add_argument("--json", action="store_true", help="machine-readable output")
    if rank:
        add_rank_argument(parser)


def add_rank_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rank", type=parse_ranks, metavar="R", help="only these ranks' processes: 3, or ranges like 0-3,7 (default: all ranks)"
    )


def open_cli_run(arg: str | None, runs_dir: str | None, rank: int | None = None) -> Run:
    """``open_run`` for a command that must answer from events: an empty run is an error
    (one line, exit 2) rather than an empty report. ``rank`` narrows it to one rank's
    processes (``--rank R``)."""
    run = open_run(arg, runs_dir)
    if run.model.event_count == 0:
        raise InspectorError(f"{run.path} holds no events (an empty or unstarted run)")
    return select_rank(run, rank)


def print_read_warnings(run: Run) -> None:
    for line in read_warnings(run):
        print(f"dyn-inspect: warning: {line}", file=sys.stderr)


def read_run(args: argparse.Namespace) -> Run:
    """The run ``add_run_arguments`` asked for (narrowed to ``--rank``), its read warnings
    printed."""
    run = open_cli_run(args.run, args.runs_dir, getattr(args, "rank", None))
    print_read_warnings(run)
    return run


def printed_json(args: argparse.Namespace, report: Any) -> bool:
    """With ``--json``, print ``report`` as JSON and say so (the command is done)."""
    if not getattr(args, "json", False):
        return False
    sys.stdout.write(to_json(report) + "\n")
    return True


def text_console() -> tuple[Console, Callable[..., None]]:
    """A console and ``say(text="")``, which prints text as it is (no markup, no
    highlighting: a run's strings are data)."""
    console = make_console()

    def say(text: str = "") -> None:
        console.print(text, markup=False, highlight=False)

    return console, say


SKIPPED_SHOWN = 5  # the skipped files a command lists by name (then "and N more")


def skipped_lines(items: list[str]) -> list[str]:
    """One ``skipped:`` line per item, at most SKIPPED_SHOWN, then how many more: a run with
    30,000 junk ``*.jsonl`` files printed 60,000 lines."""
    lines = [f"  skipped: {s}" for s in items[:SKIPPED_SHOWN]]
    if len(items) > SKIPPED_SHOWN:
        lines.append(f"  … and {len(items) - SKIPPED_SHOWN} more skipped (--json lists them all)")
    return lines


def print_ddp_splits(sites: list[DdpSplitSite], say: Callable[[str], None], ranked: bool) -> None:
    """The frames DDPOptimizer split at bucket boundaries, under the graph breaks and apart
    from them (``summary`` and ``breaks`` both print this)."""
    if not sites:
        return
    say(f"  split by DDP at bucket boundaries: {sum(s.graphs - 1 for s in sites)} (not graph breaks in your code)")
    for s in sites:
        on = f"  ({format_ranks(s.ranks)})" if ranked and s.ranks else ""
        say(f"    {s.headline}{on}")
        starts = sorted({file_line(b.file, b.line) for b in s.boundaries})
        if starts:
            say(f"      graphs begin again at {', '.join(starts)}")
