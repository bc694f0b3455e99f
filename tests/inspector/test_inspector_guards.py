"""Guard trees parsed and diffed between two cache entries of one frame (real recordings)."""

from __future__ import annotations

import pytest

import inspector_program
from dyn_inspect.inspector.analysis.guards import guard_diff, guard_lines, parse_guards
from dyn_inspect.inspector.run import Run

program, program_run = inspector_program.program, inspector_program.program_run  # the shared fixtures


def _cids(run: Run, function: str) -> list[str]:
    frame = next(f for f in run.model.frames_in_order() if f.name == function)
    return [c.cid for c in frame.compiles]


def test_shape_recompile_guard_diff(recompiles_run: Run) -> None:
    a, b = _cids(recompiles_run, "by_shape")
    d = guard_diff(recompiles_run, a, b)
    assert d.problem is None
    # The tensor check on x changed its size from static [4, 8] to dynamic dim 0 ...
    assert [(c.before.kind, c.before.path, c.fields) for c in d.changed] == [("TENSOR_MATCH", "L['x']", {"size": ("[4, 8]", "[None, 8]")})]
    # ... and the dynamic graph added a range guard on that dim; nothing was dropped.
    assert d.added and all(g.kind == "LAMBDA_GUARD" for g in d.added)
    assert any("L['x'].size()[0]" in g.expr for g in d.added)
    assert d.removed == []
    assert d.unchanged > 0


def test_dtype_recompile_guard_diff(recompiles_run: Run) -> None:
    a, b = _cids(recompiles_run, "by_dtype")
    d = guard_diff(recompiles_run, a, b)
    assert [c.fields for c in d.changed] == [{"dtype": ("torch.float32", "torch.float64")}]
    assert d.added == [] and d.removed == []


def test_object_identity_guard_diff_and_ignore_ids(program_run: Run) -> None:
    a, b = _cids(program_run, "by_fn")
    d = guard_diff(program_run, a, b)
    ids = [c for c in d.changed if c.before.kind == "ID_MATCH" and "fn" in c.before.path]
    assert ids, [str(c.before) for c in d.changed]
    assert ids[0].before.expr != ids[0].after.expr  # two lambdas: two code objects
    # Ids always differ between processes; ignoring them, the entries guard the same things.
    same = guard_diff(program_run, a, b, ignore_ids=True)
    assert not [c for c in same.changed if c.before.kind == "ID_MATCH" and "fn" in c.before.path]


@pytest.mark.parametrize("fixture", ["recompiles_run", "example_run", "gpu_trace_run"])
def test_parsed_lines_match_the_recorded_guard_count(request: pytest.FixtureRequest, fixture: str) -> None:
    # The recorder counts leaf guards with its own pattern; the parser must find as many.
    run: Run = request.getfixturevalue(fixture)
    compiles = [c for c in run.model.compiles_in_order() if c.guards is not None]
    assert compiles
    for c in compiles:
        lines = guard_lines(run, c)
        assert len(lines) == c.guards.count, c.cid
        assert all(g.kind.isupper() and g.expr for g in lines)


def test_guard_lines_know_their_source_and_user_line(recompiles_run: Run) -> None:
    c = recompiles_run.model.compiles_in_order()[0]
    tensor = [g for g in guard_lines(recompiles_run, c) if g.kind == "TENSOR_MATCH"]
    assert len(tensor) == 1
    assert tensor[0].path == "L['x']"
    assert tensor[0].user_code == "return (x * 2).sum(dim=0)"
    assert tensor[0].where is not None and tensor[0].where.endswith("recompiles.py:8 in by_shape")


def test_diff_with_a_compile_without_guards_says_so(limit_run: Run) -> None:
    # The recompile-limit attempt produced no cache entry, hence no guards.
    d = guard_diff(limit_run, "0/1", "0/2")
    assert d.problem is not None and "0/2" in d.problem
    assert guard_diff(limit_run, "0/0", "7/7").problem == "no compile 7/7 in this run"


def test_parse_guards_ignores_non_tree_text() -> None:
    assert parse_guards("") == []
    assert parse_guards("Guard latency = 3 us\nnot a tree") == []
