"""The lean recording path (engine/tracehook.py + the recorder's background writer) records
what the logging-handler path records, and leaves a user's own TORCH_TRACE intact."""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from corpus_support import DYN_INSPECT, records
from dyn_inspect.engine.schema import Graph, Raw
from dyn_inspect.inspector.run import Run
from inductor_pool import seed

PROGRAM = '''
import torch

@torch.compile
def step(x):
    y = torch.relu(x) * 2
    print("midway")  # a graph break
    return y.sum() + 1

step(torch.randn(8))
step(torch.randn(16))  # a recompile
'''


def _record(tmp: Path, name: str, env_extra: dict[str, str], options: tuple[str, ...] = ()) -> Run:
    work = tmp / name
    work.mkdir()
    (work / "prog.py").write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DYN_INSPECT_", "TORCH_TRACE"))}
    env.update({"DYN_INSPECT_NO_TUI": "1", "TORCHINDUCTOR_CACHE_DIR": seed(work / "inductor"), **env_extra})
    proc = subprocess.run([str(DYN_INSPECT), "run", "--no-tui", *options, "--runs-dir", str(work / "runs"), "prog.py"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = next(p for p in (work / "runs").iterdir() if p.is_dir() and not p.is_symlink())
    return Run(run_dir)


# the stages of the graphs Inductor prints before its passes (engine/tracehook.py's BEFORE_PASSES)
BEFORE_STAGES = {"pre_grad_before", "joint_before", "post_grad_before"}


def _kinds(run: Run, before_passes: bool = True) -> collections.Counter[str]:
    out: collections.Counter[str] = collections.Counter()
    for _, e in run.events():
        if not before_passes and isinstance(e, Graph) and e.stage.removesuffix("_bw") in BEFORE_STAGES:
            continue
        kind = type(e).__struct_config__.tag  # type: ignore[attr-defined]
        out[str(kind)] += 1
    return out


def _before_stages(run: Run) -> set[str]:
    return {s for _, e in run.events() if isinstance(e, Graph) and (s := e.stage.removesuffix("_bw")) in BEFORE_STAGES}


@pytest.fixture(scope="module")
@records
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    tmp = tmp_path_factory.mktemp("tracehook")
    return {
        "lean": _record(tmp, "lean", {}),
        "handler": _record(tmp, "handler", {"DYN_INSPECT_TRACE_HOOK": "0", "DYN_INSPECT_ASYNC": "0"}),
        "with_trace": _record(tmp, "with_trace", {"TORCH_TRACE": str(tmp / "torch_trace")}),
        "all_graphs": _record(tmp, "all_graphs", {}, ("--all-graphs",)),
    }


def test_lean_path_records_what_the_handler_path_records(runs: dict[str, Run]) -> None:
    # The handler path gets what torch computed for its logging handler: the before-passes
    # graphs too, which the lean path does not compute (without --all-graphs).
    lean, handler = _kinds(runs["lean"]), _kinds(runs["handler"], before_passes=False)
    assert lean == handler
    for name in ("graph_break", "recompile", "kernel", "kernel_provenance", "capture", "graph", "chromium"):
        assert lean[name] > 0, name
    a, b = runs["lean"].model, runs["handler"].model
    # Each recording ran in its own folder: compare file names, not paths.
    assert [(Path(g.loc.file).name, g.loc.line, g.first.gb_id, g.count) for g in a.break_groups()] == [
        (Path(g.loc.file).name, g.loc.line, g.first.gb_id, g.count) for g in b.break_groups()
    ]
    assert [k.name for k in a.kernels] == [k.name for k in b.kernels]
    assert [[(Path(l.file).name, l.line) for l in k.lines] for k in a.kernels] == [
        [(Path(l.file).name, l.line) for l in k.lines] for k in b.kernels
    ]
    assert [r.event.reasons for r in a.recompiles] == [r.event.reasons for r in b.recompiles]


def test_compile_metrics_stay_the_programs(runs: dict[str, Run]) -> None:
    """With nobody else listening torch counts no structured-logging time (it logs nothing),
    so the lean path adds none to the program's compilation metrics either (issue 56). The
    first compile keeps what torch counts plainly too: its first record goes to torch's lazy
    TORCH_TRACE handler, which then removes itself."""
    seen = 0
    for c in runs["lean"].model.compiles_in_order()[1:]:
        if c.capture is not None and c.capture.metrics is not None:
            metrics = json.loads(runs["lean"].blob_text(c.capture.metrics))
            assert not metrics.get("structured_logging_overhead_s"), metrics.get("structured_logging_overhead_s")
            seen += 1
    assert seen


def test_users_torch_trace_still_written(runs: dict[str, Run], tmp_path_factory: pytest.TempPathFactory) -> None:
    run = runs["with_trace"]
    assert _kinds(run)["kernel"] == _kinds(runs["lean"])["kernel"]
    trace_dir = Path(run.path).parent.parent.parent / "torch_trace"
    logs = list(trace_dir.glob("*.log"))
    assert logs, "TORCH_TRACE wrote nothing"
    text = logs[0].read_text()
    assert '"compilation_metrics"' in text and '"inductor_output_code"' in text


def test_before_pass_graphs_only_with_all_graphs_or_when_torch_computed_them(runs: dict[str, Run]) -> None:
    """The lean path skips the three whole-graph prints Inductor makes before its passes
    (their cost is on the compiling thread); --all-graphs records them, and so does every
    path on which torch computed them anyway."""
    assert _before_stages(runs["lean"]) == set()
    # the program's graphs are inference graphs: pre-grad, joint (inference) and post-grad
    assert _before_stages(runs["all_graphs"]) == BEFORE_STAGES
    assert _before_stages(runs["handler"]) == BEFORE_STAGES
    assert _before_stages(runs["with_trace"]) == BEFORE_STAGES
    # nothing else changes: the same events, the before-passes graphs aside
    assert _kinds(runs["all_graphs"], before_passes=False) == _kinds(runs["lean"])


def _described(run: Run) -> list[tuple[str, str]]:
    """(kind, metadata as JSON) of each fake-tensor description, object addresses (a view
    function's repr names its tensor's) left out: each run is another process."""
    return [
        (e.torch_kind, re.sub(r"0x[0-9a-f]+", "0x…", json.dumps((e.metadata or {}).get(e.torch_kind), sort_keys=True)))
        for _, e in run.events()
        if isinstance(e, Raw) and e.torch_kind.startswith("describe_")
    ]


def test_fake_tensor_descriptions_are_computed_later_and_kept_whole(runs: dict[str, Run]) -> None:
    """The ``describe_tensor``/``_storage``/``_source`` metadata is computed on the recorder's
    writer thread (tracehook.DEFERRED), not while torch compiles: the records are the ones
    torch computed for its logging handler, field for field."""
    lean, handler = _described(runs["lean"]), _described(runs["handler"])
    assert {k for k, _ in lean} == {"describe_tensor", "describe_storage", "describe_source"}
    assert all('"id":' in body for _, body in lean)
    assert lean == handler
