"""Triton's compile metadata of each kernel in the faces other than the CLI (issue 33): the
TUI's kernel pane and Kernels table, report.html and the LSP hover, on the runs recorded on
an H200 (``fixtures/h200_kernel_runs.tar.gz``: ``examples/train.py`` with ``--profile`` and
``--kernel-ir``, and the same under pointwise autotuning with coordinate descent).

Expected values are the fixture's, read from its ``kernel_meta`` events: the backward
reduction ``triton_red_fused_sum_0`` of compile 5/1 (``train.py``'s ``return self.fc2(h)``,
line 31: the bias gradient) runs
``XBLOCK=16 R0_BLOCK=32 num_warps=4 num_stages=1`` with 32 registers, no spills and 256 B
of shared memory, chosen by benchmarking 4 configs.
"""

from __future__ import annotations

import dataclasses
import html
import tarfile
import zipfile
from pathlib import Path

import msgspec
import pytest
from lsprotocol import types
from pygls.workspace import PositionCodec
from rich.text import Text
from textual.widgets import DataTable

from corpus_support import EXAMPLES, marker_line
from dyn_inspect.inspector.export import export_run
from dyn_inspect.inspector.reports.findings import build_index
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace
from dyn_inspect.lsp.documents import TextView, path_uri
from dyn_inspect.lsp.hover import hover
from dyn_inspect.lsp.placement import place
from dyn_inspect.lsp.settings import Settings
from dyn_inspect.tui.app import InspectorApp
from dyn_inspect.tui.messages import RunUpdated
from dyn_inspect.tui.views.base import Context
from dyn_inspect.tui.views.kernels import KernelsView
from dyn_inspect.tui.views.table import kernel_detail
from dyn_inspect.tui.widgets import DetailPane
from tui_support import opened, settle

FIXTURE = Path(__file__).parents[1] / "fixtures" / "h200_kernel_runs.tar.gz"
TRAIN = EXAMPLES / "train.py"
BRANCH = marker_line(TRAIN, "# data-dependent branch: graph break")  # a marked line: it has a hover
FC2 = marker_line(TRAIN, "# print(): graph break") + 1  # return self.fc2(h): where triton_red_fused_sum_0 came from
KERNEL = "triton_red_fused_sum_0"
CONFIG = "XBLOCK=16 R0_BLOCK=32 num_warps=4 num_stages=1"
HEADLINE = f"cuda sm_90 · {CONFIG} · 32 registers, 0 spills, 256 B shared memory"
SIZE = (160, 50)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("h200_kernels")
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(out, filter="data")
    return {name: out / name for name in ("h200_kernels", "h200_kernels_autotune")}


def test_the_fixture_says_what_the_faces_are_checked_against(runs: dict[str, Path]) -> None:
    (k,) = [k for k in Run(runs["h200_kernels"]).model.kernels if k.name == KERNEL]
    assert k.compile.cid == "5/1" and k.event.backward
    assert [loc.line for loc in k.lines] == [FC2]
    assert k.meta is not None and k.meta.chosen is not None and k.meta.autotune == "benchmark"
    chosen = k.meta.chosen
    assert (chosen.kwargs, chosen.num_warps, chosen.num_stages) == ({"XBLOCK": 16, "R0_BLOCK": 32}, 4, 1)
    assert (chosen.n_regs, chosen.n_spills, chosen.shared) == (32, 0, 256)
    assert len(k.meta.tried) == 4 and k.meta.target == "cuda sm_90"


# -- TUI -------------------------------------------------------------------------------------


def _columns(table: DataTable) -> dict[str, str]:
    """Column key → label."""
    return {str(key.value): str(col.label) for key, col in table.columns.items()}


def _row(table: DataTable, name: str) -> dict[str, str]:
    """The cells of the row whose kernel is ``name``, by column key."""
    keys = [str(key.value) for key in table.columns]
    for i in range(table.row_count):
        cells = [str(c) for c in table.get_row_at(i)]
        if cells[0].split()[0] == name:
            return dict(zip(keys, cells, strict=True))
    raise AssertionError(f"no row for {name}")


async def _pane_of(app: InspectorApp, pilot, name: str) -> str:
    """The kernel pane's text with ``name`` filtered to and selected."""
    await pilot.press("f", *name, "enter")
    await settle(pilot)
    table = app.query_one("#kernels-table", DataTable)
    assert table.row_count == 1
    return app.query_one("#kernel-source", DetailPane).text()


