"""What an idle language server pays to follow a runs folder with many runs.

    python bench/bench_lsp_idle.py [--runs 2000] [--polls 100]

Makes a runs root of ``--runs`` small run folders (and, with ``--unreadable``, makes them
runs no reader can open, as a crash at start-up leaves), then times the CPU of
``RunSource.poll()`` — what the server runs every ``POLL_S`` while nothing happens. Prints
the CPU per poll and the share of one core that is at the server's poll interval. Nothing is
asserted: the figures go in docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from dyn_inspect.lsp.run_source import POLL_S, RunSource


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--polls", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "runs"
        root.mkdir()
        for i in range(args.runs):
            run = root / f"20260101-{i:06d}-aaaaaa"
            run.mkdir()
            (run / "p01.jsonl").write_text("{}\n")  # a run no reader can open
        t = time.time() - 60
        os.utime(root, (t, t))
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        source = RunSource(workspace, roots=[workspace])
        source.configure(str(root), None)
        source.poll()
        start = time.process_time()
        for _ in range(args.polls):
            source.poll()
        per = (time.process_time() - start) / args.polls
    print(
        f"{args.runs} runs: {per * 1000:.2f} ms CPU per poll, {100 * per / (per + POLL_S):.1f} % of one core at a {POLL_S * 1000:.0f} ms poll"
    )


if __name__ == "__main__":
    main()
