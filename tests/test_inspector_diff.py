"""Run A vs run B: breaks, recompile causes, kernels and compile time."""

from __future__ import annotations

import shutil
from pathlib import Path

from dyn_inspect.inspector.analysis.diff import break_items, diff_runs, recompile_items
from dyn_inspect.inspector.run import Run


def test_a_run_against_itself_is_unchanged(breaks_run: Run) -> None:
    d = diff_runs(breaks_run.model, breaks_run.model)
    assert d.breaks.empty and d.recompiles.empty and d.kernels.empty
    assert d.breaks.same == 5 and d.compile_time_delta_s == 0
    assert d.frames == []


def test_recompile_causes_added_and_removed(recompiles_run: Run, limit_run: Run) -> None:
    d = diff_runs(recompiles_run.model, limit_run.model)
    added = {(x.function, x.kind, x.source) for x, _ in d.recompiles.added}
    removed = {(x.function, x.kind, x.source, x.dim) for x, _ in d.recompiles.removed}
    assert added == {("limited", "dtype", "x"), ("limited", "recompile_limit", "")}
    assert removed == {("by_shape", "size", "x", 0), ("by_dtype", "dtype", "x", None)}
    # limited recompiled twice on a dtype (the second attempt hit the limit).
    assert dict(((x.function, x.kind), n) for x, n in d.recompiles.added)[("limited", "dtype")] == 2
    assert d.breaks.empty  # neither program breaks
    assert {k.name for k, _ in d.kernels.removed} >= {k.name for k in recompiles_run.model.kernels} - {k.name for k in limit_run.model.kernels}
    assert round(d.compile_time_delta_s, 6) == round(limit_run.model.total_compile_time() - recompiles_run.model.total_compile_time(), 6)


def test_breaks_match_across_checkouts(breaks_run: Run, tmp_path: Path) -> None:
    # The same program recorded in another directory: paths differ, break identities don't.
    copy = tmp_path / "other-checkout"
    shutil.copytree(breaks_run.path, copy)
    for log in copy.glob("*.jsonl"):
        old = str(Path(breaks_run.model.run_start.cwd if breaks_run.model.run_start else "/nowhere"))
        log.write_text(log.read_text().replace(old, str(tmp_path / "elsewhere")))
    moved = Run(copy)
    assert {g.loc.file for g in moved.model.break_groups()} != {g.loc.file for g in breaks_run.model.break_groups()}
    assert set(break_items(moved.model)) == set(break_items(breaks_run.model))
    assert set(recompile_items(moved.model)) == set(recompile_items(breaks_run.model))
