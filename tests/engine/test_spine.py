"""The spine on real compiles: every record kind, at the right lines, for the corpus."""

from __future__ import annotations

import os
import stat

import msgspec
import pytest

from corpus_support import CORPUS, EXAMPLES, marker_line
from dyn_inspect.engine.eventlog import blob_path
from dyn_inspect.engine.schema import Blob, Event
from dyn_inspect.inspector.reader import LogFile
from dyn_inspect.inspector.run import Run

BREAKS = CORPUS / "breaks.py"
HELPERS = CORPUS / "corpus_helpers.py"


def _group_at(run: Run, file, line):
    found = [g for g in run.model.break_groups() if g.loc.file == str(file) and g.loc.line == line]
    assert len(found) == 1, f"expected one break at {file}:{line}, got {[(g.loc.file, g.loc.line) for g in run.model.break_groups()]}"
    return found[0]


@pytest.mark.parametrize(
    ("marker", "gb_id", "type_fragment"),
    [
        ("BREAK:branch", "GB0170", "Data-dependent branching"),
        ("BREAK:print", "GB0059", "builtin operator"),
        ("BREAK:builtin", "GB0109", "tolist"),
        ("BREAK:explicit", "GB0025", "graph_break()"),
    ],
)
def test_graph_break_exact_line_type_and_id(breaks_run: Run, marker: str, gb_id: str, type_fragment: str) -> None:
    line = marker_line(BREAKS, marker)
    group = _group_at(breaks_run, BREAKS, line)
    b = group.first
    assert b.gb_id == gb_id
    assert type_fragment in b.gb_type
    assert b.url and b.url.endswith(f"{gb_id.lower()}.html")
    assert b.explanation and b.hints
    assert b.loc.code and marker in b.loc.code  # the recorded line text, for stale-line checks
    assert group.count == 1  # called twice, compiled once: the cached graph does not re-break
    # The user stack ends at the break and passes through the module-level call.
    assert (b.user_stack[-1].file, b.user_stack[-1].line) == (str(BREAKS), line)
    assert any(f.file == str(BREAKS) and f.name == "<module>" for f in b.user_stack)


def test_columns_cover_the_breaking_expression(breaks_run: Run) -> None:
    line = marker_line(BREAKS, "BREAK:branch")
    loc = _group_at(breaks_run, BREAKS, line).loc
    text = BREAKS.read_text().splitlines()[line - 1]
    assert loc.col is not None and loc.end_col is not None
    assert text[loc.col : loc.end_col] == "y.sum() > 0"


def test_break_inside_inlined_helper_is_one_break_counted_twice(breaks_run: Run) -> None:
    line = marker_line(HELPERS, "BREAK:helper_print")
    group = _group_at(breaks_run, HELPERS, line)
    # Logged once while inlined into with_helper and once when the helper runs as its own frame.
    assert group.count == 2
    assert len({e.cid for _, e in group.hits}) == 2
    caller = marker_line(BREAKS, "CALLS:helper")
    stacks = [[(f.file, f.line) for f in e.user_stack] for _, e in group.hits]
    assert any((str(BREAKS), caller) in s for s in stacks)


def test_resumed_breaks_produce_resume_frames_with_bytecode(breaks_run: Run) -> None:
    names = {f.name for f in breaks_run.model.frames_in_order()}
    for fn in ("branchy", "chatty", "unsupported", "explicit", "noisy_scale"):
        assert any(n.startswith(f"torch_dynamo_resume_in_{fn}_at_") for n in names), fn
    resumed = [c for c in breaks_run.model.compiles_in_order() if c.capture and c.capture.co_name.startswith("torch_dynamo_resume")]
    assert all({b.which for b in c.bytecode} == {"original", "modified"} for c in resumed)
    breaking = [c for c in breaks_run.model.compiles_in_order() if c.breaks]
    assert breaking and all(c.outcome == "graph_break" for c in breaking)


