"""``verify`` never runs a command a run directory names unless the user saw it and said so
(issue 29, severe 1): a run can come from a repository or a bug report, and its
``launcher.jsonl`` may say ``mode: command`` with any ``sh -c``. The CLI shows the command
and wants ``--yes``; the language server's verify (which never passes it) refuses; a
notebook cell's run is never re-run from outside its notebook."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from crafted_runs import crafted_run
from dyn_inspect.lsp.verify import run_verify


def test_cli_verify_shows_a_recorded_command_and_runs_it_only_with_yes(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    run = crafted_run(tmp_path, "command", ["sh", "-c", f"touch {marker}"])
    p = subprocess.run(
        [sys.executable, "-m", "dyn_inspect.cli", "verify", str(run)], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert p.returncode != 0
    assert not marker.exists()
    assert f"touch {marker}" in p.stderr and "--yes" in p.stderr  # the exact command, shown
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_lsp_verify_refuses_a_recorded_command(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    run = crafted_run(tmp_path, "command", ["sh", "-c", f"touch {marker}"])
    with pytest.raises(RuntimeError, match="recorded as a command"):
        run_verify(str(run), timeout_s=60)
    assert not marker.exists()


def test_a_notebook_cells_run_is_not_re_run_from_outside(tmp_path: Path) -> None:
    run = crafted_run(tmp_path, "notebook", ["/work/nb.ipynb", "cell [3]"])
    p = subprocess.run([sys.executable, "-m", "dyn_inspect.cli", "verify", str(run)], capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "re-run the cell in its notebook" in p.stderr


def _library_script(name: str) -> str:
    import sysconfig

    return str(Path(sysconfig.get_paths()["stdlib"]) / name)


@pytest.mark.parametrize(
    "mode, command",
    [
        # the stdlib's timeit runs the statement it is given: a "module" that is a command
        ("module", [sys.executable, "-m", "timeit", "-n1", "-r1", "__import__('pathlib').Path('{marker}').touch()"]),
        # the same file named as a "script" (it ends in .py, so it passed the script check)
        ("script", [sys.executable, _library_script("timeit.py"), "-n1", "-r1", "__import__('pathlib').Path('{marker}').touch()"]),
        # a script outside the directory it would run in
        ("script", [sys.executable, "../elsewhere/touch.py", "{marker}"]),
        # too short to name a script or a module: it fell through to a command (pass 2's 1e)
        ("script", ["{payload}"]),
        ("module", ["python3", "-c__import__('pathlib').Path('{marker}').touch()"]),
    ],
    ids=["stdlib-module", "stdlib-script", "script-outside", "short-script", "short-module"],
)
def test_verify_re_runs_only_the_user_s_own_script_or_module(tmp_path: Path, mode: str, command: list[str]) -> None:
    """A run that says "script" or "module" is re-run only when the file is a Python file of
    the directory it runs in: otherwise the CLI shows the command and wants ``--yes``, and
    the editor's verify refuses (the adversarial pass of issue 29 ran `python -m timeit`
    with a statement, and the stdlib's timeit.py, from a crafted launcher.jsonl)."""
    marker = tmp_path / "PWNED"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "touch.py").write_text("import pathlib, sys\npathlib.Path(sys.argv[1]).touch()\n")
    work = tmp_path / "work"
    work.mkdir()
    payload = work / "payload.sh"
    payload.write_text(f"#!/bin/sh\ntouch {marker}\n")
    payload.chmod(0o755)
    run = crafted_run(work, mode, [part.format(marker=marker, payload=payload) for part in command])
    p = subprocess.run(
        [sys.executable, "-m", "dyn_inspect.cli", "verify", str(run)],
        cwd=work, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 2 and not marker.exists()
    assert "not yours to verify" in p.stderr and "--yes" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    with pytest.raises(RuntimeError, match="not yours to verify"):
        run_verify(str(run), timeout_s=60)
    assert not marker.exists()
