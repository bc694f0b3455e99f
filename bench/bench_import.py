"""TORCH_TRACE import vs tlparse on the same log.

    python bench/bench_import.py [LOG] [--rounds 7]

LOG defaults to the 10 MB ResNet-50 training log recorded on an H200 (torch 2.11):
``/work/shared/fixtures/torch_trace/h200_torch211_resnet50_train.log``. Each round runs,
in an order that alternates between rounds:

- ``import``: ``import_trace(LOG, out=tmp)`` + ``Run(tmp)`` (build the model every face
  reads) in this process — the work itself;
- ``import-cli``: ``dyn-inspect import LOG -o tmp --json`` as a subprocess — the same
  plus Python start-up, imports and the summary, what a user waits for;
- ``tlparse``: ``tlparse LOG -o tmp --no-browser --overwrite`` (``pip install tlparse``).

Prints the median of each and the ratios to tlparse (< 1: we are faster).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dyn_inspect.engine.importer import import_trace
from dyn_inspect.inspector.run import Run

DEFAULT_LOG = Path("/work/shared/fixtures/torch_trace/h200_torch211_resnet50_train.log")
DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"


def time_import(log: Path, scratch: Path) -> float:
    out = scratch / f"run-{time.monotonic_ns()}"
    t0 = time.perf_counter()
    result = import_trace(log, out=out)
    run = Run(result.run_dir)
    elapsed = time.perf_counter() - t0
    assert run.model.event_count > 0
    shutil.rmtree(out)
    return elapsed


def time_cli(log: Path, scratch: Path) -> float:
    out = scratch / f"cli-{time.monotonic_ns()}"
    t0 = time.perf_counter()
    subprocess.run([str(DYN_INSPECT), "import", str(log), "-o", str(out), "--json"], check=True, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - t0
    shutil.rmtree(out)
    return elapsed


def time_tlparse(tlparse: str, log: Path, scratch: Path) -> float:
    out = scratch / f"tl-{time.monotonic_ns()}"
    t0 = time.perf_counter()
    subprocess.run(
        [tlparse, str(log), "-o", str(out), "--no-browser", "--overwrite"],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    elapsed = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", nargs="?", type=Path, default=DEFAULT_LOG)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if not args.log.is_file():
        print(f"bench_import: no log at {args.log}", file=sys.stderr)
        return 2
    tlparse = shutil.which("tlparse") or shutil.which("tlparse", path=str(Path(sys.executable).parent))
    if tlparse is None:
        print("bench_import: tlparse not found (pip install tlparse)", file=sys.stderr)
        return 2
    size_mb = args.log.stat().st_size / 1e6
    times: dict[str, list[float]] = {"import": [], "import-cli": [], "tlparse": []}
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        scratch = Path(tmp)
        # Warm the page cache and our imports once; not timed.
        time_import(args.log, scratch)
        time_tlparse(tlparse, args.log, scratch)
        runners = {
            "import": lambda: time_import(args.log, scratch),
            "import-cli": lambda: time_cli(args.log, scratch),
            "tlparse": lambda: time_tlparse(tlparse, args.log, scratch),
        }
        order = list(runners)
        for round_no in range(args.rounds):
            for name in order if round_no % 2 == 0 else reversed(order):
                times[name].append(runners[name]())
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"log: {args.log} ({size_mb:.1f} MB), {args.rounds} rounds, medians:")
    for name, value in med.items():
        spread = f"min {min(times[name]):.3f}s max {max(times[name]):.3f}s"
        print(f"  {name:11} {value:.3f}s  ({spread}, {size_mb / value:.1f} MB/s)")
    print(f"ratio import / tlparse:     {med['import'] / med['tlparse']:.2f}")
    print(f"ratio import-cli / tlparse: {med['import-cli'] / med['tlparse']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
