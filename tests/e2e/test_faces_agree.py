"""Every face renders one answer (issue 30): for each graph break of a real recording, the
CLI (``breaks --json``), the TUI (Pilot: the Graph breaks table and the overview), the
language server's diagnostics and report.html show the same headline, location and hit
count. The TUI said torch's "Failed to trace builtin operator" where every other face said
"`print(...)` can't be traced".

The CLI's JSON is the reference here, and it is checked against the corpus program's own
markers first, so an answer all faces got wrong together still fails."""

from __future__ import annotations

import contextlib
import html
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import DataTable, Static

from corpus_support import CORPUS, marker_line
from dyn_inspect.cli import main
from dyn_inspect.inspector.export import export_run
from dyn_inspect.inspector.reports.findings import build_index
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace
from dyn_inspect.lsp.diagnostics import break_message
from dyn_inspect.tui.app import InspectorApp

BREAKS = CORPUS / "breaks.py"
pytestmark = pytest.mark.corpus


def _where(file: str, line: int) -> tuple[str, int]:
    return Path(file).name, line


@pytest.fixture(scope="module")
def cli_sites(breaks_run: Run) -> dict[tuple[str, int], dict]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["breaks", str(breaks_run.path), "--json"]) == 0
    sites = json.loads(out.getvalue())["breaks"]
    return {_where(s["loc"]["file"], s["loc"]["line"]): s for s in sites}


def test_the_reference_is_the_program(cli_sites: dict[tuple[str, int], dict]) -> None:
    # breaks.py marks one break of each kind; the CLI's words for two of them, checked by eye
    # against torch's gb_type (GB0059 is print's, GB0170 a data-dependent branch).
    printed = cli_sites[("breaks.py", marker_line(BREAKS, "BREAK:print"))]
    assert printed["gb_id"] == "GB0059" and printed["headline"] == "`print(...)` can't be traced"
    branch = cli_sites[("breaks.py", marker_line(BREAKS, "BREAK:branch"))]
    assert branch["headline"] == "`if`/`while` on a tensor's value (data-dependent branch)"
    assert printed["type"] != printed["headline"]  # torch's own words differ: the case that drifted


async def test_tui_shows_the_clis_headlines_and_counts(breaks_run: Run, cli_sites: dict[tuple[str, int], dict]) -> None:
    app = InspectorApp(breaks_run.path, run=breaks_run, clock=lambda: 0.0)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("2")
        await pilot.pause(0.2)
        table = app.query_one("#breaks-table", DataTable)
        shown = {}
        for i in range(table.row_count):
            loc, count, gb_id, kind = (str(c) for c in table.get_row_at(i))
            file, line = loc.rsplit(":", 1)
            shown[_where(file, int(line))] = (count.strip(), gb_id, kind)
        assert shown == {k: (str(s["count"]), s["gb_id"] or "", s["headline"]) for k, s in cli_sites.items()}
        await pilot.press("1")
        await pilot.pause(0.2)
        console = Console(file=io.StringIO(), width=300, color_system=None)
        for widget in app.query(Static):
            console.print(widget.content)
        overview = console.file.getvalue()  # type: ignore[attr-defined]
        assert "Failed to trace builtin operator" not in overview
        assert "`print(...)` can't be traced (GB0059)" in overview


def test_lsp_diagnostics_say_the_clis_headlines(breaks_run: Run, cli_sites: dict[tuple[str, int], dict]) -> None:
    index = build_index(breaks_run, Workspace.for_run([CORPUS], breaks_run))
    said = {}
    for ff in index.files.values():
        for b in ff.breaks:
            said[_where(b.loc.file, b.loc.line)] = (b.count, break_message(b))
    assert set(said) == set(cli_sites)
    for where, s in cli_sites.items():
        count, message = said[where]
        assert count == s["count"], where
        assert f": {s['headline']}" in message, (where, message)


def test_report_html_says_the_clis_headlines(breaks_run: Run, cli_sites: dict[tuple[str, int], dict], tmp_path: Path) -> None:
    export_run(breaks_run, tmp_path / "b.zip")
    with zipfile.ZipFile(tmp_path / "b.zip") as z:
        page = html.unescape(z.read("report.html").decode())
    for where, s in cli_sites.items():
        assert s["headline"] in page, where


