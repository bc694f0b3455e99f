"""The TUI's Causes view (issue 14) on the recorded example (Textual pilot): the five
batch-size recompiles are one cause, ranked first, with one fix at the line that makes
``x``; the break causes follow; key 8 opens the view, ``o`` targets the fix's line and
search finds the cause. Expected lines come from the example's source, not from the code
under test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable, TabbedContent

from corpus_support import EXAMPLES
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from dyn_inspect.tui.views.causes import CausesView
from inductor_pool import seed
from tui_support import SIZE, cursor_row, flat, rows, settle, show_view, static_text

TRAIN = EXAMPLES / "train.py"


def line_of(needle: str) -> int:
    (line,) = [n for n, text in enumerate(TRAIN.read_text().splitlines(), start=1) if needle in text]
    return line


async def test_causes_view_ranks_the_batch_size_cause_first_with_its_fix(example_run: Run) -> None:
    app = InspectorApp(example_run.path, run=example_run, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await show_view(pilot, "c")
        assert app.query_one(TabbedContent).active == "causes"
        table = app.query_one("#causes-table", DataTable)
        got = rows(table)
        made = line_of("x, y = torch.randn(bs, 32")
        # one cause for the 5 recompiles, first (most expensive), with the one fix
        assert got[0][:3] == ["1", "5 recompiles", "`x.shape[0]` takes 16, 32 → 5 recompiles"]
        assert got[0][3] == f"torch._dynamo.mark_dynamic(x, 0)  (train.py:{made})"
        # then the three break sites (the example's), without a fix of their own here
        breaks = [r for r in got[1:] if r[2].startswith("graph break")]
        assert len(got) == 4 and len(breaks) == 3 and all(r[3] == "—" for r in breaks)
        assert [int(r[0]) for r in got] == [1, 2, 3, 4]
        assert app.query_one(TabbedContent).get_tab("causes").label.plain == "Causes (4)"

        detail = flat(static_text(app, "#cause-detail"))
        assert cursor_row(table)[0] == "1"
        assert "Fix: torch._dynamo.mark_dynamic(x, 0) where `x` is made" in detail
        assert "x, y = torch.randn(bs, 32" in detail  # the fix's line, from the source
        assert f"train.py:{line_of('def forward(')} forward" in detail  # and where it shows
        assert "model_utils.py" in detail and "log_stats" in detail

        view = app.query_one("#view-causes", CausesView)
        loc = view.selected_location()
        assert loc is not None and loc.file == str(TRAIN) and loc.line == made

        await pilot.press("down")
        await settle(pilot)
        assert "graph break" in flat(static_text(app, "#cause-detail"))

        hits = view.search(view.ctx, "mark_dynamic")  # type: ignore[arg-type]
        assert [h.label.split("  fix: ")[1] for h in hits] == ["torch._dynamo.mark_dynamic(x, 0)"]


@pytest.mark.corpus
async def test_v_verifies_the_fix_and_marks_the_cause_fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Apply and verify from the TUI: a copy of the example is recorded, the cause's fix is
    written where the Fix column says, and `v` in the Causes view re-runs the program (the
    real recorder, through `dyn-inspect verify`): the cause is marked fixed, the breaks stay.
    The runs are kept outside the program's folder (``--runs-dir``) and the TUI is opened
    from that folder, as a user does: its files are read because they are under the TUI's
    working directory (a run's recorded directory counts only for a run kept under it)."""
    work = tmp_path / "example"
    shutil.copytree(EXAMPLES, work, ignore=shutil.ignore_patterns(".dyn-inspect", "__pycache__"))
    runs = tmp_path / "runs"
    env = {**os.environ, "DYN_INSPECT_NO_TUI": "1", "TORCHINDUCTOR_CACHE_DIR": seed(tmp_path / "inductor")}
    env.pop("DYN_INSPECT_RUNS_DIR", None)
    dyn_inspect = Path(sys.executable).parent / "dyn-inspect"
    rec = subprocess.run([str(dyn_inspect), "--no-tui", "--runs-dir", str(runs), "train.py", "--steps", "4"],
                         cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert rec.returncode == 0, rec.stderr[-2000:]
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir() and not p.is_symlink()]

    monkeypatch.chdir(work)
    app = InspectorApp(run_dir, run=Run(run_dir), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await show_view(pilot, "c")
        view = app.query_one("#view-causes", CausesView)
        first = view.ranked(view.ctx.run.model, view.ctx.scope)[0]  # type: ignore[union-attr]
        assert first.fix is not None and "mark_dynamic(x, 0)" in first.fix.code
        # the edit the user makes: the fix's code after the line the Fix column names
        train = work / "train.py"
        lines = train.read_text().splitlines(keepends=True)
        lines.insert(first.fix.after_line, first.fix.insert)
        train.write_text("".join(lines))

        await pilot.press("v")
        for _ in range(1200):  # the re-run compiles the example again: minutes on a loaded CI
            await pilot.pause(0.5)
            if view.verdict is not None or not view.verifying:
                break
        assert view.verdict is not None, "verify gave no verdict"
        assert view.verdict.before["recompiles"] == 5 and view.verdict.after["recompiles"] == 0
        assert first.title in view.verdict.fixed
        assert any(t.startswith("graph break") for t in view.verdict.remaining)
        await settle(pilot)
        assert f"fixed ✓ (verified run {view.verdict.run_id})" in flat(static_text(app, "#cause-detail"))
