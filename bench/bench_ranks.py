"""Many ranks and many nodes: prints figures, asserts nothing.

    python bench/bench_ranks.py [--events 260000] [--ranks 256] [--repeat 5] [--out DIR]

On synthetic runs (``bench/synthetic.py``) of ``--ranks`` ranks and ``--events`` events in
all, two shapes: *spmd* (every rank the same program but the last, which hits one extra
graph break — a real data-parallel job) and *distinct* (every rank draws its own program:
the worst case for grouping, one behaviour per rank). Per shape:

- open: ``Run(path)`` (read and build the model), and RSS after it;
- ``summary`` on the open run: ``summary_dict`` (which runs the divergence report and the
  behaviour groups) and the text rendering, medians; and its parts alone;
- the TUI ranks view: from the key's action (shift+r: mounted and synced) to a filled 256-row table (Textual pilot), and
  the view's ``sync`` alone, medians;
- ``dyn-inspect summary RUN`` in a fresh process (interpreter start and open included);

and the merge: the spmd job written as two nodes' runs (half the ranks each, global ranks),
merged with ``merge_runs`` — seconds, events/s, and the merged run's ``summary_dict``.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psutil  # noqa: E402
from synthetic import make_run  # noqa: E402

from dyn_inspect.cli.commands.summary import print_summary  # noqa: E402
from dyn_inspect.inspector.merge import merge_runs  # noqa: E402
from dyn_inspect.inspector.ranks import divergence_report, rank_behaviours, rank_profiles  # noqa: E402
from dyn_inspect.inspector.reports import summary_dict  # noqa: E402
from dyn_inspect.inspector.run import Run  # noqa: E402

DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


def median_s(fn, repeat: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), max(times)


def fmt(t: tuple[float, float]) -> str:
    return f"{t[0] * 1000:.0f} ms (max {t[1] * 1000:.0f})"


async def ranks_view(run: Run, repeat: int) -> tuple[float, tuple[float, float]]:
    from textual.widgets import DataTable

    from dyn_inspect.tui.app import InspectorApp
    from dyn_inspect.tui.views.base import Context

    app = InspectorApp(run.path, run=run, clock=lambda: 0.0, cursor_blink=False)
    async with app.run_test(size=(160, 45)) as pilot:
        while app.synced_events != run.model.event_count:
            await pilot.pause(0.05)
        t = time.perf_counter()
        # What the key (shift+r) runs: the view mounted (when first shown) and synced. Not
        # pilot.press, which returns only when its wait for the whole screen to be idle
        # times out (2 s here, whichever view is shown).
        await app.run_action("show('ranks')")
        while not app.query("#ranks-table") or app.query_one("#ranks-table", DataTable).row_count < len(run.model.ranks()):
            await pilot.pause(0.005)
        await pilot.pause(0)
        key_to_table = time.perf_counter() - t
        view = app.view("ranks")

        def sync() -> None:
            view._events = -1  # type: ignore[attr-defined]  # force the recomputation a new event causes
            view.sync(Context(run, cwd=None))

        return key_to_table, median_s(sync, repeat)


def bench_shape(name: str, run_dir: Path, repeat: int) -> None:
    base = rss_mb()
    t = time.perf_counter()
    run = Run(run_dir)
    opened = time.perf_counter() - t
    after_open = rss_mb()
    events = run.model.event_count
    size = sum(f.stat().st_size for f in run_dir.glob("*.jsonl")) / 1e6
    print(f"[{name}] {len(run.model.ranks())} ranks, {events} events, {size:.0f} MB of logs")
    print(f"  open + build model: {opened:.2f} s; RSS {after_open:.0f} MiB (model +{after_open - base:.0f} MiB)")
    # That open wrote the run's index (the run is over): what every later open reads.
    t = time.perf_counter()
    again = Run(run_dir)
    print(f"  open from the index: {time.perf_counter() - t:.2f} s ({'read' if again.from_index else 'NOT USED'})")
    del again
    print(f"  summary_dict: {fmt(median_s(lambda: summary_dict(run), repeat))}")
    print(f"  summary text: {fmt(median_s(lambda: print_summary(run, file=io.StringIO()), repeat))}")
    profiles = rank_profiles(run.model)
    print(
        f"    rank_profiles {fmt(median_s(lambda: rank_profiles(run.model), repeat))}, "
        f"divergence_report {fmt(median_s(lambda: divergence_report(run.model, profiles), repeat))}, "
        f"rank_behaviours {fmt(median_s(lambda: rank_behaviours(run.model, profiles), repeat))} "
        f"({len(rank_behaviours(run.model, profiles))} behaviours)"
    )
    key, sync = asyncio.run(ranks_view(run, repeat))
    print(f"  TUI ranks view: key → {len(run.model.ranks())}-row table {key * 1000:.0f} ms; sync alone {fmt(sync)}; RSS {rss_mb():.0f} MiB")
    times = []
    for _ in range(max(1, repeat // 2)):
        t = time.perf_counter()
        subprocess.run([str(DYN_INSPECT), "summary", str(run_dir)], capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    print(f"  `dyn-inspect summary` fresh process (from the index): {statistics.median(times):.2f} s median of {len(times)}")


def bench_merge(out: Path, events: int, ranks: int, repeat: int) -> None:
    half = ranks // 2
    nodes = []
    for n in range(2):
        # One runs root for both: the same workspace (source paths), as two nodes of one checkout.
        nodes.append(make_run(out / "nodes", events // 2, seed=0, processes=half, spmd=True, first_rank=n * half, world_size=ranks))
    times = []
    result = None
    for i in range(repeat):
        target = out / f"merged-{i}"
        t = time.perf_counter()
        result = merge_runs(nodes, out=target)
        times.append(time.perf_counter() - t)
        if i:
            shutil.rmtree(target)
    assert result is not None
    med = statistics.median(times)
    print(
        f"[merge] 2 nodes × {half} ranks, {result.events} events: {med:.2f} s median of {repeat} (max {max(times):.2f}), "
        f"{result.events / med / 1000:.0f}k events/s, {result.blobs} blobs linked"
    )
    merged = Run(out / "merged-0")
    t = time.perf_counter()
    data = summary_dict(merged)
    print(
        f"  merged run: ranks {data['ranks'][0]}-{data['ranks'][-1]}, {len(data['nodes'])} nodes, "
        f"{len(data['rank_groups'])} behaviours; summary_dict {time.perf_counter() - t:.2f} s"
    )
    for g in data["rank_groups"]:
        print(f"    {g['text']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=260_000)
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, help="keep the synthetic runs here (default: a temporary directory)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="dyn-inspect-bench-ranks-"))
    try:
        for name, spmd in (("spmd", True), ("distinct", False)):
            run_dir = make_run(out / name, args.events, seed=0, processes=args.ranks, spmd=spmd)
            bench_shape(name, run_dir, args.repeat)
        bench_merge(out / "merge", args.events, args.ranks, args.repeat)
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
