"""SVG snapshots of every view (pytest-textual-snapshot) on a frozen recording.

The recording is ``tests/fixtures/tui/example-run.tar.gz``: ``dyn-inspect examples/train.py
--steps 4`` recorded live through the TUI (so its output was captured too), with the two
source files as they were. A frozen run, not the session's corpus recording, because a
snapshot must not change from one machine to the next: a fresh recording has other
compile times, object ids in guards and (on another CPU) other vectorized kernels.

The run's source paths are moved to where the archive is unpacked — only the ``file``,
``cwd`` and ``co_filename`` fields, like ``dyn-inspect import --path-map`` — so sources
are found wherever the checkout lives; paths on screen are relative to the run's cwd, the
clock is fixed, the terminal size is fixed and cursors do not blink.

Update after an intended UI change with ``pytest tests/tui/test_tui_snapshots.py
--snapshot-update`` and look at every changed SVG before committing it.
"""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest

from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.source_files import allow_root
from dyn_inspect.tui.app import InspectorApp

ARCHIVE = Path(__file__).parents[1] / "fixtures" / "tui" / "example-run.tar.gz"
SIZE = (140, 40)
_PATH_FIELDS = ("file", "cwd", "co_filename")


def relocate(run_dir: Path, new_root: Path) -> None:
    """Point the run's recorded source paths (under its cwd) at ``new_root``."""
    launcher = (run_dir / "launcher.jsonl").read_text().splitlines()
    old_root = next(json.loads(line)["cwd"] for line in launcher if '"run_start"' in line)
    fields, root = "|".join(_PATH_FIELDS), re.escape(old_root)
    pattern = re.compile(rf'"({fields})":"{root}(?=[/"])')
    for log in run_dir.glob("*.jsonl"):
        log.write_text(pattern.sub(lambda m: f'"{m[1]}":"{new_root}', log.read_text()))


@pytest.fixture(scope="module")
def frozen_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tui-snapshot")
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(root, filter="data")
    run_dir = next(p for p in (root / "run").iterdir() if p.is_dir())
    relocate(run_dir, root / "src")
    # The run is kept beside its sources, not in them: the sources are read as from the
    # program's folder, as a user opening the TUI there reads them (docs/security.md).
    allow_root(root / "src")
    return run_dir


def make_app(run_dir: Path, view: str = "overview") -> InspectorApp:
    return InspectorApp(run_dir, run=Run(run_dir), clock=lambda: 0.0, initial_view=view, cursor_blink=False)


def test_relocation_points_at_the_unpacked_sources(frozen_run: Path) -> None:
    run = Run(frozen_run)
    files = {g.loc.file for g in run.model.break_groups()}
    assert files == {str(frozen_run.parent.parent / "src" / "train.py"), str(frozen_run.parent.parent / "src" / "model_utils.py")}
    assert all(Path(f).is_file() for f in files)
    assert not run.problems


def test_overview(snap_compare, frozen_run: Path) -> None:
    assert snap_compare(make_app(frozen_run), terminal_size=SIZE)


def test_breaks(snap_compare, frozen_run: Path) -> None:
    assert snap_compare(make_app(frozen_run, "breaks"), press=["down"], terminal_size=SIZE)


def test_breaks_stack_frame_selected(snap_compare, frozen_run: Path) -> None:
    # The helper's print (inlined into forward): select its caller in the user stack.
    assert snap_compare(make_app(frozen_run, "breaks"), press=["tab", *["down"] * 7], terminal_size=SIZE)


def test_recompiles(snap_compare, frozen_run: Path) -> None:
    assert snap_compare(make_app(frozen_run, "recompiles"), terminal_size=SIZE)


def test_compiles_graph(snap_compare, frozen_run: Path) -> None:
    # forward → 0/0 → the AOT forward graph: op histogram and code.
    keys = ["enter", "down", "enter", "down", "down", "down", "down", "down"]
    assert snap_compare(make_app(frozen_run, "compiles"), press=keys, terminal_size=SIZE)


def test_compiles_kernel(snap_compare, frozen_run: Path) -> None:
    keys = ["enter", "down", "enter", *["down"] * 14]
    assert snap_compare(make_app(frozen_run, "compiles"), press=keys, terminal_size=SIZE)


def test_kernels(snap_compare, frozen_run: Path) -> None:
    assert snap_compare(make_app(frozen_run, "kernels"), terminal_size=SIZE)


def test_kernels_filtered_by_line(snap_compare, frozen_run: Path) -> None:
    assert snap_compare(make_app(frozen_run, "kernels"), press=["f", *"train.py:31", "enter"], terminal_size=SIZE)


def test_output(snap_compare, frozen_run: Path) -> None:
    async def output_read(pilot) -> None:
        # output.log is tailed by the follower thread: wait until it has been shown.
        while len(pilot.app.output_view.plain_lines()) < 10:
            await pilot.pause(0.02)

    assert snap_compare(make_app(frozen_run, "output"), terminal_size=SIZE, run_before=output_read)


def test_search(snap_compare, frozen_run: Path) -> None:
    assert snap_compare(make_app(frozen_run), press=["/", *"forward"], terminal_size=SIZE)


def test_help(snap_compare, frozen_run: Path) -> None:
    assert snap_compare(make_app(frozen_run, "breaks"), press=["?"], terminal_size=SIZE)
