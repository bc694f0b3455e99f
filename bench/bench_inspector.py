"""Inspector benchmark: open + model build, incremental refresh, memory, analyses, CLI.

    python bench/bench_inspector.py [RUN_OR_RUNS_DIR] [--events 100000] [--repeat 5]

Without a run, a synthetic one (``bench/synthetic.py``) of ``--events`` events is written
to a temporary directory first. Prints figures; asserts nothing (targets: open + build
< 0.5 s for 100k events; refresh cost proportional to the new events only; memory that
does not grow with payload sizes, which stay on disk).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import make_run  # noqa: E402

from dyn_inspect.inspector.run import Run, resolve_run  # noqa: E402

_MEMORY_PROBE = r"""
import json, sys, time, psutil
proc = psutil.Process()
import dyn_inspect.inspector.run as r
before = proc.memory_info().rss
t = time.perf_counter()
run = r.Run(sys.argv[1])
build = time.perf_counter() - t
after = proc.memory_info().rss
# VmHWM: this process's peak RSS (ru_maxrss would report the forking parent's after exec).
peak = next((int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:")), 0)
print(json.dumps({"rss_before": before, "rss_after": after, "peak": peak, "build_s": build, "events": run.model.event_count}))
"""


def _timed(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def _fmt(times: list[float]) -> str:
    return f"min {min(times) * 1000:.0f} ms, median {statistics.median(times) * 1000:.0f} ms (n={len(times)})"


def bench_open(run_dir: Path, repeat: int) -> Run:
    times = _timed(lambda: Run(run_dir), repeat)
    run = Run(run_dir)
    logs = sum(p.stat().st_size for p in run_dir.glob("*.jsonl"))
    print(f"open + build model: {_fmt(times)}  [{run.model.event_count} events, logs {logs / 1e6:.1f} MB]  target < 500 ms")
    return run


def bench_refresh(run_dir: Path, tmp: Path) -> None:
    """Replay the run's process log into a growing copy; time refresh() per batch."""
    live = tmp / "live"
    shutil.rmtree(live, ignore_errors=True)
    live.mkdir()
    (live / "blobs").symlink_to(run_dir / "blobs")
    logs = sorted(run_dir.glob("p*.jsonl"))
    lines = logs[0].read_bytes().splitlines(keepends=True)
    target = live / logs[0].name
    start = len(lines) // 2
    target.write_bytes(b"".join(lines[:start]))
    run = Run(live)
    print(f"refresh, following a live run already holding {run.model.event_count} events:")
    t = time.perf_counter()
    run.refresh()
    print(f"  no new events: {(time.perf_counter() - t) * 1e6:.0f} µs")
    pos = start
    for batch in (10, 100, 1000, 10000):
        chunk = b"".join(lines[pos : pos + batch])
        pos += batch
        with open(target, "ab") as f:
            f.write(chunk)
        t = time.perf_counter()
        n = run.refresh()
        dt = time.perf_counter() - t
        print(f"  +{n:>5} events ({len(chunk) / 1e3:8.1f} kB): {dt * 1000:7.2f} ms  ({dt / max(n, 1) * 1e6:.1f} µs/event)")
    # The same tail appended to a log twice as long costs the same: only new bytes are read.
    with open(target, "ab") as f:
        f.write(b"".join(lines[pos:]))
    run.refresh()
    print(f"  (log now {run.model.event_count} events)")


def bench_memory(run_dir: Path) -> None:
    try:
        import psutil  # noqa: F401
    except ImportError:
        print("memory: psutil not installed (pip install psutil)")
        return
    out = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(run_dir)], capture_output=True, text=True, check=True)
    m = json.loads(out.stdout)
    logs = sum(p.stat().st_size for p in run_dir.glob("*.jsonl"))
    blobs = sum(p.stat().st_size for p in (run_dir / "blobs").rglob("*") if p.is_file())
    print(
        f"memory (fresh process): model adds {(m['rss_after'] - m['rss_before']) / 1e6:.0f} MB RSS, peak RSS {m['peak'] / 1e6:.0f} MB "
        f"(logs {logs / 1e6:.0f} MB, blobs {blobs / 1e6:.0f} MB on disk, not loaded); cold-process build {m['build_s'] * 1000:.0f} ms"
    )


def bench_analyses(run: Run, repeat: int) -> None:
    from dyn_inspect.inspector.analysis.breaks import break_sites
    from dyn_inspect.inspector.analysis.diff import diff_runs
    from dyn_inspect.inspector.analysis.graphs import compile_graph, op_histogram
    from dyn_inspect.inspector.analysis.guards import guard_diff
    from dyn_inspect.inspector.analysis.kernels import kernels_by_line, vectorization
    from dyn_inspect.inspector.analysis.recompiles import frames_with_recompiles, recompile_timeline

    m = run.model
    frames = frames_with_recompiles(m)
    print("analyses on this run:")
    print(f"  break_sites ({len(m.breaks)} sites): {_fmt(_timed(lambda: break_sites(m), repeat))}")
    print(f"  recompile timelines ({len(frames)} frames): {_fmt(_timed(lambda: [recompile_timeline(m, f) for f in frames], repeat))}")
    print(
        f"  vectorization + kernels_by_line ({len(m.kernels)} kernels): {_fmt(_timed(lambda: (vectorization(m), kernels_by_line(m)), repeat))}"
    )
    print(f"  diff_runs(run, run): {_fmt(_timed(lambda: diff_runs(m, m), repeat))}")
    c = next((f.compiles for f in frames if len(f.compiles) > 1), None)
    if c:
        print(f"  guard_diff (one pair): {_fmt(_timed(lambda: guard_diff(run, c[0], c[1]), repeat))}")
        print(f"  graph parse + histogram (one graph): {_fmt(_timed(lambda: op_histogram(compile_graph(run, c[0], 'dynamo')), repeat))}")


def bench_cli(run_dir: Path) -> None:
    print("CLI wall time (a fresh process each: imports + open + answer):")
    for cmd in (
        ["summary", "--json"],
        ["breaks", "--json"],
        ["recompiles", "--json"],
        ["kernels", "--json"],
        ["check", "--max-graph-breaks", "100"],
    ):
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "dyn_inspect.cli", cmd[0], str(run_dir), *cmd[1:]], capture_output=True, text=True)
        print(f"  dyn-inspect {' '.join(cmd)}: {(time.perf_counter() - t) * 1000:.0f} ms (exit {p.returncode})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", nargs="?", help="an existing run (default: generate a synthetic one)")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dyn-inspect-bench-") as tmp_name:
        tmp = Path(tmp_name)
        if args.run:
            run_dir = resolve_run(args.run)
        else:
            t = time.perf_counter()
            run_dir = make_run(tmp / "runs", args.events)
            print(f"synthetic run: {run_dir} ({time.perf_counter() - t:.1f}s to write)")
        run = bench_open(run_dir, args.repeat)
        bench_refresh(run_dir, tmp)
        bench_memory(run_dir)
        bench_analyses(run, args.repeat)
        bench_cli(run_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
