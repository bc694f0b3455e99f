"""``dyn-inspect check [RUN] --max-graph-breaks N --max-recompiles N [--baseline RUN]``: a
CI gate. Exit 0 within limits; 1 with the offending items when a limit is exceeded or a
break/recompile appears that the baseline run did not have; 2 when a run cannot be read.

Graph breaks count unique break sites (what you would fix), recompiles count recompile
events (each one a compile beyond a frame's first, including a recompile-limit hit).
Compile failures (a ``fullgraph=True`` error, a backend exception) fail the check by
default, even when the program caught them: ``--max-failures N`` allows N."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec

from dyn_inspect.cli.common import add_rank_argument, open_cli_run, print_read_warnings
from dyn_inspect.inspector.analysis.breaks import break_sites
from dyn_inspect.inspector.analysis.diff import break_items, compare, recompile_items
from dyn_inspect.inspector.analysis.failures import compile_failures, line_text
from dyn_inspect.inspector.console import make_console
from dyn_inspect.inspector.locations import short_path
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.ranks import divergence_report, format_ranks
from dyn_inspect.inspector.reports import divergence

HELP = "CI gate: exit 1 when graph breaks/recompiles exceed limits or are new vs a baseline run"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?", help="run directory or id (default: latest)")
    parser.add_argument("--runs-dir", metavar="DIR")
    parser.add_argument("--max-graph-breaks", type=int, metavar="N", help="most unique graph-break sites allowed")
    parser.add_argument("--max-recompiles", type=int, metavar="N", help="most recompiles allowed")
    parser.add_argument("--max-causes", type=int, metavar="N", help="most recompile root causes allowed (dyn-inspect causes)")
    parser.add_argument("--baseline", metavar="RUN", help="fail on any break or recompile cause this run did not have")
    parser.add_argument(
        "--max-failures",
        type=int,
        metavar="N",
        default=0,
        help="most failed compiles allowed (default 0: any compile failure fails the check)",
    )
    parser.add_argument(
        "--max-divergences", type=int, metavar="N", help="most rank divergences allowed (distributed runs; always reported)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_rank_argument(parser)


def _break_dict(site: Any) -> typed.CheckBreak:
    return typed.CheckBreak(
        type=site.first.gb_type,
        file=site.loc.file,
        line=site.loc.line,
        count=site.count,
        user_file=site.user_frame.file if site.user_frame else None,
        user_line=site.user_frame.line if site.user_frame else None,
    )


def run(args: argparse.Namespace) -> int:
    r = open_cli_run(args.run, args.runs_dir, args.rank)
    print_read_warnings(r)
    base = open_cli_run(args.baseline, args.runs_dir, args.rank) if args.baseline else None
    if base is not None:
        print_read_warnings(base)
    m = r.model
    sites = break_sites(m)
    recompiles = len(m.recompiles)
    found: list[typed.CheckFailure] = []
    if args.max_graph_breaks is not None and len(sites) > args.max_graph_breaks:
        found.append(typed.MaxGraphBreaks(limit=args.max_graph_breaks, actual=len(sites), items=[_break_dict(s) for s in sites]))
    if args.max_recompiles is not None and recompiles > args.max_recompiles:
        recompile_items_ = [
            typed.CheckRecompile(
                compile_id=x.compile.cid,
                function=x.compile.capture.co_name if x.compile.capture else None,
                file=x.compile.capture.co_filename if x.compile.capture else None,
                reasons=list(x.event.reasons),
            )
            for x in m.recompiles
        ]
        found.append(typed.MaxRecompiles(limit=args.max_recompiles, actual=recompiles, items=recompile_items_))
    if args.max_causes is not None:
        from dyn_inspect.inspector.analysis.causes import recompile_causes

        causes = recompile_causes(m)
        if len(causes) > args.max_causes:
            found.append(
                typed.MaxCauses(
                    limit=args.max_causes,
                    actual=len(causes),
                    items=[
                        typed.CheckCause(title=c.title, recompiles=c.recompile_count, fix=c.fix.code if c.fix else None) for c in causes
                    ],
                )
            )
    compile_fails = compile_failures(m)
    if len(compile_fails) > args.max_failures:
        fail_items = [
            typed.CheckCompileFailure(
                compile_id=f.cid,
                function=f.function,
                type=f.fail_type,
                message=f.headline,
                reason=f.reason,
                file=f.user_loc.file if f.user_loc else None,
                line=f.user_loc.line if f.user_loc else None,
                code=line_text(f.user_loc),
            )
            for f in compile_fails
        ]
        found.append(typed.MaxFailures(limit=args.max_failures, actual=len(compile_fails), items=fail_items))
    if base is not None:
        new_breaks = compare(break_items(base.model), break_items(m)).added
        if new_breaks:
            found.append(
                typed.NewGraphBreaks(
                    baseline=str(base.path),
                    actual=len(new_breaks),
                    items=[
                        typed.CheckNewBreak(type=b.gb_type, file=b.file, line=b.line, function=b.function, count=n) for b, n in new_breaks
                    ],
                )
            )
        new_recompiles = compare(recompile_items(base.model), recompile_items(m)).added
        if new_recompiles:
            found.append(
                typed.NewRecompiles(
                    baseline=str(base.path),
                    actual=len(new_recompiles),
                    items=[
                        typed.CheckNewRecompile(
                            function=x.function, file=x.file, kind=x.kind, source=x.source, dim=x.dim, reason=x.example, count=n
                        )
                        for x, n in new_recompiles
                    ],
                )
            )
    # Ranks that compiled differently are a classic cause of collective hangs: always
    # reported, a failure only with --max-divergences.
    divergences = divergence_report(m) if args.rank is None else []
    if args.max_divergences is not None and len(divergences) > args.max_divergences:
        found.append(typed.MaxDivergences(limit=args.max_divergences, actual=len(divergences), items=[divergence(d) for d in divergences]))
    ok = not found
    if args.json:
        data = typed.CheckReport(
            run=str(r.path),
            baseline=str(base.path) if base else None,
            ok=ok,
            graph_breaks=len(sites),
            recompiles=recompiles,
            compile_failures=len(compile_fails),
            limits=typed.CheckLimits(
                max_graph_breaks=args.max_graph_breaks,
                max_recompiles=args.max_recompiles,
                max_failures=args.max_failures,
                max_causes=args.max_causes,
            ),
            failures=found,
            divergence=[divergence(d) for d in divergences],
        )
        sys.stdout.write(to_json(data) + "\n")
        return 0 if ok else 1
    failures: list[dict[str, Any]] = msgspec.to_builtins(found)
    console = make_console()
    say = lambda s: console.print(s, markup=False, highlight=False)  # noqa: E731
    for d in divergences:
        say(f"note: ranks diverge — {d.message} ({format_ranks(d.ranks)})")
    if ok:
        base_note = f", nothing new vs {base.path.name}" if base else ""
        fails = f", {len(compile_fails)} compile failure(s) allowed" if compile_fails else ""
        say(f"check passed: {len(sites)} graph-break site(s), {recompiles} recompile(s){fails}{base_note}")
        return 0
    for f in failures:
        if f["check"] == "max_graph_breaks":
            say(f"FAIL graph breaks: {f['actual']} unique sites > {f['limit']} allowed")
            for b in f["items"]:
                say(f"  {short_path(b['file'])}:{b['line']}  {b['type']}  ×{b['count']}")
        elif f["check"] == "max_recompiles":
            say(f"FAIL recompiles: {f['actual']} > {f['limit']} allowed")
            for x in f["items"]:
                say(f"  [{x['compile_id']}] {x['function']} ({short_path(x['file'] or '?')}): {x['reasons'][0] if x['reasons'] else '?'}")
        elif f["check"] == "max_causes":
            say(f"FAIL recompile causes: {f['actual']} > {f['limit']} allowed")
            for x in f["items"]:
                say(f"  {x['title']}" + (f"  — fix: {x['fix']}" if x["fix"] else ""))
        elif f["check"] == "new_graph_breaks":
            say(f"FAIL {f['actual']} graph break site(s) not in baseline {short_path(f['baseline'])}")
            for b in f["items"]:
                say(f"  {b['file']}:{b['line']}  {b['type']}  ×{b['count']}")
        elif f["check"] == "max_failures":
            say(f"FAIL compile failures: {f['actual']} > {f['limit']} allowed")
            for x in f["items"]:
                where = f"{short_path(x['file'])}:{x['line']}" if x["file"] else "?"
                say(f"  [{x['compile_id']}] {where}  {x['function']}: {x['type']}: {x['message']}")
        elif f["check"] == "max_divergences":
            say(f"FAIL rank divergences: {f['actual']} > {f['limit']} allowed (listed above)")
        elif f["check"] == "new_recompiles":
            say(f"FAIL {f['actual']} recompile cause(s) not in baseline {short_path(f['baseline'])}")
            for x in f["items"]:
                say(f"  {x['function']} ({x['file']}): {x['reason']}")
    return 1
