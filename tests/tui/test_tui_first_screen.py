"""The first screen saved with a finished run's index (``tui/first_screen.py``): what
``dyn-inspect open`` draws before it has read the run — the same header and overview the
model gives, for exactly the run as it is now.

Recorded runs (real compiles), copied so that each test writes its own index."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest
from textual.widgets import Label, TabbedContent

from dyn_inspect.cli import main
from dyn_inspect.inspector.reports import screens
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui import first_screen
from dyn_inspect.tui.app import InspectorApp
from dyn_inspect.tui.follow import RunFollower
from tui_support import SIZE, settle, static_text


def _copy(run: Run, tmp_path: Path) -> Path:
    path = tmp_path / run.path.name
    shutil.copytree(run.path, path, ignore=shutil.ignore_patterns("index.dyn"), symlinks=True)
    return path


def _indexed(run: Run, tmp_path: Path) -> Run:
    path = _copy(run, tmp_path)
    Run(path)  # the first open of the finished run writes its index
    opened = Run(path)
    assert opened.from_index and not opened.read_on_open
    return opened


def test_the_saved_screen_is_the_models_and_only_for_the_run_as_it_is(breaks_run: Run, tmp_path: Path) -> None:
    run = _indexed(breaks_run, tmp_path)
    assert first_screen.save(run)
    screen = first_screen.load(run.path)
    assert screen is not None
    assert screen.overview == screens.overview(run.model)  # the same numbers and rows as the model's
    assert screen.overview.kernels == len(run.model.kernels) > 0 and screen.overview.top_breaks
    assert screen.state == screens.run_state(run.model) and screen.state.kind == "finished"
    assert screen.command == screens.command_line(run.model, run.path.name) and "breaks.py" in screen.command
    # Another place for the same files is another run; a log appended to is no longer the
    # saved one; nor is a file that is not a first screen.
    moved = tmp_path / "moved"
    shutil.copytree(run.path, moved, symlinks=True)
    assert first_screen.load(moved) is None
    log = max(run.path.glob("p*.jsonl"), key=lambda p: p.stat().st_size)
    saved = log.read_bytes()
    with log.open("ab") as f:
        f.write(b"{not json\n")
    assert first_screen.load(run.path) is None
    log.write_bytes(saved)
    assert first_screen.load(run.path) is not None
    [entry] = list((first_screen._folder()).glob(f"{screen.key.hex()}.msgpack"))
    entry.write_bytes(b"\x93garbage")
    assert first_screen.load(run.path) is None
    entry.write_bytes(msgspec.msgpack.encode({"format": 99}))
    assert first_screen.load(run.path) is None
    assert first_screen.save(run) and first_screen.load(run.path) is not None
    first_screen.forget(run.path)
    assert first_screen.load(run.path) is None


def test_every_index_the_cli_writes_saves_the_first_screen(breaks_run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _copy(breaks_run, tmp_path)
    assert first_screen.load(path) is None
    assert main(["summary", str(path)]) == 0  # the run's first open: its index is written
    capsys.readouterr()
    screen = first_screen.load(path)
    assert screen is not None and screen.overview.kernels == len(breaks_run.model.kernels)


async def test_the_first_screen_is_drawn_before_the_run_is_read(breaks_run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the run never read (its reader not started), the header and the overview show
    the saved screen; read, the overview shows the same."""
    run = _indexed(breaks_run, tmp_path)
    assert first_screen.save(run)
    screen = first_screen.load(run.path)
    assert screen is not None
    monkeypatch.setattr(RunFollower, "start", lambda self: None)
    app = InspectorApp(run.path, first_screen=screen, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.loaded_run is None
        early = {selector: static_text(app, selector) for selector in ("#overview-counts", "#overview-offenders")}
        assert f"{len(breaks_run.model.kernels)}  kernels" in early["#overview-counts"]
        assert "breaks.py" in str(app.query_one("#header-command", Label).content)
        assert "finished" in str(app.query_one("#header-state", Label).content)
        assert not app.query_one(TabbedContent).get_tab("ranks").display  # one process: no ranks tab
    monkeypatch.undo()
    app = InspectorApp(run.path, first_screen=screen, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(200):
            if app.loaded_run is not None and app.synced_events >= 0:
                break
            await pilot.pause(0.02)
        await settle(pilot)
        assert app.loaded_run is not None
        assert {selector: static_text(app, selector) for selector in early} == early
