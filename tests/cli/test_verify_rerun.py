"""``verify``'s verdict comes from what the re-run really did (issue 28, items 2 and 11):
a "fix" that makes the program raise on its first step is not verified (exit 1, the
message names file:line), a ``fullgraph`` failure moved to another line shows failures
1 → 1 at the new line and is not verified, and a real fix made in a copy of the project
is re-run in that copy and verified. Real programs of a few lines, real compiles."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dyn_inspect.inspector.outputs.reports import VerifyReport
from inductor_pool import seed
from lsp_support import strict

RECOMPILES = """import torch


@torch.compile
def f(x):
    return x * 2


f(torch.randn(4))
f(torch.randn(8))
"""
# the "fix" of the recompile that dies on its first step after compiling
RAISES = RECOMPILES.replace("f(torch.randn(8))\n", 'raise RuntimeError("dies on the first step")\n')
REAL_FIX = RECOMPILES.replace("f(torch.randn(8))\n", "f(torch.randn(4))\n")

FULLGRAPH = """import torch


@torch.compile(fullgraph=True)
def f(x):
    y = x * 2
    print("a")
    return y


f(torch.randn(4))
"""
# the failure moved one line down, to another statement
MOVED = FULLGRAPH.replace('    print("a")\n', '    y = y + 1\n    print("b")\n')


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DYN_INSPECT_RUNS_DIR", "TORCH_LOGS", "TORCH_TRACE")}
    return {**env, "DYN_INSPECT_NO_TUI": "1", "TORCHINDUCTOR_CACHE_DIR": seed(cache)}


def _record(work: Path, source: str, runs: Path, cache: Path) -> Path:
    work.mkdir(parents=True)
    (work / "prog.py").write_text(source)
    p = subprocess.run(
        [sys.executable, "-m", "dyn_inspect.cli", "run", "--no-tui", "--runs-dir", str(runs), "prog.py"],
        cwd=work,
        env=_env(cache),
        capture_output=True,
        text=True,
        timeout=900,
    )
    (run,) = [d for d in runs.iterdir() if d.is_dir() and not d.is_symlink()]
    assert (run / "launcher.jsonl").is_file(), p.stderr[-2000:]
    return run


def _newest(runs: Path) -> Path:
    return max((d for d in runs.iterdir() if d.is_dir() and not d.is_symlink()), key=lambda d: d.name)


def _verify(run: Path, cwd: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dyn_inspect.cli", "verify", str(run), *extra],
        cwd=cwd,
        env=_env(cache),
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def recompiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A recorded run with one recompile: (project dir, run dir, inductor cache)."""
    root = tmp_path_factory.mktemp("verify-recompiles")
    cache = root / "inductor"
    return root / "project", _record(root / "project", RECOMPILES, root / "runs", cache), cache


@pytest.mark.corpus
def test_a_fix_that_raises_on_its_first_step_is_not_verified(recompiled: tuple[Path, Path, Path]) -> None:
    work, run, cache = recompiled
    (work / "prog.py").write_text(RAISES)
    p = _verify(run, work, cache)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "recompiles" in p.stdout and "1 → 0" in p.stdout  # the counts are still shown
    assert "fixed ✓" not in p.stdout and "verified ✓" not in p.stdout
    assert "not verified — the re-run exited 1 at prog.py:10 (RuntimeError: dies on the first step)" in p.stdout
    report = strict((_newest(run.parent) / "verify.json").read_text(), VerifyReport)
    assert report.state == "not_verified" and report.exit_code == 1 and report.before_exit_code == 0
    assert report.exception is not None and (report.exception.file, report.exception.line) == ("prog.py", 10)
    assert [c.title for c in report.fixed] and not report.remaining  # gone from the re-run, not claimed fixed


