"""The rows of ``dynInspect.listRuns``, and the stamp that says a run's logs changed.

``ListingCache`` answers one ``LspRunInfo`` per run (``inspector.reports.runs.run_info``),
reading a run again only when ``log_sizes`` changed (a run still recording grows its logs);
the run shown is answered from its model, already read. ``RunSource`` uses ``log_sizes``
too, to look at a run not shown again only when it grew.
"""

from __future__ import annotations

import os
from pathlib import Path

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.index import NOT_FOR_FINDINGS
from dyn_inspect.inspector.outputs.lsp import LspRunInfo
from dyn_inspect.inspector.reports.runs import run_info
from dyn_inspect.inspector.run import Run


def log_sizes(path: Path) -> tuple[tuple[str, int], ...]:
    """(name, size) of each ``.jsonl`` log of the run at ``path``; () when unreadable."""
    try:
        names = sorted(n for n in os.listdir(path) if n.endswith(".jsonl"))
    except OSError:
        return ()
    sig = []
    for n in names:
        try:
            sig.append((n, os.stat(path / n).st_size))
        except OSError:
            pass
    return tuple(sig)


class ListingCache:
    """``dynInspect.listRuns`` rows, re-read only when a run's logs changed size."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[tuple[tuple[str, int], ...], LspRunInfo]] = {}

    def row(self, path: Path, current: Run | None) -> LspRunInfo | None:
        if current is not None and current.path.resolve() == path.resolve():
            return run_info(current)
        sig = log_sizes(path)
        cached = self._rows.get(str(path))
        if cached is not None and cached[0] == sig:
            return cached[1]
        try:
            row = run_info(Run(path, skip=NOT_FOR_FINDINGS))
        except (InspectorError, OSError, ValueError):
            return None
        self._rows[str(path)] = (sig, row)
        return row
