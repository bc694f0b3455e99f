"""A run whose compiles captured no graph says so first, with torch's reason (issue 28 #12)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from corpus_support import CORPUS, marker_line
from dyn_inspect.inspector.analysis.no_graph import no_graph
from dyn_inspect.inspector.locations import file_line
from dyn_inspect.inspector.reports import summary
from dyn_inspect.inspector.run import Run

NO_GRAPH = CORPUS / "no_graph.py"


@pytest.mark.corpus
def test_a_run_that_compiled_no_graph_says_so_first(no_graph_run: Run) -> None:
    found = no_graph(no_graph_run.model)
    assert found is not None and (found.compiles, found.frames) == (1, 1)
    line = marker_line(NO_GRAPH, "BREAK:only_print")
    assert found.reasons == [f"graph break: `print(...)` can't be traced (GB0059) at {file_line(str(NO_GRAPH), line)}"]
    s = summary(no_graph_run)
    assert (s.graphs, s.kernels) == (0, 0) and s.no_graph == found.headline
    assert s.no_graph.startswith("no graph was compiled: 1 compile of 1 frame captured nothing — graph break:")
    text = subprocess.run(
        [sys.executable, "-m", "dyn_inspect.cli", "summary", str(no_graph_run.path)], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert text.splitlines()[0] == f"dyn-inspect: {found.headline}"


@pytest.mark.corpus
def test_a_run_with_a_graph_has_no_such_headline(error_break_run: Run) -> None:
    # error_break.py captures `x * 2` before its break: one graph, no headline.
    assert no_graph(error_break_run.model) is None and summary(error_break_run).no_graph is None
    text = subprocess.run(
        [sys.executable, "-m", "dyn_inspect.cli", "summary", str(error_break_run.path)], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert text.startswith("dyn-inspect: finished")
