"""Deduplicated graph breaks and their attribution to the user's own line."""

from __future__ import annotations

import pytest

from corpus_support import CORPUS, EXAMPLES, marker_line, records
from dyn_inspect.inspector.analysis.breaks import break_sites
from dyn_inspect.inspector.run import Run
from inspector_program import Recorded, record_once


@pytest.fixture(scope="module")
@records
def program(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return record_once(tmp_path_factory)


def test_dedup_counts(breaks_run: Run) -> None:
    # breaks.py: five break sites; the helper's is hit twice (inlined, then as its own frame).
    sites = break_sites(breaks_run.model)
    assert len(sites) == 5 and sum(s.count for s in sites) == 6
    top = sites[0]
    assert (top.loc.file, top.loc.line, top.count) == (str(CORPUS / "corpus_helpers.py"), marker_line(CORPUS / "corpus_helpers.py", "BREAK:helper_print"), 2)
    assert len(top.compile_ids) == 2


def test_library_break_attributed_to_the_calling_user_line(program: Recorded) -> None:
    run = Run(program.run_dir)
    [site] = break_sites(run.model, root=program.workdir)
    assert (site.loc.file, site.loc.line) == (str(program.library), marker_line(program.library, "BREAK:lib"))
    assert site.in_library  # under site-packages
    call = marker_line(program.program, "CALLS:lib")
    assert site.user_frame is not None and (site.user_frame.file, site.user_frame.line) == (str(program.program), call)
    assert [(f.file, f.line) for f in site.user_frames] == [(str(program.program), call)]
    # The full stack is kept: the library frame innermost, the user line before it.
    assert [(f.file, f.line) for f in site.stack[-2:]] == [(str(program.program), call), (str(program.library), site.loc.line)]
    # Without a root, the innermost non-library frame is the same line.
    [plain] = break_sites(run.model)
    assert plain.user_frame == site.user_frame
    # A root the program is not in has no frame inside it.
    [outside] = break_sites(run.model, root=program.library.parent)
    assert outside.user_frame is None


def test_helper_in_workspace_is_its_own_user_frame(example_run: Run) -> None:
    sites = {(s.loc.file, s.loc.line): s for s in break_sites(example_run.model, root=EXAMPLES)}
    helper = sites[(str(EXAMPLES / "model_utils.py"), marker_line(EXAMPLES / "model_utils.py", "graph break inside an inlined helper"))]
    # Inside the workspace the helper line itself is the user's; counted for both captures.
    assert helper.user_frame is not None and helper.user_frame.file == str(EXAMPLES / "model_utils.py")
    # Two batch sizes compile the resume frame that calls log_stats twice; each time the
    # break is hit inlined there and again when log_stats runs as its own frame.
    assert helper.count == 4 and len(helper.compile_ids) == 4
