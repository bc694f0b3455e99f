"""Deleting a run that readers have open (issue 27): the language server, the TUI, an index
build (``dyn-inspect summary``) and the findings precompute read a run and never write
inside it, so ``rm -rf`` of the run succeeds while they have it open and nothing reappears
after. (A reader used to write ``index.dyn`` into the run: ``shutil.rmtree`` of a run the
server had open failed with "Directory not empty".)"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from pytest_lsp import LanguageClient

from corpus_support import CORPUS, DYN_INSPECT
from dyn_inspect.inspector import index
from dyn_inspect.inspector.run import Run
from dyn_inspect.lsp import precompute
from dyn_inspect.tui.app import InspectorApp
from lsp_support import copy_run, diagnostics, lsp_client_fixture, open_doc, start

client = lsp_client_fixture()

BREAKS = CORPUS / "breaks.py"


def _listing(run: Path) -> set[str]:
    return {str(p.relative_to(run)) for p in run.rglob("*")}


def _summary(run: Path) -> subprocess.Popen[str]:
    env = {**os.environ, precompute.MIN_EVENTS_ENV: "0"}  # its index write starts the precompute too
    return subprocess.Popen([str(DYN_INSPECT), "summary", str(run)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


async def test_a_run_deleted_while_the_lsp_the_tui_and_an_index_build_read_it(client: LanguageClient, breaks_run: Run, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run = copy_run(breaks_run.path, runs)  # as recorded, without the recorder's index
    recorded = _listing(run)
    await start(client, CORPUS, {"dynInspect": {"runsDir": str(runs)}})
    u = open_doc(client, BREAKS)
    await diagnostics(client, u, 4)  # the server has read the run
    app = InspectorApp(run, poll_interval=0.02, cursor_blink=False)
    async with app.run_test(size=(140, 40)) as pilot:
        while app.loaded_run is None:  # the TUI has read it (behind its first frame)
            await pilot.pause(0.02)
        build = _summary(run)
        _, err = build.communicate(timeout=120)
        assert build.returncode == 0, err
        assert precompute.precompute(run).startswith(("saved", "already")), "the precompute read the run"
        # Four readers had it open: none wrote anything inside it.
        assert _listing(run) == recorded
        assert index.current_file(run) == index.locations(run)[1]  # their index is in the user cache

        # Deleted while they have it open, and while another index build reads it.
        racing = _summary(run)
        shutil.rmtree(run)  # raised "Directory not empty" when a reader wrote into the run
        _, err = racing.communicate(timeout=120)
        assert "Traceback" not in err, err
        await diagnostics(client, u, 0)  # the server saw it go
        assert app.follower is not None
        app.follower.poll()  # the TUI reads on from the deleted run
        await pilot.pause(0)
    # A reader that opens it now finds no run (one line), and re-creates nothing.
    again = subprocess.run([str(DYN_INSPECT), "summary", str(run)], capture_output=True, text=True, timeout=120)
    assert again.returncode != 0 and "Traceback" not in again.stderr and len(again.stderr.strip().splitlines()) == 1
    assert not run.exists() and list(runs.iterdir()) == []