async def test_kernel_pane_shows_config_registers_autotuning_ir_and_launch_findings(runs: dict[str, Path]) -> None:
    run = Run(runs["h200_kernels"])
    async with opened(run, "5", size=SIZE) as (app, pilot):
        table = app.query_one("#kernels-table", DataTable)
        columns = _columns(table)
        keys = list(columns)
        # after what tells kernels apart (name, cost, size, lines, ops), before the backend
        assert keys[keys.index("ops") + 1 : keys.index("backend")] == ["config", "regs", "spills", "smem"]
        assert columns["regs"] == "Regs"
        row = _row(table, KERNEL)
        assert (row["config"], row["regs"], row["spills"], row["smem"]) == (CONFIG, "32", "0", "256 B")
        # Sorting by registers: most first, as `dyn-inspect kernels --sort registers`.
        view = app.view("kernels")
        assert isinstance(view, KernelsView)
        view.sort_by("regs")
        regs = [int(str(table.get_row_at(i)[keys.index("regs")])) for i in range(table.row_count)]
        assert regs == sorted(regs, reverse=True) and regs[0] == 32

        pane = await _pane_of(app, pilot, KERNEL)
        lines = pane.splitlines()
        assert f"compiled: {HEADLINE}" in lines
        assert "autotune: benchmarked 4 configs: best 3.5 µs, slowest 3.9 µs" in lines
        # the configs tried, fastest first
        tried = [line.strip() for line in lines if " — " in line and "µs" in line and "=" in line and not line.startswith("IR")]
        assert tried[0] == f"{CONFIG} — 3.5 µs" and len(tried) == 4
        assert "XBLOCK=16 R0_BLOCK=4 num_warps=8 num_stages=1 — 3.9 µs" in tried
        assert f"IR: ttir, ttgir, llir, ptx, sass — dyn-inspect kernel {KERNEL} --stage ptx" in lines
        assert "! r0_numel=48 in 1 launch(es): past the size hint r0_=32 its config was tuned for" in lines
        assert "! launched with 3 different argument shapes (a dynamic-shape kernel)" in lines
        assert "@triton.jit" in pane  # the source still follows
        assert pane.index("compiled:") < pane.index("@triton.jit")


async def test_kernel_pane_counts_the_configs_past_six(runs: dict[str, Path]) -> None:
    run = Run(runs["h200_kernels_autotune"])
    (k,) = [k for k in run.model.kernels if k.name == KERNEL]
    assert k.meta is not None and len(k.meta.tried) == 12
    async with opened(run, "5", size=SIZE) as (app, pilot):
        lines = (await _pane_of(app, pilot, KERNEL)).splitlines()
        assert any(line.startswith("autotune: coordinate descent 12 configs") for line in lines)
        assert sum(1 for line in lines if line.startswith("  R0_BLOCK=")) == 6
        assert "  … 6 more configs" in lines
    # The name is one kernel in this run: the command needs no --compile.
    assert f"IR: ttir, ttgir, llir, ptx, sass — dyn-inspect kernel {KERNEL} --stage ptx" in lines


def test_the_ir_command_names_the_compile_when_the_kernel_name_repeats(runs: dict[str, Path]) -> None:
    """`dyn-inspect kernel NAME` refuses a name several compiles made: the pane's command
    says which one (as a recompile for another shape would make)."""
    run = Run(runs["h200_kernels"])
    (k,) = [k for k in run.model.kernels if k.name == KERNEL]
    other = next(c for c in run.model.compiles.values() if c.cid == "0/1")
    run.model.kernels.append(dataclasses.replace(k, compile=other))
    text = "\n".join(str(part) for part in kernel_detail(Context(run), k) if isinstance(part, Text))
    assert f"dyn-inspect kernel {KERNEL} --compile 5/1 --stage ptx" in text


@pytest.mark.parametrize(("size", "shown"), [((160, 45), "ops"), ((80, 24), "time")])
async def test_the_kernels_table_shows_what_tells_kernels_apart_at_both_sizes(
    runs: dict[str, Path], size: tuple[int, int], shown: str
) -> None:
    """Issue 30: on this H200 run (profiled, with Triton's metadata) the name column took 58
    cells and the table 289: at 160 columns the size, the user's lines and the fused ops were
    off the screen. Names and ops are cut (in full in the pane and in the sort), and every
    column up to the fused ops fits 160 columns; at 80 the name, compile and time per step."""
    run = Run(runs["h200_kernels"])
    async with opened(run, "5", size=size) as (app, pilot):
        table = app.query_one("#kernels-table", DataTable)
        widths = {str(key.value): col.get_render_width(table) for key, col in table.columns.items()}
        keys = list(widths)
        assert keys[: keys.index("ops") + 1] == ["name", "cid", "time", "calls", "gbps", "gflops", "size", "lines", "ops"]
        upto = sum(widths[k] for k in keys[: keys.index(shown) + 1])
        assert upto <= table.scrollable_content_region.width, (size, widths, table.scrollable_content_region)
        # a long name is cut in its middle, and still sorts and is shown by its full name
        longest = max(run.model.kernels, key=lambda k: len(k.name))
        assert len(longest.name) > 40
        (cell,) = [row[0] for row in (table.get_row_at(i) for i in range(table.row_count)) if getattr(row[0], "value", None) == longest.name]
        assert "…" in str(cell) and str(cell).startswith(longest.name[:12]) and longest.name.endswith(str(cell).split("…")[1].split()[0])
        assert longest.name in await _pane_of(app, pilot, longest.name)


