"""The command line: every listed subcommand loads; user mistakes are one line, exit 2."""

from __future__ import annotations

import subprocess
import sys

from dyn_inspect.cli import commands, main

DYN = [sys.executable, "-m", "dyn_inspect.cli"]


def test_every_registered_command_loads() -> None:
    assert set(commands.load()) == set(commands.COMMAND_MODULES)


def test_missing_script_is_one_line(tmp_path, capsys) -> None:
    assert main(["--no-tui", str(tmp_path / "nope.py")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dyn-inspect: no such script") and err.count("\n") == 1


def test_summary_without_runs_is_one_line(tmp_path) -> None:
    p = subprocess.run([*DYN, "summary"], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.startswith("dyn-inspect: no runs in") and "Traceback" not in p.stderr
