"""Break messages lead with what the user wrote (issue 14, item 2): "`print(...)` can't
be traced (GB0059)" before torch's generic reason; torch's multi-line explanation keeps
its layout. Checked on real breaks of the corpus (every kind in tests/corpus/breaks.py)."""

from __future__ import annotations

import pytest

from corpus_support import CORPUS, marker_line
from dyn_inspect.inspector.analysis.messages import headline, label
from dyn_inspect.inspector.run import Run

BREAKS = CORPUS / "breaks.py"


@pytest.mark.corpus
def test_headlines_name_what_the_user_wrote(breaks_run: Run) -> None:
    by_line = {g.loc.line: g.first for g in breaks_run.model.break_groups() if g.loc.file == str(BREAKS)}
    assert headline(by_line[marker_line(BREAKS, "BREAK:print")]) == "`print(...)` can't be traced"
    assert label(by_line[marker_line(BREAKS, "BREAK:print")]).endswith("(GB0059)")
    assert "data-dependent" in headline(by_line[marker_line(BREAKS, "BREAK:branch")])
    assert headline(by_line[marker_line(BREAKS, "BREAK:explicit")]) == "an explicit `torch._dynamo.graph_break()`"
    assert ".tolist()" in headline(by_line[marker_line(BREAKS, "BREAK:builtin")])
    for e in by_line.values():  # never empty, never torch's "Encountered graph break ..." prefix
        assert headline(e) and not headline(e).startswith("Encountered graph break")


@pytest.mark.corpus
def test_explanations_keep_torchs_layout(breaks_run: Run) -> None:
    e = next(g.first for g in breaks_run.model.break_groups() if g.loc.line == marker_line(BREAKS, "BREAK:branch"))
    first, *rest = e.explanation.splitlines()
    assert first.startswith("Detected data-dependent branching")
    # the code listing under "computed as follows:" stays on its own lines
    assert any(line.lstrip().startswith("# File") for line in rest), e.explanation
