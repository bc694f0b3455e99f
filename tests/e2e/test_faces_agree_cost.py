"""Every face says `cost`'s sentences word for word (issue 57): a break's cost with its
interval (or "within noise"), and the in-process compiled-against-eager verdict. The typed
report (``inspector.reports.cost``) is the reference; the CLI's `cost`, the TUI's Cost view
(its detail pane), the language server's hover and report.html must each carry the same
text. The reference itself is checked against the recording first: its interval is the one
the per-step samples give."""

from __future__ import annotations

import contextlib
import html
import io
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

from corpus_support import CORPUS
from dyn_inspect.cli import main
from dyn_inspect.inspector.analysis.spread import spread
from dyn_inspect.inspector.export import export_run
from dyn_inspect.inspector.export.pictures import PictureOptions
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports import cost
from dyn_inspect.inspector.reports.findings import build_index
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace

pytestmark = pytest.mark.corpus


def _only(report: typed.CostReport) -> typed.StepBreakdown:
    assert report.message is None and len(report.processes) == 1, report
    return report.processes[0]


def _cli(run: Run) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["cost", str(run.path)]) == 0
    return out.getvalue()


def _report_html(run: Run, tmp_path: Path) -> str:
    export_run(run, tmp_path / "b.zip", pictures=PictureOptions(draw=False))
    with zipfile.ZipFile(tmp_path / "b.zip") as z:
        return html.unescape(z.read("report.html").decode())


async def _tui_details(run: Run) -> list[str]:
    """The Cost view's detail pane for each of its rows, as text."""
    from textual.widgets import DataTable

    from dyn_inspect.tui.app import InspectorApp
    from dyn_inspect.tui.views.cost import CostView
    from dyn_inspect.tui.widgets import DetailPane

    said: list[str] = []
    async with InspectorApp(run.path, run=run, clock=lambda: 0.0).run_test(size=(200, 50)) as pilot:
        await pilot.pause(0.2)
        await pilot.press("p")
        await pilot.pause(0.3)
        table = pilot.app.query_one("#cost-table", DataTable)
        pane = pilot.app.query_one("#cost-detail", DetailPane)
        view = pilot.app.query_one(CostView)
        assert table.row_count == len(view._rows) > 0
        for key in list(view._rows):
            view._show(key)  # what selecting the row shows (a cursor move under load lags)
            await pilot.pause(0.01)
            console = Console(file=io.StringIO(), width=1000, color_system=None)
            for part in pane._parts:
                console.print(part)
            said.append(console.file.getvalue())  # type: ignore[attr-defined]
    return said


async def test_a_breaks_cost_reads_the_same_everywhere(step_cost_run: Run, tmp_path: Path) -> None:
    p = _only(cost(step_cost_run))
    [b] = p.breaks
    # the reference: the interval is the one the ten steps' own costs give
    assert b.spread is not None and b.verdict is not None and b.spread.n == p.steps == 10
    [(_, profile)] = step_cost_run.model.step_profiles
    assert len(profile.per_step) == 10 and spread(profile.step_samples_us) is not None
    assert "CI" in b.text and ("the break costs" in b.text or "within noise" in b.text)

    assert b.text in _cli(step_cost_run)
    assert any(b.text in d for d in await _tui_details(step_cost_run))
    from dyn_inspect.lsp.hover import _break_md

    index = build_index(step_cost_run, Workspace([CORPUS]))
    [finding] = index.files[str(CORPUS / "step_cost.py")].breaks
    assert f"**At run time:** {b.text}" in "\n".join(_break_md(finding)).replace("\\", "")
    assert b.text in _report_html(step_cost_run, tmp_path)


async def test_compiled_against_eager_reads_the_same_everywhere(ab_same_run: Run, tmp_path: Path) -> None:
    p = _only(cost(ab_same_run))
    assert p.ab is not None and p.ab.verdict is not None and p.ab.in_process
    sentence = p.ab.text
    assert sentence == p.ab.verdict.text
    assert f"is compiling worth it: {sentence}" in _cli(ab_same_run)
    assert any(sentence in d for d in await _tui_details(ab_same_run))
    page = _report_html(ab_same_run, tmp_path)
    assert f"is compiling worth it: {sentence}" in page
    assert p.noise is not None and p.noise.text in page
    for f in p.figures:  # every figure's spread, in the CLI and the report alike
        assert f.spread is not None and f.text in page
