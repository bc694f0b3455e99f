"""FSDP2 (``fully_shard``) with per-block torch.compile on two gloo ranks (issue 34), on the
real corpus run of tests/corpus/fsdp/train.py, compared rank by rank with torch's own
TORCH_TRACE of a plain run: compiles, graphs, Inductor outputs and the recompile torch
logged. Every rank recompiles the block alike, so the summary says it once with its ranks."""

from __future__ import annotations

import pytest

from corpus_support import CORPUS, marker_line
from dyn_inspect.inspector.ranks import select_rank
from dyn_inspect.inspector.reports import summary
from dyn_inspect.inspector.reports.recompiles import recompiled_functions
from dyn_inspect.inspector.run import Run
from torchrun_support import PlainRun, plain_torchrun

PROGRAM = CORPUS / "fsdp" / "train.py"


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> PlainRun:
    return plain_torchrun(PROGRAM, tmp_path_factory.mktemp("fsdp-plain"))


@pytest.mark.parametrize("rank", [0, 1])
def test_each_rank_is_torchs_account(fsdp_run: Run, plain: PlainRun, rank: int) -> None:
    theirs = plain.kinds(rank)
    ours = summary(select_rank(fsdp_run, rank))
    assert ours.ranks == [rank]
    assert ours.compiles == theirs["compilation_metrics"] == 2
    assert ours.graphs == theirs["dynamo_output_graph"] == 2
    assert ours.recompiles == theirs["artifact:recompile_reasons"] == 1
    assert ours.graph_breaks.total == 0
    # Inductor's output code: a forward and a backward per graph
    run = select_rank(fsdp_run, rank)
    assert sum(len(c.output_codes) for c in run.model.compiles.values()) == theirs["inductor_output_code"] == 4
    (recompile,) = ours.recompile_list
    assert recompile.line == marker_line(PROGRAM, "RECOMPILE:requires_grad")
    assert "requires_grad mismatch" in recompile.reasons[0]


def test_the_recompile_every_rank_shares_is_one_row(fsdp_run: Run) -> None:
    r = recompiled_functions(fsdp_run.model)
    assert r.functions == 1 and r.recompiles == 2  # one function; once on each rank
    (row,) = r.shown
    assert (row.function, row.compiles, row.ranks) == ("forward", 2, [0, 1])
    assert "requires_grad mismatch" in (row.reason or "")
