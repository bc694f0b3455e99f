"""Recording overhead: the same workload run plainly and under ``dyn-inspect``, side by side.

    python bench/bench_overhead.py                      # CPU: mlp + convnet, 5 rounds
    python bench/bench_overhead.py --device cuda --workloads gpt2,resnet50 --runs 3

Each round runs every mode once, in an order rotated per round, each with fresh Inductor
and Triton caches (so every run compiles from scratch). Modes:

- ``plain``: ``python workload.py``;
- ``dyn-inspect``: ``dyn-inspect --no-tui workload.py`` (provenance tracking on, the default);
- ``no-provenance``: the same with ``--no-provenance`` (what provenance tracking costs);
- ``torch-trace``: ``TORCH_TRACE=dir python workload.py`` (torch's own structured trace).

Each workload times itself (``bench/workloads/_timing.py``) and prints one ``BENCH`` line:
compile + first step (s) and the median steady-state step (ms). Reported per mode: the
median over rounds and the median of the per-round ratios to ``plain`` (paired, so a
machine that drifts between rounds cancels out). Targets: compile overhead ≤ 1.5 %,
steady-state ratio (plain / mode) ≥ 0.995. Also reported for recorded runs: torch's own
``structured_logging_overhead_s`` summed over compiles, against the compile time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ROOT / "bench" / "workloads"
MODES = ("plain", "dyn-inspect", "no-provenance", "torch-trace")


@dataclass
class Sample:
    workload: str
    mode: str
    round: int
    compile_first_step_s: float
    steady_step_ms: float
    wall_s: float
    logging_overhead_s: float | None = None
    compile_time_s: float | None = None


@dataclass
class Summary:
    workload: str
    mode: str
    runs: int
    compile_first_step_s: float
    steady_step_ms: float
    wall_s: float
    compile_overhead_pct: float | None = None  # median of paired (mode/plain - 1)
    steady_ratio: float | None = None  # median of paired plain/mode: ≥ 0.995 is the target
    logging_overhead_pct: float | None = None  # torch's structured_logging_overhead_s / compile time
    samples: list[float] = field(default_factory=list)


THREADS: int | None = None  # --threads: OMP_NUM_THREADS for every run


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DYN_INSPECT_", "TORCH_TRACE", "TORCH_LOGS"))}
    if THREADS:
        env["OMP_NUM_THREADS"] = str(THREADS)
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache / "inductor")
    env["TRITON_CACHE_DIR"] = str(cache / "triton")
    env["DYN_INSPECT_NO_TUI"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _command(mode: str, script: Path, args: list[str], scratch: Path) -> tuple[list[str], dict[str, str]]:
    env = _env(scratch)
    py = [sys.executable]
    if mode == "plain":
        return [*py, str(script), *args], env
    if mode == "torch-trace":
        env["TORCH_TRACE"] = str(scratch / "trace")
        return [*py, str(script), *args], env
    cli = [*py, "-m", "dyn_inspect.cli", "run", "--no-tui", "--runs-dir", str(scratch / "runs")]
    if mode == "no-provenance":
        cli.append("--no-provenance")
    return [*cli, str(script), *args], env


def _logging_overhead(runs_dir: Path) -> tuple[float | None, float | None]:
    """torch's structured_logging_overhead_s and compile time, summed over a run's compiles."""
    try:
        from dyn_inspect.inspector.run import open_run

        run = open_run(str(runs_dir))
    except Exception:  # noqa: BLE001 - the figure is optional
        return None, None
    # torch's counter is cumulative per compile id: the backward's report includes the
    # forward's, so take the largest report per compile, not the sum.
    per_compile: dict[tuple[str, str], float] = {}
    for c in run.model.compiles_in_order():
        for source in (c.capture, c.backward):
            if source is None or source.metrics is None:
                continue
            try:
                metrics = json.loads(run.blob_text(source.metrics))
            except ValueError:
                continue
            value = float(metrics.get("structured_logging_overhead_s") or 0.0)
            per_compile[(c.log, c.cid)] = max(per_compile.get((c.log, c.cid), 0.0), value)
    return sum(per_compile.values()), run.model.total_compile_time()


def run_once(workload: str, mode: str, args: list[str], round_no: int, keep: Path | None) -> Sample:
    script = WORKLOADS / f"{workload}.py"
    scratch = Path(tempfile.mkdtemp(prefix=f"bench-{workload}-{mode}-"))
    try:
        cmd, env = _command(mode, script, args, scratch)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=1800)
        wall = time.perf_counter() - t0
        line = next((l for l in proc.stdout.splitlines() if l.startswith("BENCH ")), None)
        if proc.returncode != 0 or line is None:
            raise RuntimeError(f"{workload}/{mode} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        data = json.loads(line[len("BENCH ") :])
        overhead = compile_time = None
        if mode in ("dyn-inspect", "no-provenance"):
            overhead, compile_time = _logging_overhead(scratch / "runs")
            if keep is not None:
                shutil.copytree(scratch / "runs", keep / f"{workload}-{mode}-{round_no}", symlinks=True)
        return Sample(
            workload,
            mode,
            round_no,
            float(data["compile_first_step_s"]),
            float(data["steady_step_ms"]),
            round(wall, 3),
            overhead,
            compile_time,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def summarize(samples: list[Sample], modes: list[str]) -> list[Summary]:
    out: list[Summary] = []
    for workload in dict.fromkeys(s.workload for s in samples):
        mine = [s for s in samples if s.workload == workload]
        plain = {s.round: s for s in mine if s.mode == "plain"}
        for mode in modes:
            ss = [s for s in mine if s.mode == mode]
            if not ss:
                continue
            summary = Summary(
                workload,
                mode,
                len(ss),
                round(statistics.median(s.compile_first_step_s for s in ss), 4),
                round(statistics.median(s.steady_step_ms for s in ss), 4),
                round(statistics.median(s.wall_s for s in ss), 3),
                samples=[s.compile_first_step_s for s in ss],
            )
            paired = [(s, plain[s.round]) for s in ss if s.round in plain]
            if mode != "plain" and paired:
                summary.compile_overhead_pct = round(
                    statistics.median((s.compile_first_step_s / p.compile_first_step_s - 1) * 100 for s, p in paired), 2
                )
                summary.steady_ratio = round(statistics.median(p.steady_step_ms / s.steady_step_ms for s, p in paired), 4)
            logged = [s for s in ss if s.logging_overhead_s is not None and s.compile_time_s]
            if logged:
                summary.logging_overhead_pct = round(statistics.median(s.logging_overhead_s / s.compile_time_s * 100 for s in logged), 2)  # type: ignore[operator]
            out.append(summary)
    return out


def _print_table(summaries: list[Summary]) -> None:
    print(
        f"{'workload':10} {'mode':14} {'n':>2} {'compile+1st s':>13} {'overhead':>9} {'steady ms':>10} {'ratio':>7} {'log ovh':>8} {'wall s':>8}"
    )
    for s in summaries:
        ovh = f"{s.compile_overhead_pct:+.2f}%" if s.compile_overhead_pct is not None else "—"
        ratio = f"{s.steady_ratio:.4f}" if s.steady_ratio is not None else "—"
        log = f"{s.logging_overhead_pct:.2f}%" if s.logging_overhead_pct is not None else "—"
        print(
            f"{s.workload:10} {s.mode:14} {s.runs:>2} {s.compile_first_step_s:>13.3f} {ovh:>9} {s.steady_step_ms:>10.3f} {ratio:>7} {log:>8} {s.wall_s:>8.2f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--workloads", help="comma-separated (default: mlp,convnet on CPU; gpt2,resnet50 on CUDA)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--runs", type=int, default=5, help="rounds (each runs every mode once)")
    parser.add_argument("--steps", type=int, default=20, help="timed steady-state steps per run")
    parser.add_argument(
        "--threads",
        type=int,
        help="OMP_NUM_THREADS per run (default on CPU: 1, so that a "
        "shared machine's other load does not turn steady-state steps into OpenMP stalls)",
    )
    parser.add_argument("--budget-s", type=float, default=0, help="start no round that would end past this many seconds")
    parser.add_argument("--json", metavar="PATH", help="write samples and summaries as JSON")
    parser.add_argument("--keep-runs", metavar="DIR", help="copy the recorded run directories here")
    args = parser.parse_args()
    cuda = args.device.startswith("cuda")
    global THREADS
    THREADS = args.threads if args.threads is not None else (None if cuda else 1)
    workloads = (args.workloads or ("gpt2,resnet50" if cuda else "mlp,convnet")).split(",")
    modes = [m for m in args.modes.split(",") if m]
    if "plain" not in modes:
        modes.insert(0, "plain")
    keep = Path(args.keep_runs) if args.keep_runs else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    samples: list[Sample] = []
    for workload in workloads:
        wargs = ["--device", args.device, "--steps", str(args.steps)]
        workload_start = time.perf_counter()
        for r in range(args.runs):
            elapsed = time.perf_counter() - started
            per_round = (time.perf_counter() - workload_start) / r if r else 0.0
            if args.budget_s and r >= 1 and elapsed + per_round > args.budget_s:
                print(f"# {workload}: time budget reached after {r} rounds", file=sys.stderr)
                break
            order = modes[r % len(modes) :] + modes[: r % len(modes)]
            for mode in order:
                s = run_once(workload, mode, wargs, r, keep)
                samples.append(s)
                print(
                    f"# {workload} round {r} {mode}: compile+1st {s.compile_first_step_s:.3f}s "
                    f"steady {s.steady_step_ms:.3f}ms wall {s.wall_s:.1f}s",
                    file=sys.stderr,
                    flush=True,
                )
    summaries = summarize(samples, modes)
    import torch

    print(
        f"# {time.strftime('%Y-%m-%d')} {platform.node()} {platform.processor() or platform.machine()} "
        f"torch {torch.__version__} python {platform.python_version()} device {args.device}"
    )
    _print_table(summaries)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "date": time.strftime("%Y-%m-%d %H:%M"),
                    "torch": torch.__version__,
                    "device": args.device,
                    "samples": [asdict(s) for s in samples],
                    "summaries": [asdict(s) for s in summaries],
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
