"""A broken torch touchpoint never changes the user's program (engine/torch_compat.py).

Each case breaks one touchpoint in a real run of tests/compat/faulty.py — torch changed
the way a newer release might, or our own handler raises — with Inductor compiling for
real, and checks that stdout and exit code equal a plain run (no recorder), that the hook
is reported degraded (stderr once, process_start/process_end ``hooks``) and that what
the other hooks record is still there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from corpus_support import records
from dyn_inspect.engine import torch_compat
from inductor_pool import seed

PROGRAM = Path(__file__).parents[1] / "compat" / "faulty.py"

# fault -> the hook it must turn off (None: every hook stays up)
CASES: dict[str, str | None] = {
    "none": None,
    "trace_signature": "trace",
    "trace_ours_raises": "trace",
    "graph_breaks_moved": "graph_breaks",
    "graph_breaks_signature": "graph_breaks",
    "graph_breaks_ours_raises": "graph_breaks",
    "provenance_refused": "provenance",
    "profiler_ours_raises": "profiler",
    "environment_raises": "environment",
    "newer_torch": None,
}


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    events: list[dict]
    run_dir: Path | None = None

    def kind(self, kind: str) -> list[dict]:
        return [e for e in self.events if e.get("kind") == kind]

    def hooks(self, where: str) -> dict[str, str]:
        found = self.kind(where)
        assert found, f"no {where} event; stderr:\n{self.stderr[-2000:]}"
        return found[0].get("hooks", {})


def _events(run_dir: Path) -> list[dict]:
    out: list[dict] = []
    for log in sorted(run_dir.glob("p*.jsonl")):
        for line in log.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


@pytest.fixture(scope="module")
@records
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    root = tmp_path_factory.mktemp("compat-faults")
    env = dict(os.environ)
    env["TORCHINDUCTOR_CACHE_DIR"] = seed(root / "inductor-cache")  # shared: later runs hit it
    env.pop("DYN_INSPECT_RUN_DIR", None)

    def start(fault: str, record: bool) -> subprocess.Popen[str]:
        run_dir = str(root / fault) if record else "-"
        e = dict(env)
        if fault == "profiler_ours_raises":
            e["DYN_INSPECT_PROFILE_KERNELS"] = "2"
        return subprocess.Popen([sys.executable, str(PROGRAM), fault, run_dir], cwd=PROGRAM.parent, env=e,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    out: dict[str, Result] = {}
    # The plain run and the fault-free recording first (one FX-cache key each graph:
    # provenance tracking keeps the program's keys, test_cache_keys.py), then the faults, two at a time
    # (DYN_INSPECT_TEST_JOBS sets how many).
    order = [("plain", False), ("none", True)] + [(f, True) for f in CASES if f != "none"]
    jobs = max(1, int(os.environ.get("DYN_INSPECT_TEST_JOBS", "2") or 2))  # more on a big machine
    running: list[tuple[str, bool, subprocess.Popen[str]]] = []
    for i, (fault, record) in enumerate(order):
        running.append((fault, record, start("none" if fault == "plain" else fault, record)))
        if len(running) >= jobs or i == len(order) - 1 or i < 2:
            while running:
                name, rec, proc = running.pop(0)
                stdout, stderr = proc.communicate(timeout=900)
                out[name] = Result(proc.returncode, stdout, stderr, _events(root / name) if rec else [],
                                   root / name if rec else None)
    return out


@pytest.mark.corpus
@pytest.mark.parametrize("fault", list(CASES))
def test_broken_hook_leaves_program_unchanged(results: dict[str, Result], fault: str) -> None:
    plain, run = results["plain"], results[fault]
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert "by_shape 8" in plain.stdout and "branchy 3" in plain.stdout
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout), run.stderr[-3000:]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]


@pytest.mark.corpus
@pytest.mark.parametrize("fault", list(CASES))
def test_broken_hook_is_reported(results: dict[str, Result], fault: str) -> None:
    run = results[fault]
    hook = CASES[fault]
    start, end = run.hooks("process_start"), run.hooks("process_end")
    for name in ("trace", "graph_breaks", "provenance", "environment"):
        if name != hook:
            assert start[name] == "active", (name, start)
    if hook is None:
        assert not any(v.startswith("degraded") for v in end.values()), end
        assert "degraded" not in run.stderr
        return
    assert end[hook].startswith("degraded: " + torch_compat.LOSES[hook]), end
    lines = [line for line in run.stderr.splitlines() if line.startswith("dyn-inspect: ") and "degraded" in line]
    assert len(lines) == 1 and hook in lines[0], run.stderr[-2000:]


@pytest.mark.corpus
@pytest.mark.parametrize("fault", [f for f, hook in CASES.items() if hook != "trace"])
def test_other_hooks_still_record(results: dict[str, Result], fault: str) -> None:
    """The capture survives a broken neighbour: the break, the recompile, the kernels."""
    run = results[fault]
    breaks = run.kind("graph_break")
    assert breaks and all(b["loc"]["file"].endswith("faulty.py") for b in breaks), run.stderr[-2000:]
    assert any(b["loc"]["line"] == _marker_line() for b in breaks)
    assert run.kind("recompile")
    assert run.kind("kernel")


@pytest.mark.corpus
@pytest.mark.parametrize("fault", ["trace_signature", "trace_ours_raises"])
def test_trace_falls_back_to_the_logging_handler(results: dict[str, Result], fault: str) -> None:
    """Without the lean path the records still arrive, through torch's logging."""
    run = results[fault]
    assert {b["loc"]["line"] for b in run.kind("graph_break")} == {_marker_line()}
    assert run.kind("recompile") and run.kind("kernel")


