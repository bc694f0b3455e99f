"""``dyn-inspect trace``: the compile timeline as a Chrome trace, validated strictly
against the trace event format (Perfetto's trace processor downloads its binary at run
time, which these machines cannot): every span complete and properly nested on its
thread, each compile's stages inside it, one marker per graph break and recompile."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from dyn_inspect.inspector.run import Run

DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"
PHASES = {"X", "i", "M"}


def _trace(run: Run, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / f"{run.path.name}.json"
    proc = subprocess.run([str(DYN_INSPECT), "trace", str(run.path), "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "spans" in proc.stdout and stat.S_IMODE(out.stat().st_mode) == 0o600
    return json.loads(out.read_text())


def check_format(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The Chrome trace event format's rules that viewers rely on; returns the spans."""
    events = trace["traceEvents"]
    assert isinstance(events, list) and events
    for e in events:
        assert isinstance(e["name"], str) and e["ph"] in PHASES, e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
        if e["ph"] == "i":
            assert e["s"] in ("t", "p", "g") and isinstance(e["ts"], (int, float)), e
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name") and isinstance(e["args"]["name"], str), e
    spans = [e for e in events if e["ph"] == "X"]
    by_thread: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for e in spans:
        by_thread[(e["pid"], e["tid"])].append(e)
    for thread in by_thread.values():
        stack: list[dict[str, Any]] = []
        for e in sorted(thread, key=lambda e: (e["ts"], -e["dur"])):
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
                stack.pop()
            if stack:  # starts inside the open span: must end inside it too
                assert e["ts"] + e["dur"] <= stack[-1]["ts"] + stack[-1]["dur"] + 1e-3, (e["name"], stack[-1]["name"])
            stack.append(e)
    return spans


def _inside(inner: dict[str, Any], outer: dict[str, Any]) -> bool:
    return outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-3


def check_stages_nested(spans: list[dict[str, Any]]) -> int:
    """Per compile id: backend_compile inside entire_frame_compile, inductor_compile inside
    backend_compile (the stages torch times: Dynamo ⊃ AOTAutograd ⊃ Inductor)."""
    by_cid: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for e in spans:
        cid = e.get("args", {}).get("compile_id")
        if cid:
            by_cid[cid][e["name"]].append(e)
    nested = 0
    for cid, names in by_cid.items():
        for backend in names.get("backend_compile", []):
            assert any(_inside(backend, f) for f in names.get("entire_frame_compile", [])), cid
            nested += 1
        for inductor in names.get("inductor_compile", []):
            if names.get("backend_compile"):  # a lazily compiled backward has no frame around it
                assert any(_inside(inductor, b) for b in names["backend_compile"]) or not any(
                    _inside(inductor, f) for f in names.get("entire_frame_compile", [])
                ), cid
    return nested


@pytest.mark.corpus
def test_example_trace_is_valid_and_nested(example_run: Run, tmp_path: Path) -> None:
    trace = _trace(example_run, tmp_path)
    spans = check_format(trace)
    m = example_run.model
    assert check_stages_nested(spans) >= sum(1 for c in m.compiles.values() if c.graph("dynamo") is not None)
    markers = [e for e in trace["traceEvents"] if e["ph"] == "i" and e.get("cat") == "dyn-inspect"]
    assert sum(e["name"].startswith("graph break: ") for e in markers) == m.total_break_hits() > 0
    assert sum(e["name"].startswith("recompile: ") for e in markers) == len(m.recompiles) > 0
    # markers sit inside the run's compile activity, on the same clock as torch's spans
    first, last = min(e["ts"] for e in spans), max(e["ts"] + e["dur"] for e in spans)
    assert all(first - 60e6 <= e["ts"] <= last + 60e6 for e in markers)


@pytest.mark.corpus
def test_trace_after_a_reset_keeps_compiles_apart(reset_run: Run, tmp_path: Path) -> None:
    spans = check_format(_trace(reset_run, tmp_path))
    frames = {e["args"]["compile_id"] for e in spans if e["name"] == "entire_frame_compile"}
    assert frames == {c.cid for c in reset_run.model.compiles.values()}  # 0/0 and 0/0@r1 both there
    check_stages_nested(spans)


@pytest.mark.corpus
def test_trace_refuses_to_overwrite(example_run: Run, tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    out.write_text("mine")
    proc = subprocess.run([str(DYN_INSPECT), "trace", str(example_run.path), "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 2 and "exists" in proc.stderr and "Traceback" not in proc.stderr
    assert out.read_text() == "mine"
