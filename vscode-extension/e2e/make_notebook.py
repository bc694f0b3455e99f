"""The notebook the real-VS-Code test opens: WORKSPACE/cells.ipynb, executed in place in a
real Jupyter kernel (nbclient + ipykernel, the kernel's working directory WORKSPACE) with
dyn-inspect's IPython extension loaded, so that the cell that calls ``f`` is recorded as a
run under WORKSPACE/.dyn-inspect/runs/ and the executed notebook keeps dyn-inspect's inline
answer under that cell. VS Code (code-server, no Jupyter extension) then shows the saved
outputs and the language server's squiggle on ``f``'s ``if`` line (cell 3) without running
anything.

Usage: PYTHON make_notebook.py WORKSPACE   (PYTHON: an interpreter with dyn-inspect, nbclient
and ipykernel installed). Exits 1 with one line on stderr saying what went wrong.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbclient
import nbformat

NAME = "cells.ipynb"
# The e2e reads these back from the .ipynb (by text): keep `if x.sum() > 0:` on one line of
# the cell that defines f, and the call in a cell of its own (the break is on f's cell).
CELLS = [
    "%load_ext dyn_inspect",
    "%dyn_inspect on",
    """import torch


@torch.compile
def f(x):
    if x.sum() > 0:  # data-dependent branch: graph break
        return x * 2
    return x + 1""",
    "f(torch.ones(4))",
]


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not Path(argv[1]).is_dir():
        print("usage: make_notebook.py WORKSPACE (an existing folder)", file=sys.stderr)
        return 2
    ws = Path(argv[1]).resolve()
    target = ws / NAME
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    os.environ.pop("DYN_INSPECT_RUNS_DIR", None)  # the runs go to the kernel's cwd: WORKSPACE
    os.environ["JPY_SESSION_NAME"] = str(target)  # the run names its notebook, as under Jupyter server
    try:
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ws)}}).execute()
    except Exception as exc:  # noqa: BLE001 - one line for the caller, whatever failed
        first = str(exc).strip().splitlines()
        print(f"make_notebook: executing {target} failed: {type(exc).__name__}: {first[-1] if first else ''}", file=sys.stderr)
        return 1
    nbformat.write(nb, target)
    shown = [o for o in nb.cells[-1].outputs if o.output_type == "display_data" and "dyn-inspect" in o.get("data", {}).get("text/plain", "")]
    if not shown or "graph break at cell [3]" not in shown[0]["data"]["text/plain"]:
        print(f"make_notebook: no dyn-inspect answer with f's graph break under the last cell of {target}", file=sys.stderr)
        return 1
    runs = ws / ".dyn-inspect" / "runs"
    if not any(p.is_dir() and not p.is_symlink() for p in (runs.iterdir() if runs.is_dir() else [])):
        print(f"make_notebook: no run recorded under {runs}", file=sys.stderr)
        return 1
    print(f"make_notebook: {target} executed; {shown[0]['data']['text/plain'].splitlines()[1].strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
