"""The command line's run housekeeping: a misspelt subcommand is an error, never a run
(it would record a crash and move ``latest``), and ``runs --prune`` deletes old runs but
never ``latest``'s target nor a run still recording."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from corpus_support import DYN_INSPECT
from dyn_inspect.engine.eventlog import point_latest

HELLO = 'print("hello")\n'


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DYN_INSPECT_NO_TUI": "1"}
    env.pop("DYN_INSPECT_RUNS_DIR", None)
    return subprocess.run([str(DYN_INSPECT), *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def _runs(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink()) if root.is_dir() else []


def _latest(root: Path) -> str:
    return os.readlink(root / "latest")


def test_typo_is_an_error_and_leaves_latest_alone(tmp_path: Path) -> None:
    (tmp_path / "hello.py").write_text(HELLO)
    root = tmp_path / ".dyn-inspect" / "runs"
    assert _cli("--no-tui", "hello.py", cwd=tmp_path).returncode == 0
    before, latest = _runs(root), _latest(root)
    assert len(before) == 1

    for argv, word, meant in (
        (["sumary"], "sumary", "summary"),
        (["sumary", "--json"], "sumary", "summary"),
        (["--no-tui", "brek"], "brek", "breaks"),
        (["recompile"], "recompile", "recompiles"),
    ):
        done = _cli(*argv, cwd=tmp_path)
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        assert done.stderr.splitlines() == [f"dyn-inspect: unknown command '{word}' — did you mean '{meant}'?"]
        assert done.stdout == ""
        assert _runs(root) == before and _latest(root) == latest

    # A script path and -m still run programs (each a new run that becomes latest).
    done = _cli("--no-tui", "hello.py", cwd=tmp_path)
    assert done.returncode == 0 and "hello" in done.stdout
    assert len(_runs(root)) == 2 and _latest(root) != latest
    latest = _latest(root)
    done = _cli("--no-tui", "-m", "hello", cwd=tmp_path)
    assert done.returncode == 0 and "hello" in done.stdout, done.stderr
    assert len(_runs(root)) == 3 and _latest(root) != latest
    # A file whose name is close to a command is a script, not a typo.
    (tmp_path / "sumary").write_text(HELLO)
    done = _cli("--no-tui", "sumary", cwd=tmp_path)
    assert "unknown command" not in done.stderr and len(_runs(root)) == 4


def test_prune_keeps_the_newest_latest_and_live_runs(tmp_path: Path) -> None:
    (tmp_path / "hello.py").write_text(HELLO)
    root = tmp_path / ".dyn-inspect" / "runs"
    for _ in range(4):
        assert _cli("--no-tui", "hello.py", cwd=tmp_path).returncode == 0
        time.sleep(1.1)  # run names carry the second they started
    runs = _runs(root)
    assert len(runs) == 4
    # A run still recording: its launcher is alive and has written no end yet.
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(120)\n")
    env = {**os.environ, "DYN_INSPECT_NO_TUI": "1"}
    env.pop("DYN_INSPECT_RUNS_DIR", None)
    slow = subprocess.Popen([str(DYN_INSPECT), "--no-tui", "slow.py"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(_runs(root)) < 5:
            assert time.monotonic() < deadline, "the slow run did not start"
            time.sleep(0.2)
        live = [r for r in _runs(root) if r not in runs][0]
        # latest back on the oldest run: it must survive even though it is old.
        point_latest(root, root / runs[0])

        done = _cli("runs", "--prune", "--keep", "1", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        # The newest is the live one (keep 1); the oldest is latest's; the three between go.
        assert _runs(root) == [runs[0], live]
        assert done.stdout.splitlines()[0] == f"deleted 3 run(s) from {root}; 2 left"

        point_latest(root, root / runs[0])
        done = _cli("runs", "--prune", "--keep", "0", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert _runs(root) == [runs[0], live]
        assert f"kept {live}: still recording" in done.stdout
    finally:
        slow.kill()
        slow.wait()

    bad = _cli("runs", "--keep", "2", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.splitlines() == ["dyn-inspect: --keep goes with --prune: dyn-inspect runs --prune --keep N"]
    bad = _cli("runs", "--prune", "--runs-dir", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.splitlines() == [f"dyn-inspect: no runs directory at {tmp_path / 'nowhere'}"]
    assert "Traceback" not in bad.stderr