async def test_metadata_columns_come_with_the_first_kernel_meta_of_a_live_run(runs: dict[str, Path]) -> None:
    """A live run's metadata arrives after its kernels (once they launched): the columns
    appear then, and rows already drawn get their cells."""
    run = Run(runs["h200_kernels"])
    model = run.model
    metas = {id(k): k.meta for k in model.kernels}
    kept = dict(model.kernel_metas)
    for k in model.kernels:
        k.meta = None
    model.kernel_metas.clear()
    async with opened(run, "5", size=SIZE) as (app, pilot):
        table = app.query_one("#kernels-table", DataTable)
        assert "regs" not in _columns(table)  # no metadata yet: the table a CPU run has
        pane = await _pane_of(app, pilot, KERNEL)
        assert "compile metadata: not recorded" in pane and "compiled:" not in pane
        # The metadata comes (as RunModel._kernel_meta applies it).
        with app.lock:
            model.kernel_metas.update(kept)
            for k in model.kernels:
                k.meta = metas[id(k)]
        app.post_message(RunUpdated(len(kept)))
        await settle(pilot)
        assert "regs" in _columns(table)
        assert _row(table, KERNEL)["regs"] == "32"
        assert f"compiled: {HEADLINE}" in app.query_one("#kernel-source", DetailPane).text().splitlines()
        # A later event for the kernel replaces its metadata: the row and the pane follow.
        (k,) = [k for k in model.kernels if k.name == KERNEL]
        assert k.meta is not None and k.meta.chosen is not None
        with app.lock:
            k.meta = msgspec.structs.replace(k.meta, chosen=msgspec.structs.replace(k.meta.chosen, n_regs=40))
        app.post_message(RunUpdated(1))
        await settle(pilot)
        assert _row(table, KERNEL)["regs"] == "40"
        assert "40 registers" in app.query_one("#kernel-source", DetailPane).text()


# -- report.html -----------------------------------------------------------------------------


def test_report_html_shows_each_kernels_compile_headline(runs: dict[str, Path], tmp_path: Path) -> None:
    run = Run(runs["h200_kernels"])
    export_run(run, tmp_path / "r.zip")
    page = html.unescape(zipfile.ZipFile(tmp_path / "r.zip").read("report.html").decode())
    section = page[page.index('id="kernels"') : page.index('id="compile-time"')]
    rows = [r for r in section.split("<tr>") if f"<code>{KERNEL}</code>" in r]
    assert len(rows) == 1 and f'<span class="muted compiled">{HEADLINE}</span>' in rows[0]
    # every kernel of the run has metadata: one headline each
    assert section.count('class="muted compiled"') == len(run.model.kernels)


# -- LSP hover -------------------------------------------------------------------------------


def test_hover_on_a_line_names_its_kernels_compile_headlines(runs: dict[str, Path]) -> None:
    """The run was recorded in /work/main/examples; the workspace is this checkout's
    examples/ (the recorded paths map onto it wherever the checkout is). The hover answers
    on marked lines: the branch's graph break, whose line made two forward kernels."""
    run = Run(runs["h200_kernels"])
    index = build_index(run, Workspace.for_run([EXAMPLES], run))
    ff = index.for_path(str(TRAIN))
    assert ff is not None
    lines = TRAIN.read_text().splitlines()
    view = TextView(str(TRAIN), path_uri(str(TRAIN)), lines, PositionCodec())
    line0 = BRANCH - 1
    got = hover(view, place(ff, lines, Settings()), ff, types.Position(line0, len(lines[line0]) - len(lines[line0].lstrip()) + 1))
    assert got is not None and isinstance(got.contents, types.MarkupContent)
    kernel_lines = {line.split("`")[1]: line for line in got.contents.value.splitlines() if line.startswith("- `triton_")}
    assert set(kernel_lines) == {
        "triton_per_fused_addmm_gt_mean_relu_threshold_backward_0",
        "triton_red_fused_addmm_gt_mean_relu_threshold_backward_0",
    }
    red = kernel_lines["triton_red_fused_addmm_gt_mean_relu_threshold_backward_0"]
    assert red.endswith(
        "compile 0/1; compiled: `cuda sm_90 · XBLOCK=1 R0_BLOCK=2048 num_warps=16 num_stages=1 · 23 registers, 0 spills, 64 B shared memory`"
    )
    per = kernel_lines["triton_per_fused_addmm_gt_mean_relu_threshold_backward_0"]
    assert per.endswith("compiled: `cuda sm_90 · XBLOCK=1 num_warps=8 num_stages=1 · 19 registers, 0 spills, 32 B shared memory`")
    # The unmarked line 31 has no hover, but its kernels carry their headline for one.
    (ref,) = [k for k in ff.kernels_by_line[FC2] if k.name == KERNEL]
    assert ref.compiled == (HEADLINE,) and ref.compile_ids == ("5/1",) and ref.backward
