"""``dyn-inspect recompiles [RUN]``: per frame, a timeline of its compiles — which guard
failed on what value, a concrete suggestion, and where the recompile limit was hit (the
frame runs eagerly from then on)."""

from __future__ import annotations

import argparse

from dyn_inspect.cli.common import add_run_arguments, printed_json, read_run, text_console
from dyn_inspect.inspector.locations import file_line, short_path
from dyn_inspect.inspector.reports.recompiles import frame_timelines, recompiles_report, root_cause_lines
from dyn_inspect.inspector.reports.shapes import run_shapes

HELP = "explain recompiles: per frame, which guard failed, on what value, and what to do"
MAX_OLDER_ENTRIES = 2  # older cache entries' failures printed per recompile (text output)


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, json=True, rank=True)
    parser.add_argument("--all", action="store_true", help="also list frames compiled only once")


def run(args: argparse.Namespace) -> int:
    r = read_run(args)
    m = r.model
    report = recompiles_report(r, frame_timelines(m, every_frame=args.all))
    if printed_json(args, report):
        return 0
    console, say = text_console()

    frames = report.frames
    say(
        f"recompiles: {report.recompiles} in {sum(1 for f in frames if len(f.timeline) > 1)} frame(s); recompile limit hit: {report.limit_hits} — {short_path(str(r.path))}"
    )
    # The root causes first: one edit where the variable is made can remove every recompile
    # listed below it (the frame-by-frame suggestions follow, for the frames' own view).
    for cause in root_cause_lines(m) if frames else []:
        say(f"root cause: {cause.title} — fix: {cause.fix}; `dyn-inspect causes`")
    shapes = {(cs.log, cs.compile_id): cs for cs in run_shapes(m)} if frames else {}
    for frame in frames:
        say("")
        lim = f", limit {frame.recompile_limit}" if frame.recompile_limit is not None else ""
        where = file_line(frame.file, frame.def_line) if frame.file and frame.def_line is not None else "?"
        say(f"{frame.function}  {where}  ({frame.compiles} compiles{lim})")
        for e in frame.timeline:
            head = f"  [{e.compile_id}] "
            if e.index == 0:
                say(f"{head}first compile ({e.outcome}, {e.compile_time_s:.2f}s)")
                continue
            if e.limit_reached:
                say(f"{head}RECOMPILE LIMIT reached — runs eagerly from here on")
            # Torch lists one failure per older cache entry: show the newest few, so a frame
            # recompiled N times prints O(N) lines, not O(N²).
            for i, f in enumerate(e.failures[: 1 + MAX_OLDER_ENTRIES]):
                label = "guard failed" if i == 0 else "also failed"
                entry = f" (entry {f.entry})" if f.entry else ""
                at = f"  at {f.where}" if f.where else ""
                say(f"{head if i == 0 and not e.limit_reached else ' ' * len(head)}{label}{entry}: [{f.kind}] {f.text}{at}")
            hidden = len(e.failures) - 1 - MAX_OLDER_ENTRIES
            if hidden > 0:
                say(f"{' ' * len(head)}… and {hidden} older cache entr{'y' if hidden == 1 else 'ies'} failed too (--json lists every one)")
            if e.suggestion is not None:
                say(f"{' ' * len(head)}→ {e.suggestion.text}")
                for code in (e.suggestion.code or "").splitlines():
                    say(f"{' ' * len(head)}  {code}")
            cs = shapes.get((frame.log, e.compile_id))
            if cs is None:
                continue
            dynamic = [s for s in cs.symbols if not s.specialized]
            if cs.automatic_dynamic and dynamic:
                dims = ", ".join(dict.fromkeys(f"`{s.name}`" for s in dynamic))
                say(f"{' ' * len(head)}then: torch made {dims} dynamic (automatic dynamic) — the next size reuses this graph")
            for spec in cs.specializations:
                say(f"{' ' * len(head)}specialized: {spec.text}")
    return 0
