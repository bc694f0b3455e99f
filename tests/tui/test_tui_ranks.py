"""The TUI's ranks view driven headless (Textual pilot) on real multi-rank recordings: the
torchrun corpus run (gloo, rank 1 breaks the graph and recompiles) and tlparse's 4-rank
TORCH_TRACE directory; a run without ranks hides the tab."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, TabbedContent

from corpus_support import CORPUS, marker_line
from dyn_inspect.engine.importer import import_trace
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from dyn_inspect.tui.views.ranks import OUTLIER
from dyn_inspect.tui.widgets import DetailPane
from tui_support import settle, show_view

SIZE = (160, 40)
BREAK_LINE = marker_line(CORPUS / "ranks" / "train.py", "BREAK:rank1_print")
FIXTURES = Path(__file__).parents[1] / "fixtures"


def cells(table: DataTable) -> list[dict[str, object]]:
    keys = [str(c.key.value) for c in table.columns.values()]
    return [dict(zip(keys, table.get_row_at(i), strict=True)) for i in range(table.row_count)]


def highlighted(cell: object) -> bool:
    return str(getattr(cell, "style", "")) == OUTLIER


async def test_ranks_view_of_the_torchrun_run(ranks_run: Run) -> None:
    app = InspectorApp(ranks_run.path, run=ranks_run, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await show_view(pilot, "R")
        assert app.query_one(TabbedContent).active == "ranks"
        assert str(app.query_one(TabbedContent).get_tab("ranks").label) == "Ranks (2)"
        rows = cells(app.query_one("#ranks-table", DataTable))
        assert [str(r["rank"]) for r in rows] == ["0", "1"]
        rank0, rank1 = rows
        # Rank 1 hit the break and recompiled; rank 0 did neither: rank 1's cells stand out.
        model = ranks_run.model
        hits = {r: sum(1 for g in model.breaks.values() for log, _ in g.hits if model.processes[log].rank == r) for r in (0, 1)}
        assert (str(rank0["breaks"]), str(rank1["breaks"])) == (str(hits[0]), str(hits[1])) and hits[1] > 0 == hits[0]
        assert int(str(rank1["recompiles"])) >= 1 and str(rank0["recompiles"]) == "0"
        # Two ranks disagree: rank 0 is the reference (as in the behaviour groups), rank 1 stands out.
        assert highlighted(rank1["breaks"]) and highlighted(rank1["recompiles"]) and not highlighted(rank0["breaks"])
        assert str(rank0["group"]) == "=" and not highlighted(rank0["group"])
        assert str(rank1["group"]).startswith("extra graph break") and highlighted(rank1["group"])
        await pilot.press("down")
        await settle(pilot)
        detail = " ".join(app.query_one("#rank-detail", DetailPane).text().split())
        assert "rank 1" in detail and "differs from rank 0" in detail and f"train.py:{BREAK_LINE}" in detail


async def test_ranks_view_of_an_imported_four_rank_directory(tmp_path: Path) -> None:
    run = Run(import_trace(FIXTURES / "tlparse_multi_rank_logs", out=tmp_path / "run").run_dir)
    app = InspectorApp(run.path, run=run, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await show_view(pilot, "R")
        rows = cells(app.query_one("#ranks-table", DataTable))
        assert [str(r["rank"]) for r in rows] == ["0", "1", "2", "3"]
        # Ranks 1 and 3 recompiled 14× and 6×, 0 and 2 never (tests/inspector/test_ranks.py reads it from the logs).
        assert [str(r["recompiles"]) for r in rows] == ["0", "14", "0", "6"]
        assert [highlighted(r["recompiles"]) for r in rows] == [False, True, False, True]
        assert [str(r["group"]) == "=" for r in rows] == [True, False, True, False]


async def test_a_run_without_ranks_hides_the_ranks_tab(tmp_path: Path) -> None:
    run = Run(import_trace(FIXTURES / "comp_failure.log", out=tmp_path / "run").run_dir)
    assert run.model.ranks() == []
    app = InspectorApp(run.path, run=run, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tabs = app.query_one(TabbedContent)
        assert not tabs.get_tab("ranks").display
