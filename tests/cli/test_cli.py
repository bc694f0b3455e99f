"""The command line: every listed subcommand loads; user mistakes are one line, exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

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


def test_options_before_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    """`dyn-inspect --no-tui run train.py` said "unknown command 'run' — did you mean 'run'?"."""

    with pytest.raises(SystemExit) as done:  # run's own --help: the words were taken as `run --no-tui --help`
        main(["--no-tui", "run", "--help"])
    assert done.value.code == 0 and "--no-tui" in capsys.readouterr().out
    assert main(["--json", "summary"]) == 2
    assert capsys.readouterr().err.strip() == "dyn-inspect: options go after the command: dyn-inspect summary --json …"