async def test_each_tab_counts_the_rows_it_lists(breaks_run: Run) -> None:
    """A tab's count is its table's rows (the Shapes tab said "Shapes (0)" over 8 rows)."""
    import re

    from dyn_inspect.tui.views.base import View

    app = InspectorApp(breaks_run.path, run=breaks_run, clock=lambda: 0.0)
    async with app.run_test(size=(200, 50)) as pilot:
        for key in "1234567890":
            await pilot.press(key)
            await pilot.pause(0.2)
        counted = 0
        for view in app.query(View):
            label = view.tab_label(view.ctx)
            number = re.search(r"\((\d+)\)$", label)
            tables = list(view.query(DataTable))
            if number is None or len(tables) != 1:
                continue  # no count, or a tree (Compiles: frames over their compiles)
            assert int(number[1]) == tables[0].row_count, (view.view_id, label, tables[0].row_count)
            counted += 1
        assert counted >= 5  # breaks, recompiles, kernels, failures, shapes, timeline


# view -> (the part beside the detail pane, the detail pane): each view's DEFAULT_CSS sizes them
SPLIT_VIEWS = {
    "breaks": ("#breaks-left", "#break-detail"),
    "recompiles": ("#recompiles-table", "#recompile-timeline"),
    "compiles": ("#compiles-tree", "#compile-info"),
    "failures": ("#failures-table", "#failure-detail"),
    "causes": ("#causes-table", "#cause-detail"),
    "shapes": ("#shapes-table", "#shapes-detail"),
    "timeline": ("#timeline-table", "#timeline-detail"),
    "code": ("#code-table", "#code-detail"),
}


@pytest.mark.parametrize(("size", "stacked"), [((80, 24), True), ((160, 45), False)])
async def test_tables_take_the_width_on_a_small_terminal(breaks_run: Run, size: tuple[int, int], stacked: bool) -> None:
    """At 80x24 a table beside its detail pane cut the causes' titles to 17 characters:
    under 110 columns every view's table sits above its detail, at full width (the Shapes,
    Timeline and Code tables kept their wide-screen share there, 32 to 44 columns); at 160x45
    they stand side by side, the table on the left (at 45 % for the finding views)."""
    from dyn_inspect.tui.view_list import VIEWS

    keys = {v.id: v.key for v in VIEWS}
    app = InspectorApp(breaks_run.path, run=breaks_run, clock=lambda: 0.0)
    async with app.run_test(size=size) as pilot:
        for view_id, (left_id, detail_id) in SPLIT_VIEWS.items():
            await pilot.press(keys[view_id])
            await pilot.pause(0.3)
            left, detail = app.query_one(left_id), app.query_one(detail_id)
            assert left.size.width > 0 and detail.size.width > 0, view_id
            assert (left.size.width >= size[0] - 2) is stacked, (view_id, left.size)
            assert (detail.region.y > left.region.y) is stacked, (view_id, left.region, detail.region)
            assert (detail.region.x > left.region.x) is not stacked, (view_id, left.region, detail.region)
            if not stacked and view_id in ("breaks", "recompiles", "compiles", "failures", "causes"):
                assert abs(left.size.width - round(0.45 * size[0])) <= 2, (view_id, left.size)


def test_a_break_is_shown_at_one_line_in_the_cli_and_the_tui(breaks_run: Run, tmp_path: Path) -> None:
    """Issue 30: the TUI attributed a break itself (torch's innermost location whenever it was
    not library code) while the CLI took the nearest user frame of the break's stack; they
    parted when the two differ. A copy of the recording whose print break's innermost
    location is another file of the user's that is not in the break's stack (as torch
    reports for code it generated from the user's): both faces show the stack's line."""
    from dyn_inspect.inspector.reports.screens import overview

    copy = tmp_path / breaks_run.path.name
    shutil.copytree(breaks_run.path, copy, symlinks=True)
    line = marker_line(BREAKS, "BREAK:print")
    other = str(CORPUS / "generated_from_breaks.py")
    moved = 0
    for log in copy.glob("*.jsonl"):
        events = []
        for raw in log.read_text().splitlines():
            e = json.loads(raw)
            if e.get("kind") == "graph_break" and e["loc"]["line"] == line and e["loc"]["file"].endswith("breaks.py"):
                assert e["user_stack"] and e["user_stack"][-1]["line"] == line
                e["loc"] = {"file": other, "line": 3}
                moved += 1
            events.append(json.dumps(e))
        log.write_text("\n".join(events) + "\n")
    assert moved
    run = Run(copy)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["breaks", str(copy), "--json"]) == 0
    sites = json.loads(out.getvalue())["breaks"]
    (cli,) = [s for s in sites if s["loc"]["file"] == other]
    assert _where(cli["user_frame"]["file"], cli["user_frame"]["line"]) == ("breaks.py", line)
    tui = {(b.loc.file, b.loc.line) for b in overview(run.model).top_breaks}
    assert (cli["user_frame"]["file"], line) in tui and (other, 3) not in tui