def test_every_compile_has_capture_guards_graphs_and_kernels(breaks_run: Run) -> None:
    for c in breaks_run.model.compiles_in_order():
        assert c.capture is not None, c.cid
        assert c.start is not None and c.start.stack, c.cid
        assert c.guards is not None and c.guards.count > 0
        assert breaks_run.blob_text(c.guards.text).count("TENSOR_MATCH") >= 1 or c.capture.graph_op_count == 0
        if c.capture.graph_op_count:
            stages = {g.stage for g in c.graphs}
            assert {"dynamo", "aot_inference", "post_grad"} <= stages
            assert c.kernels and all(k.event.backend == "cpp" for k in c.kernels)
            assert c.capture.times.total_s and c.capture.times.total_s > 0


def test_cpu_kernels_have_source_fused_ops_and_source_lines(breaks_run: Run) -> None:
    branch_line = marker_line(BREAKS, "BREAK:branch")
    kernels = [k for k in breaks_run.model.kernels if k.compile.capture and k.compile.capture.co_name == "branchy"]
    assert len(kernels) == 1
    k = kernels[0]
    src = breaks_run.blob_text(k.event.source)
    assert 'extern "C"' in src and "kernel(" in src
    assert "aten.sum" in k.event.fused_ops and "aten.relu" in k.event.fused_ops
    assert k.event.vectorized is not None  # Inductor vectorizes this reduction with at::vec
    # Provenance: the fused relu+sum kernel came from the relu line and the branch line.
    assert {(l.file, l.line) for l in k.lines} == {(str(BREAKS), branch_line - 1), (str(BREAKS), branch_line)}
    out = k.compile.output_codes[0]
    assert k.name in out.kernels and k.name in breaks_run.blob_text(out.code)


def test_graph_code_and_op_counts(breaks_run: Run) -> None:
    c = next(c for c in breaks_run.model.compiles_in_order() if c.capture and c.capture.co_name == "branchy")
    dynamo = c.graph("dynamo")
    assert dynamo is not None and "def forward" in breaks_run.blob_text(dynamo.code)
    aot = c.graph("aot_inference")
    assert aot is not None and aot.op_counts.get("aten.relu") == 1 and aot.op_counts.get("aten.sum") == 1


def test_recompiles_name_the_failed_guard(recompiles_run: Run) -> None:
    recs = {r.compile.capture.co_name: r for r in recompiles_run.model.recompiles}
    assert "size mismatch at index 0. expected 4, actual 8" in recs["by_shape"].event.reasons[0]
    assert "dtype mismatch. expected Float, actual Double" in recs["by_dtype"].event.reasons[0]
    frame = next(f for f in recompiles_run.model.frames_in_order() if f.name == "by_shape")
    # co_firstlineno is the first decorator's line (`@torch.compile` above the def).
    assert frame.firstlineno == marker_line(CORPUS / "recompiles.py", "RECOMPILE:shape") - 1
    # The second compile went dynamic: a symbol for dim 0 of x.
    second = frame.compiles[1]
    assert any(s.source == "L['x'].size()[0]" for s in second.symbols)
    assert second.capture.cache_size == 1
    # 4 → 8 recompiled once; 16 reused the dynamic graph.
    assert len(frame.compiles) == 2


def test_recompile_limit_is_recorded_as_eager_fallback(limit_run: Run) -> None:
    frame = next(f for f in limit_run.model.frames_in_order() if f.name == "limited")
    assert frame.recompile_limit is not None
    assert "recompile limit" in frame.recompile_limit.reason.lower()
    assert frame.compiles[-1].outcome == "recompile_limit"
    assert frame.firstlineno == marker_line(CORPUS / "limit.py", "RECOMPILE:limit") - 1
    assert len([c for c in frame.compiles if c.outcome == "graph"]) == 2


def test_exception_after_compiling(raises_run: Run, corpus) -> None:
    assert corpus["raises"].returncode == 1
    m = raises_run.model
    assert m.status == "crashed" and m.exit_code == 1
    proc = next(iter(m.processes.values()))
    exc = proc.end.exception
    assert exc.type == "RuntimeError" and "boom after compiling" in exc.message
    assert exc.loc.line == marker_line(CORPUS / "raises.py", "RAISE:here")
    assert m.kernels  # what compiled before the crash is all there


