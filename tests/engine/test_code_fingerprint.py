"""Files derived from a run (the editor's findings, the TUI's first screen, readers' indexes)
are keyed by the code that derived them (``user_cache.code_fingerprint``), never a
hand-bumped number: a headline reworded in ``inspector/analysis/messages.py`` shows in the
CLI, the TUI's first screen and the editor's findings of a run opened before the change.

Each step runs in its own process from a copy of the installed packages (``PYTHONPATH``
puts it before the editable install), the second after the copy's wording was edited."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import tomllib

from dyn_inspect.inspector.run import Run

ROOT = Path(__file__).parents[2]
OLD, NEW = "can't be traced", "cannot be traced (reworded)"

# Open the run as the faces do, read the saved entries, then save what this code builds.
STEP = r"""
import json, sys
from pathlib import Path
from dyn_inspect.inspector import index
from dyn_inspect.inspector.reports.findings import build_index
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace
from dyn_inspect.lsp import findings_cache
from dyn_inspect.tui import first_screen

path, root = Path(sys.argv[1]), Path(sys.argv[2])
run = Run(path, skip=index.NOT_FOR_FINDINGS)
ws = Workspace.for_run([root], run)
saved_findings = findings_cache.load(run, ws)
saved_screen = first_screen.load(path)
built = build_index(run, ws)
findings_cache.save(run, ws, built)
first_screen.save(Run(path))
print(json.dumps({
    "saved_findings": None if saved_findings is None else json.dumps([repr(f) for f in saved_findings.files.values()]),
    "saved_screen": None if saved_screen is None else repr(saved_screen.overview),
    "built_findings": json.dumps([repr(f) for f in built.files.values()]),
    "index": index.identity(path).hex(),
}))
"""


def _installed_copy(dest: Path) -> Path:
    """The packages as pyproject.toml installs them (``dyn_inspect`` from notebook/, ...)."""
    dirs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    site = dest / "site"
    for package, folder in sorted(dirs.items(), key=lambda kv: kv[0].count(".")):
        target = site.joinpath(*package.split("."))
        shutil.copytree(ROOT / folder, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _step(site: Path, env: dict[str, str], *args: str) -> dict[str, str | None]:
    out = subprocess.run([sys.executable, "-c", STEP, *args], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_reworded_headline_shows_in_every_face_of_an_old_run(example_run: Run, tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / example_run.path.name
    shutil.copytree(example_run.path, run_dir)
    site = _installed_copy(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(site), "DYN_INSPECT_KEY_DIR": str(tmp_path / "key"), "PYTHONDONTWRITEBYTECODE": "1"}
    cwd = next(iter(example_run.model.processes.values())).start.cwd
    args = (str(run_dir), cwd)  # the workspace: the run's working directory (examples/)

    # A reader's first open writes the run's index (the copied run's own is under another
    # key): the entries below are made only for a run read from its index.
    summary = subprocess.run([sys.executable, "-m", "dyn_inspect.cli", "summary", str(run_dir)], env=env, capture_output=True, timeout=300)
    assert summary.returncode == 0, summary.stderr[-2000:]
    first = _step(site, env, *args)
    assert OLD in str(first["built_findings"])
    # The same code in a new process: both entries are used (the cache does serve).
    again = _step(site, env, *args)
    assert OLD in str(again["saved_findings"]) and OLD in str(again["saved_screen"])

    messages = site / "dyn_inspect" / "inspector" / "analysis" / "messages.py"
    text = messages.read_text()
    assert 'can\'t be traced"' in text
    messages.write_text(text.replace(OLD, NEW))

    after = _step(site, env, *args)
    assert after["index"] == again["index"]  # the run and its index are the same ...
    assert after["saved_findings"] is None and after["saved_screen"] is None  # ... their old words are not used
    assert NEW in str(after["built_findings"]) and OLD not in str(after["built_findings"])
    cli = subprocess.run([sys.executable, "-m", "dyn_inspect.cli", "breaks", str(run_dir)], env=env, capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0, cli.stderr[-2000:]
    assert NEW in cli.stdout and OLD not in cli.stdout
    _step(site, env, *args)  # (the index too is the new code's: read from it, the findings are saved)
    last = _step(site, env, *args)
    assert NEW in str(last["saved_screen"]) and NEW in str(last["saved_findings"])
    assert OLD not in str(last["saved_screen"]) + str(last["saved_findings"])
