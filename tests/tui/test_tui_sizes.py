"""Every view readable at 80x24 and at 160x45 (issue 30), on a real run that has every view
with data: the H200 recording of ``examples/train.py --profile`` with Triton's metadata
(``fixtures/h200_kernel_runs.tar.gz``; its Cost view is there, its Ranks view is not).

At 80 columns the tab row scrolled every tab after Output off the screen and nothing said
there were more: there, every view's key and label are listed on as many lines as needed
(``tui/view_bar.py``); at 160 the tab row holds them all."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from textual.widgets import DataTable, Tab, Tabs

from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from dyn_inspect.tui.view_bar import ViewBar
from dyn_inspect.tui.view_list import VIEWS
from tui_support import render, settle

FIXTURE = Path(__file__).parents[1] / "fixtures" / "h200_kernel_runs.tar.gz"
SIZES = [(80, 24), (160, 45)]
SHOWN = [v for v in VIEWS if v.id != "ranks"]  # one rank: no Ranks view


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    out = tmp_path_factory.mktemp("h200")
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(out, filter="data")
    run = Run(out / "h200_kernels")
    assert run.model.step_profiles and len(run.model.ranks()) <= 1  # what SHOWN says
    return run


def _tab_labels(app: InspectorApp) -> dict[str, str]:
    return {v.id: render(app.query_one(f"#--content-tab-{v.id}", Tab).label, width=400).strip() for v in SHOWN}


@pytest.mark.parametrize("size", SIZES)
async def test_every_view_can_be_seen_from_the_overview(run: Run, size: tuple[int, int]) -> None:
    app = InspectorApp(run.path, run=run, clock=lambda: 0.0)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, 0.2)
        labels = _tab_labels(app)
        assert labels["kernels"].startswith("Kernels (") and labels["cost"].startswith("Cost (")
        bar = app.query_one(ViewBar)
        if size[0] < 110:
            assert not app.query_one(Tabs).display and bar.display
            lines = render(bar.render(), width=size[0]).rstrip("\n").splitlines()
            assert 1 < len(lines) <= 4 and all(len(line.rstrip()) <= size[0] for line in lines)
            listed = " ".join(lines)
            for v in SHOWN:  # each with its key, its label never broken across lines
                assert (f"{v.key} {labels[v.id]}" if v.key else labels[v.id]) in listed, v.id
            assert "Ranks" not in listed
        else:
            assert app.query_one(Tabs).display and not bar.display and bar.region.height == 0
            for v in SHOWN:
                tab = app.query_one(f"#--content-tab-{v.id}", Tab)
                assert tab.region.width > 0 and tab.region.right <= size[0], (v.id, tab.region)


@pytest.mark.parametrize("size", SIZES)
async def test_every_view_fills_the_screen_and_its_tables_first_column_fits(run: Run, size: tuple[int, int]) -> None:
    app = InspectorApp(run.path, run=run, clock=lambda: 0.0)
    async with app.run_test(size=size) as pilot:
        for v in SHOWN:
            await app.action_show(v.id)
            await settle(pilot, 0.1)
            assert app.active_view == v.id
            view = app.view(v.id)
            assert view.region.width == size[0] and view.region.height >= size[1] // 2, (v.id, view.region)
            for table in view.query(DataTable):
                first = table.ordered_columns[0].get_render_width(table)
                assert 0 < first <= table.size.width, (v.id, table.id, first, table.size)
                assert table.row_count > 0 or v.id == "failures", (v.id, table.id)


async def test_a_click_on_a_listed_view_shows_it(run: Run) -> None:
    app = InspectorApp(run.path, run=run, clock=lambda: 0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, 0.2)
        bar = app.query_one(ViewBar)
        lines = render(bar.render(), width=80).splitlines()
        (row,) = [i for i, line in enumerate(lines) if "Timeline (" in line]
        await pilot.click(ViewBar, offset=(1 + lines[row].index("Timeline (") + 2, row))
        await settle(pilot, 0.1)
        assert app.active_view == "timeline"
        shown = render(bar.render(), width=80)
        assert "Timeline (" in shown  # still listed, now as the shown one