def test_sigkilled_run_reads_back_intact(killed_run: Run, corpus) -> None:
    # the launcher dies by the same signal, as python itself would (a supervisor sees WIFSIGNALED)
    assert corpus["killed"].returncode == -9
    m = killed_run.model
    assert m.status == "killed" and m.run_end.signal == 9
    assert not killed_run.problems  # every line that was written decodes
    proc = next(iter(m.processes.values()))
    assert proc.start is not None and proc.end is None  # no atexit after SIGKILL
    assert m.kernels and m.compiles_in_order()[0].capture is not None
    for log in killed_run.logs.values():
        assert log.unterminated_tail() == 0


def test_run_start_environment(example_run: Run) -> None:
    proc = next(iter(example_run.model.processes.values()))
    s = proc.start
    assert s.argv[0].endswith("train.py") and s.cwd == str(EXAMPLES)
    assert s.torch and s.python and s.cpu_isa is not None and s.provenance
    assert example_run.model.run_start.command[1:] == ["train.py", "--steps", "4"]
    assert example_run.model.exit_code == 0


def test_training_example_graph_stages_and_backward_kernels(example_run: Run) -> None:
    fwd = next(c for c in example_run.model.compiles_in_order() if c.capture and c.capture.co_name == "forward")
    stages = {g.stage for g in fwd.graphs}
    assert {"dynamo", "aot_joint", "aot_fw", "aot_bw", "post_grad", "post_grad_bw"} <= stages
    assert any(k.event.backward for k in fwd.kernels) and any(not k.event.backward for k in fwd.kernels)
    assert fwd.backward is not None
    lines = {g.loc.line for g in example_run.model.break_groups() if g.loc.file == str(EXAMPLES / "train.py")}
    assert marker_line(EXAMPLES / "train.py", "# data-dependent branch: graph break") in lines
    assert marker_line(EXAMPLES / "train.py", "# print(): graph break") in lines
    assert any(g.loc.file == str(EXAMPLES / "model_utils.py") for g in example_run.model.break_groups())
    assert example_run.model.recompiles


def test_disable_compile_runs_eagerly(corpus) -> None:
    rec = corpus["eager"]
    assert rec.returncode == 0
    run = Run(rec.run_dir)
    proc = next(iter(run.model.processes.values()))
    assert proc.start.compile_disabled
    assert not run.model.compiles and not run.model.breaks
    assert "step 1" in rec.stdout


def test_user_modules_named_like_ours_are_not_shadowed(corpus) -> None:
    rec = corpus["shadow"]
    assert rec.returncode == 0, rec.stderr[-2000:]
    assert "shadow ok" in rec.stdout and str(CORPUS / "shadow" / "engine.py") in rec.stdout
    run = Run(rec.run_dir)
    assert run.model.kernels  # and we still recorded


def test_every_blob_exists_and_permissions_are_private(example_run: Run) -> None:
    missing = []
    for _, event in example_run.events():
        for value in msgspec.structs.asdict(event).values() if isinstance(event, Event) else ():
            if isinstance(value, Blob) and not blob_path(example_run.path, value).is_file():
                missing.append(value)
    assert not missing
    assert stat.S_IMODE(os.stat(example_run.path).st_mode) == 0o700
    for log in example_run.path.glob("*.jsonl"):
        assert stat.S_IMODE(os.stat(log).st_mode) == 0o600
    some_blob = next((example_run.path / "blobs").rglob("*"))
    assert stat.S_IMODE(os.stat(some_blob).st_mode) in (0o700, 0o600)


def test_reader_never_sees_a_torn_event(tmp_path, example_run: Run) -> None:
    """Tail a log as it grows byte by byte: only whole events come out, all of them."""
    src = next(p for p in example_run.path.glob("p*.jsonl"))
    data = src.read_bytes()
    dst = tmp_path / "p1.jsonl"
    reader = LogFile(dst)
    seen = 0
    step = max(1, len(data) // 97)
    with open(dst, "wb") as f:
        for i in range(0, len(data), step):
            f.write(data[i : i + step])
            f.flush()
            seen += len(reader.poll())
    assert seen == data.count(b"\n") and not reader.problems