@pytest.mark.corpus
def test_a_real_fix_in_a_copy_is_re_run_there_and_verified(recompiled: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """Item 11: verify from another checkout re-runs that checkout's edited program."""
    work, run, cache = recompiled
    copy = tmp_path / "checkout"
    shutil.copytree(work, copy)
    (copy / "prog.py").write_text(REAL_FIX)
    (work / "prog.py").write_text(RECOMPILES)  # the original stays unfixed
    p = _verify(run, copy, cache, "--json")
    assert p.returncode == 0, p.stdout + p.stderr
    report = strict(p.stdout, VerifyReport)
    assert report.state == "verified" and report.reason is None
    assert report.rerun_cwd == str(copy) and report.rerun_cwd_note is not None and str(work) in report.rerun_cwd_note
    assert report.before.recompiles == 1 and report.after.recompiles == 0
    assert [c.title for c in report.fixed] and not report.new
    assert json.loads((Path(report.after_run) / "verify.json").read_text())["state"] == "verified"


@pytest.mark.corpus
def test_a_fullgraph_failure_moved_to_another_line_is_not_fixed(tmp_path: Path) -> None:
    cache = tmp_path / "inductor"
    work = tmp_path / "project"
    run = _record(work, FULLGRAPH, tmp_path / "runs", cache)
    (work / "prog.py").write_text(MOVED)
    p = _verify(run, work, cache)
    assert p.returncode == 1, p.stdout + p.stderr
    assert any(line.split() == ["failed", "compiles", "1", "→", "1"] for line in p.stdout.splitlines()), p.stdout
    assert "failure gone: prog.py:7" in p.stdout and "new failure: prog.py:8" in p.stdout
    assert "not verified — " in p.stdout and "prog.py:8" in p.stdout.splitlines()[-1]
    report = strict((_newest(run.parent) / "verify.json").read_text(), VerifyReport)
    assert report.state == "not_verified"
    assert (report.before.failures, report.after.failures) == (1, 1)
    assert [(f.file, f.line) for f in report.failures_new] == [("prog.py", 8)]
    assert [(f.file, f.line) for f in report.failures_gone] == [("prog.py", 7)]


def test_the_lsp_marks_nothing_fixed_for_a_report_that_is_not_verified(tmp_path: Path) -> None:
    from lsprotocol import types
    from pygls.workspace import PositionCodec

    from dyn_inspect.lsp.documents import TextView
    from dyn_inspect.lsp.verify import annotate, load, verified_hints

    data = {
        "before_run": str(tmp_path / "gone"),
        "after_run": str(tmp_path / "r2"),
        "state": "not_verified",
        "reason": "the re-run exited 1 at prog.py:2 (RuntimeError: boom)",
        "rerun_cwd": str(tmp_path),
        "exit_code": 1,
        "before_exit_code": 0,
        "exception": {"type": "RuntimeError", "message": "boom", "file": "prog.py", "line": 2},
        "before": {"recompiles": 1, "breaks_unique": 0, "failures": 0},
        "after": {"recompiles": 0, "breaks_unique": 0, "failures": 0},
        "fixed": [{"title": "`x.shape[0]` takes 4, 8 → 1 recompile", "kind": "recompile", "recompiles": 1}],
    }
    verdict = load(data)
    assert not verdict.verified and not verdict.fixed_sites
    assert verdict.message().startswith("dyn-inspect: not verified — the re-run exited 1 at prog.py:2 (RuntimeError: boom)")
    assert "fixed ✓" not in verdict.message()
    diag = types.Diagnostic(range=types.Range(types.Position(0, 0), types.Position(0, 1)), message="Recompiled", source="dyn-inspect")
    (shown,) = annotate([diag], verdict, str(tmp_path / "r2"))
    assert "did not verify the fix: the re-run exited 1" in shown.message and "still there after the fix" not in shown.message
    # where the re-run crashed: a Warning, no "fixed ✓" Hint
    prog = str(tmp_path / "prog.py")
    view = TextView(prog, prog, ["f(x)", "raise RuntimeError('boom')"], PositionCodec())
    (hint,) = verified_hints(verdict, prog, view)
    assert hint.code == "not-verified" and hint.severity == types.DiagnosticSeverity.Warning and hint.range.start.line == 1
    assert hint.message == "not verified (re-run r2): the re-run exited 1 here: RuntimeError: boom"


def test_where_verify_re_runs(tmp_path: Path) -> None:
    """Here when the program is here (an absolute script path is moved along), else the
    recorded directory, saying why; a recorded command never moves."""
    import time

    from dyn_inspect.engine.schema import RunStart
    from dyn_inspect.inspector.reports.verify import plan_rerun

    recorded, here, elsewhere = tmp_path / "orig", tmp_path / "copy", tmp_path / "other"
    for d in (recorded, here, elsewhere):
        (d / "pkg").mkdir(parents=True)
    for d in (recorded, here):
        (d / "prog.py").write_text("")
        (d / "pkg" / "train.py").write_text("")

    def start(mode: str, command: list[str]) -> RunStart:
        return RunStart(t=time.time(), command=command, cwd=str(recorded), mode=mode, tool_version="0")  # type: ignore[arg-type]

    same = plan_rerun(start("script", ["python", "prog.py"]), str(recorded))
    assert (same.cwd, same.note) == (str(recorded), None)
    moved = plan_rerun(start("script", ["python", str(recorded / "prog.py"), "--x"]), str(here))
    assert (
        moved.cwd == str(here) and moved.command == ["python", str(here / "prog.py"), "--x"] and "prog.py is here too" in (moved.note or "")
    )
    module = plan_rerun(start("module", ["python", "-m", "pkg.train"]), str(here))
    assert module.cwd == str(here)
    missing = plan_rerun(start("script", ["python", "prog.py"]), str(elsewhere))
    assert missing.cwd == str(recorded) and f"prog.py is not in {elsewhere}" in (missing.note or "")
    command = plan_rerun(start("command", ["sh", "-c", "python prog.py"]), str(here))
    assert command.cwd == str(recorded) and "recorded command" in (command.note or "")
