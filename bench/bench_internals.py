"""The compile-internals analyses on a large synthetic run (``bench/synthetic.py``): prints
figures, asserts nothing.

    python bench/bench_internals.py [--events 100000] [--out DIR]

Times, on the opened run: ``timeline_entries`` (what the Timeline view's table is built
from, on every change of a live run while it is shown), ``compile_breakdowns`` (one pass
over the logs for every compile's nested spans: the Timeline pane, once per change),
``compile_shapes`` (the Shapes view and the LSP index), ``cache_report`` (the overview's
warm-cache story and ``dyn-inspect cache``: it reads each lookup's payload) and
``compile_code`` for every compile (the Code pane, one compile per selection). Figures on
the 2-core development machine, 100k events / 1119 compiles: timeline_entries 17 ms,
compile_breakdowns 3.7 s (the Timeline pane re-reads only for a compile unfinished at the
last read), compile_shapes 17 ms, cache_report 1.6 s cold and ~1 ms from the overview's
memo, compile_code 6.8 ms per compile.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import make_run  # noqa: E402

from dyn_inspect.inspector.analysis.bytecode import compile_code  # noqa: E402
from dyn_inspect.inspector.analysis.cache import cache_report  # noqa: E402
from dyn_inspect.inspector.analysis.shapes import compile_shapes  # noqa: E402
from dyn_inspect.inspector.analysis.timeline import compile_breakdowns, timeline_entries  # noqa: E402
from dyn_inspect.inspector.run import Run  # noqa: E402


def timed(label: str, fn, repeat: int = 3) -> None:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    print(f"  {label:<34} {best * 1000:9.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-internals-"))
    run_dir = make_run(out, args.events)
    run = Run(run_dir)
    compiles = run.model.compiles_in_order()
    print(f"run: {args.events} events, {len(compiles)} compiles — {run_dir}")
    timed("timeline_entries", lambda: timeline_entries(run))
    timed("compile_breakdowns (all compiles)", lambda: compile_breakdowns(run), repeat=1)
    timed("compile_shapes", lambda: compile_shapes(run.model))
    timed("cache_report", lambda: cache_report(run), repeat=1)
    memo: dict = {}
    cache_report(run, memo)
    timed("cache_report again (memo: overview)", lambda: cache_report(run, memo))
    timed("compile_code (every compile)", lambda: [compile_code(run, c) for c in compiles], repeat=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
