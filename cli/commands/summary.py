"""``dyn-inspect summary [RUN]``: the run at a glance (also printed after a --no-tui run)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import IO, Any

import msgspec
from rich.text import Text

from dyn_inspect.cli.common import add_run_arguments, print_ddp_splits, skipped_lines
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.locations import file_line, short_path
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.outputs.reports import DdpSplitSite, RecompiledFunctions
from dyn_inspect.inspector.ranks import format_ranks, select_rank
from dyn_inspect.inspector.reports import summary, summary_dict
from dyn_inspect.inspector.reports.recompiles import TOP_RECOMPILED, recompiled_functions
from dyn_inspect.inspector.run import Run, open_run
from dyn_inspect.inspector.units import time_text

HELP = "summarize a run: frames, graph breaks, recompiles, kernels, compile time, rank divergence"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, json=True, rank=True)
    parser.add_argument("--all", action="store_true", help="list every recompile and compile failure (by default: the top few)")


TOP_FAILURE_SITES = TOP_RECOMPILED  # failure sites the text summary lists without --all


def print_recompiles(r: RecompiledFunctions, say: Callable[[str], None], show_all: bool, ranked: bool = False) -> None:
    """The inspector's recompile section (``recompiled_functions``) as text; ``ranked``: a
    multi-rank run, whose rows say their ranks."""
    n = r.functions
    say(f"  recompiles: {r.recompiles}" + (f" in {n} function{'s' if n != 1 else ''}" if n else ""))
    for cause in r.causes:
        say(f"    root cause: {cause.title}")
        say(f"      fix: {cause.fix} — `dyn-inspect causes`")
    if r.more_causes:
        say(f"    … and {r.more_causes} more root causes — `dyn-inspect causes`")
    for f in r.shown:
        where = file_line(f.file, f.def_line)
        limit = ", recompile limit hit — runs eagerly from then on" if f.limit_hit else ""
        on = f"  ({format_ranks(f.ranks)})" if ranked and f.ranks else ""
        if show_all:
            say(f"    {f.function} ({where}): {f.compiles} compiles{limit}{on}")
            for step in f.steps:
                say(f"      [{step.compile_id}] {step.reason}")
                if step.try_code:
                    say(f"        try: {step.try_code}")
            continue
        reason = f" — {f.reason}" if f.reason is not None else ""
        more = f" (+{f.other_guards} other guard{'s' if f.other_guards > 1 else ''})" if f.other_guards else ""
        say(f"    {f.function} ({where}): {f.compiles} compiles{limit}{reason}{more}{on}")
        # The snippet only; `recompiles` explains it.
        if f.explained:
            say("      (the root cause above)")
        elif f.try_code:
            say(f"      try: {f.try_code}")
    if r.hidden:
        say(
            f"    … and {r.hidden} more function{'s' if r.hidden != 1 else ''} ({r.hidden_recompiles} recompiles) — `dyn-inspect recompiles` or `summary --all`"
        )


TOP_RANK_GROUPS = 8  # behaviours listed without --all (a run whose every rank differs has as many as ranks)


def print_rank_groups(data: dict[str, Any], say: Callable[[str], None], show_all: bool) -> None:
    """Ranks grouped by behaviour ("ranks 0-62: identical; rank 63: extra graph break …"),
    not one line per pairwise difference; a compile-time spread after them."""
    groups = data["rank_groups"]
    slow = [d for d in data["divergence"] if d["kind"] == "compile_time"]
    ranks = format_ranks(data["ranks"]).removeprefix("ranks ")
    if len(groups) <= 1:
        say(f"  ranks: {ranks} — all compiled the same")
    else:
        say(f"  ranks: {ranks} — {len(groups)} behaviours")
        shown = groups if show_all else groups[:TOP_RANK_GROUPS]
        for g in shown:
            say(f"    {'' if g['reference'] else '! '}{g['text']}")
        if len(groups) > len(shown):
            rest = groups[len(shown) :]
            say(f"    … and {len(rest)} more behaviours ({sum(len(g['ranks']) for g in rest)} ranks) — `summary --all`")
    for d in slow:
        say(f"    ! {d['message']}")


def print_summary(run: Run, as_json: bool = False, file: IO[str] | None = None, show_all: bool = False) -> None:
    out = file or sys.stdout
    if as_json:
        out.write(to_json(summary(run)) + "\n")
        return
    data = summary_dict(run)
    console = make_console(out)
    if data["no_graph"]:
        # Said first: the counts below would read like any other run's (9 compiles, 0 graphs).
        console.print(Text.assemble(("dyn-inspect", "bold"), ": ", data["no_graph"]))
    gb = data["graph_breaks"]
    stages = ", ".join(f"{k} {v:.2f}s" for k, v in data["compile_time_by_stage_s"].items())
    exit_text = f"exit {data['exit_code']}" if data["exit_code"] is not None else "no exit status"
    # sys.exit(3) is the program's own answer, not a crash: "exited with 3".
    outcome = f"exited with {data['exit_code']}" if data["status"] == "exited" else f"{data['status']} ({exit_text})"
    console.print(Text.assemble(("dyn-inspect", "bold"), f": {outcome} — log: {short_path(data['run'])}"))
    if data["compile_disabled"]:
        console.print("  compile disabled (--disable-compile): the program ran eagerly")
    for note in data.get("degraded", []):
        console.print(f"  degraded: {note}", markup=False, highlight=False)
    hits = len(data["recompile_limit_hit"])
    # a call the recompile limit refused ran eagerly: a limit hit, not a compile
    refused = f", {hits} recompile limit hit{'s' if hits != 1 else ''}" if hits else ""
    console.print(
        f"  compiled frames: {data['frames']} ({data['compiles']} compiles, {data['graphs']} graphs{refused}), "
        f"kernels: {data['kernels']}, compile time: {data['compile_time_s']:.2f}s" + (f" ({stages})" if stages else "")
    )
    say = lambda text: console.print(text, markup=False, highlight=False)  # noqa: E731 - log text is not markup
    if data.get("step_us") is not None:
        plain = f", {time_text(data['plain_step_us'])} without the profiler" if data.get("plain_step_us") is not None else ""
        say(f"  step (profiled): {time_text(data['step_us'])}{plain} — where it goes: `dyn-inspect cost`")
    say(f"  graph breaks: {gb['unique']} unique / {gb['total']} total")
    for b in data["breaks"]:
        # The user's line first; torch's own location (inside a library) after it.
        user, loc = b["user_loc"], b["loc"]
        gbid = f" {b['gb_id']}" if b["gb_id"] else ""
        on = f"  ({format_ranks(b['ranks'])})" if len(data["ranks"]) > 1 else ""
        inside = f"  (in {file_line(loc['file'], loc['line'])})" if (user["file"], user["line"]) != (loc["file"], loc["line"]) else ""
        say(f"    {file_line(user['file'], user['line'])}  {b.get('headline') or b['type']}{gbid}  ×{b['count']}{inside}{on}")
        if b.get("step_cost"):
            say(f"      at run time: {b['step_cost']}")
    print_ddp_splits([msgspec.convert(d, DdpSplitSite) for d in data["ddp_splits"]], say, len(data["ranks"]) > 1)
    failures = data["compile_failures"]
    # A failed compile (fullgraph=True, a backend exception) is in no other count.
    say(f"  compile failures: {sum(f['count'] for f in failures)}")
    for f in failures if show_all else failures[:TOP_FAILURE_SITES]:
        user = f["user_loc"]
        where = file_line(user["file"], user["line"]) if user else "?"
        times = f"  ×{f['count']}" if f["count"] > 1 else ""
        say(f"    {where}  {f['function']}: {f['type']}: {f['headline']}{times}")
        if user and user.get("code") and not f["at_def"]:
            say(f"      {user['code']}")
    if not show_all and len(failures) > TOP_FAILURE_SITES:
        rest = failures[TOP_FAILURE_SITES:]
        say(f"    … and {len(rest)} more failure sites ({sum(f['count'] for f in rest)} failed compiles) — `summary --all`")
    print_recompiles(recompiled_functions(run.model, show_all), say, show_all, len(data["ranks"]) > 1)
    for n in data.get("nodes", []):
        hosts = f" ({', '.join(n['hosts'])})" if n["hosts"] else ""
        say(f"  node {n['node']}{hosts}: {format_ranks(n['ranks'])} — {n['status']}")
    if len(data["ranks"]) > 1:
        print_rank_groups(data, say, show_all)
    for line in skipped_lines(data["problems"]):
        console.print(line, markup=False, highlight=False)


def run(args: argparse.Namespace) -> int:
    run = open_run(args.run, args.runs_dir)
    print_summary(select_rank(run, getattr(args, "rank", None)), as_json=args.json, show_all=args.all)
    return 0
