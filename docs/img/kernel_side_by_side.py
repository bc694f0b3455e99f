"""Regenerate docs/img/kernel-side-by-side.svg (docs/kernels.md) from a real CLI run.

    python docs/img/kernel_side_by_side.py RUN

RUN: ``h200_kernels`` of tests/fixtures/h200_kernel_runs.tar.gz (recorded on an H200). The
picture is the text of ``dyn-inspect kernel triton_red_fused_sum_0 RUN --stage ttgir
--side-by-side``: its header and the rows from the kernel's load to its store.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

KERNEL = "triton_red_fused_sum_0"


def main() -> None:
    run = sys.argv[1]
    cmd = [sys.executable, "-m", "dyn_inspect.cli", "kernel", KERNEL, run, "--stage", "ttgir", "--side-by-side"]
    lines = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "tl.load(in_ptr0" in line)
    end = next(i for i, line in enumerate(lines) if "tl.store(out_ptr0" in line)
    shown = [*lines[:2], "…", *lines[start - 1 : end + 3]]
    console = Console(record=True, width=max(map(len, shown)) + 2, file=io.StringIO())
    for line in shown:
        console.print(Text(line))
    out = Path(__file__).resolve().parent / "kernel-side-by-side.svg"
    console.save_svg(str(out), title=f"dyn-inspect kernel {KERNEL} --stage ttgir --side-by-side")
    print(out)


if __name__ == "__main__":
    main()