@pytest.mark.corpus
def test_newer_torch_is_said_once(results: dict[str, Result]) -> None:
    run = results["newer_torch"]
    notes = [line for line in run.stderr.splitlines() if "newer than the newest tested" in line]
    assert len(notes) == 1 and "2.99.0" in notes[0] and "recording anyway" in notes[0], run.stderr[-2000:]
    assert "2.99.0" in run.hooks("process_start")["torch"]
    assert run.kind("graph_break") and run.kind("kernel")


def _marker_line() -> int:
    for number, line in enumerate(PROGRAM.read_text().splitlines(), start=1):
        if line.rstrip().endswith("# BREAK:branch"):
            return number
    raise LookupError("BREAK:branch")


@pytest.mark.corpus
def test_faces_say_what_was_degraded(results: dict[str, Result], tmp_path_factory: pytest.TempPathFactory) -> None:
    """summary (text and --json), the TUI header and the LSP summary name the lost hook."""
    import io

    from dyn_inspect.cli.commands.summary import print_summary
    from dyn_inspect.inspector.reports import summary_dict
    from dyn_inspect.inspector.reports.findings import build_index
    from dyn_inspect.inspector.reports.screens import environment_text
    from dyn_inspect.inspector.run import Run
    from dyn_inspect.inspector.workspace import Workspace

    run = Run(results["provenance_refused"].run_dir)
    lost = torch_compat.LOSES["provenance"]
    out = io.StringIO()
    print_summary(run, file=out)
    assert f"degraded: {lost}" in out.getvalue()
    assert any(note.startswith(lost) for note in summary_dict(run)["degraded"])
    assert f"degraded: {lost}" in environment_text(run.model)
    assert any(note.startswith(lost) for note in build_index(run, Workspace([PROGRAM.parent])).degraded)
    clean = Run(results["none"].run_dir)
    assert summary_dict(clean)["degraded"] == [] and "degraded" not in environment_text(clean.model)


def test_the_eager_arm_uses_torchs_stance_and_leaves_the_programs_own() -> None:
    """`--profile`'s eager steps (issue 57): torch.compiler.set_stance("force_eager") from a
    step's entry, put back after; a stance the program chose itself is left as it is. Real
    torch, in a child process (the stance is process-global)."""
    code = """
import torch
from torch._dynamo import eval_frame
from dyn_inspect.engine import torch_compat
restore, why = torch_compat.force_eager()
assert why is None and restore is not None, why
assert eval_frame._stance.stance == "force_eager"
restore()
assert eval_frame._stance.stance == "default"
torch.compiler.set_stance("eager_on_recompile")
restore, why = torch_compat.force_eager()
assert restore is None and "eager_on_recompile" in why, why
assert eval_frame._stance.stance == "eager_on_recompile"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
