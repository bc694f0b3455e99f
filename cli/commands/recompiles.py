"""``dyn-inspect recompiles [RUN]``: per frame, a timeline of its compiles — which guard
failed on what value, a concrete suggestion, and where the recompile limit was hit (the
frame runs eagerly from then on)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

from dyn_inspect.cli.common import add_rank_argument, open_cli_run, print_read_warnings
from dyn_inspect.inspector.analysis.causes import describe_fix, recompile_causes
from dyn_inspect.inspector.analysis.guard_failures import GuardFailure
from dyn_inspect.inspector.analysis.recompiles import TimelineEntry, frames_with_recompiles, recompile_limit_of, recompile_timeline
from dyn_inspect.inspector.analysis.shapes import shapes_of
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.locations import def_line, file_line, short_path
from dyn_inspect.inspector.model import FrameInfo
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import to_json

HELP = "explain recompiles: per frame, which guard failed, on what value, and what to do"
MAX_OLDER_ENTRIES = 2  # older cache entries' failures printed per recompile (text output)


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?", help="run directory or id (default: latest)")
    parser.add_argument("--runs-dir", metavar="DIR")
    parser.add_argument("--all", action="store_true", help="also list frames compiled only once")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_rank_argument(parser)


def failure_dict(f: GuardFailure) -> typed.GuardFailure:
    return typed.GuardFailure(**asdict(f))


def entry_dict(e: TimelineEntry) -> typed.TimelineEntry:
    c = e.compile
    return typed.TimelineEntry(
        index=e.index,
        compile_id=e.cid,
        t=e.t,
        outcome=c.outcome,
        compile_time_s=round(c.compile_time_s, 4),
        failures=[failure_dict(f) for f in e.failures],
        suggestion=typed.Suggestion(**asdict(e.suggestion)) if e.suggestion else None,
        limit_reached=e.limit_reached,
    )


def frame_dict(frame: FrameInfo, timeline: list[TimelineEntry], limit: int | None) -> typed.RecompiledFrame:
    return typed.RecompiledFrame(
        function=frame.name,
        file=frame.filename,
        line=frame.firstlineno,
        def_line=def_line(frame.filename, frame.firstlineno),
        log=frame.log,
        compiles=len(frame.compiles),
        recompiles=sum(1 for e in timeline if e.is_recompile),
        recompile_limit=limit,
        limit_reached=any(e.limit_reached for e in timeline),
        timeline=[entry_dict(e) for e in timeline],
    )


def run(args: argparse.Namespace) -> int:
    r = open_cli_run(args.run, args.runs_dir, args.rank)
    print_read_warnings(r)
    m = r.model
    frames = m.frames_in_order() if args.all else frames_with_recompiles(m)
    rows = [(f, recompile_timeline(m, f), recompile_limit_of(m, f)) for f in frames]
    if args.json:
        data = typed.RecompilesReport(
            run=str(r.path),
            recompiles=len(m.recompiles),
            limit_hits=len(m.recompile_limits),
            recompile_limit_hits=len(m.recompile_limits),
            frames=[frame_dict(f, t, lim) for f, t, lim in rows],
        )
        sys.stdout.write(to_json(data) + "\n")
        return 0
    console = make_console()

    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False)

    say(
        f"recompiles: {len(m.recompiles)} in {sum(1 for _, t, _ in rows if len(t) > 1)} frame(s); recompile limit hit: {len(m.recompile_limits)} — {short_path(str(r.path))}"
    )
    # The root causes first: one edit where the variable is made can remove every recompile
    # listed below it (the frame-by-frame suggestions follow, for the frames' own view).
    for cause in recompile_causes(m) if rows else []:
        if cause.fix is not None:
            say(f"root cause: {cause.title} — fix: {describe_fix(cause.fix)}; `dyn-inspect causes`")
    for frame, timeline, limit in rows:
        say("")
        lim = f", limit {limit}" if limit is not None else ""
        say(
            f"{frame.name}  {short_path(frame.filename)}:{def_line(frame.filename, frame.firstlineno)}  ({len(frame.compiles)} compiles{lim})"
        )
        for e in timeline:
            head = f"  [{e.cid}] "
            if e.index == 0:
                say(f"{head}first compile ({e.compile.outcome}, {e.compile.compile_time_s:.2f}s)")
                continue
            if e.limit_reached:
                say(f"{head}RECOMPILE LIMIT reached — runs eagerly from here on")
            # Torch lists one failure per older cache entry: show the newest few, so a frame
            # recompiled N times prints O(N) lines, not O(N²).
            for i, f in enumerate(e.failures[: 1 + MAX_OLDER_ENTRIES]):
                label = "guard failed" if i == 0 else "also failed"
                entry = f" (entry {f.entry})" if f.entry else ""
                where = f"  at {f.where}" if f.where else ""
                say(f"{head if i == 0 and not e.limit_reached else ' ' * len(head)}{label}{entry}: [{f.kind}] {f.text}{where}")
            hidden = len(e.failures) - 1 - MAX_OLDER_ENTRIES
            if hidden > 0:
                say(f"{' ' * len(head)}… and {hidden} older cache entr{'y' if hidden == 1 else 'ies'} failed too (--json lists every one)")
            if e.suggestion is not None:
                say(f"{' ' * len(head)}→ {e.suggestion.text}")
                for code in (e.suggestion.code or "").splitlines():
                    say(f"{' ' * len(head)}  {code}")
            shapes = shapes_of(e.compile)
            if shapes.automatic_dynamic and shapes.dynamic:
                dims = ", ".join(dict.fromkeys(f"`{s.name}`" for s in shapes.dynamic))
                say(f"{' ' * len(head)}then: torch made {dims} dynamic (automatic dynamic) — the next size reuses this graph")
            for spec in shapes.specializations:
                say(f"{' ' * len(head)}specialized: {spec.describe(file_line(spec.loc.file, spec.loc.line) if spec.loc else None)}")
    return 0
