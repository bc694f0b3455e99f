"""The report commands end to end (subprocess, like a user or CI runs them): breaks,
recompiles, kernels, graph, runs, check, diff — on corpus runs, the GPU TORCH_TRACE
fixture, and broken copies of a real run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import inspector_program
from corpus_support import CORPUS, EXAMPLES, marker_line
from dyn_inspect.inspector.run import Run
from inspector_program import Recorded

DYN = [sys.executable, "-m", "dyn_inspect.cli"]
RECOMPILES = CORPUS / "recompiles.py"


def cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "DYN_INSPECT_RUNS_DIR"}
    full_env.update(env or {})
    return subprocess.run([*DYN, *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120)


def cli_json(*args: str, **kw: object) -> dict:
    p = cli(*args, "--json", **kw)  # type: ignore[arg-type]
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    return json.loads(p.stdout)

program = inspector_program.program  # the shared fixture


# -- each command on real runs -------------------------------------------------------------


def test_breaks(breaks_run: Run, program: Recorded) -> None:
    data = cli_json("breaks", str(breaks_run.path))
    assert list(data) == ["run", "root", "unique", "total", "breaks", "ddp_splits"]
    assert (data["unique"], data["total"]) == (5, 6)
    assert [b["count"] for b in data["breaks"]] == [2, 1, 1, 1, 1]
    assert set(data["breaks"][0]) >= {"key", "type", "gb_id", "count", "loc", "user_frame", "stack", "hints", "in_library"}
    lib = cli_json("breaks", str(program.run_dir), "--root", str(program.workdir))["breaks"][0]
    assert lib["in_library"] and lib["loc"]["file"] == str(program.library)
    assert (lib["user_frame"]["file"], lib["user_frame"]["line"]) == (str(program.program), marker_line(program.program, "CALLS:lib"))
    plain = cli("breaks", str(program.run_dir), "--root", str(program.workdir), "--stacks")
    assert plain.returncode == 0 and f"program.py:{marker_line(program.program, 'CALLS:lib')}" in plain.stdout
    assert "\x1b[" not in plain.stdout  # piped: no colour codes


def test_recompiles(limit_run: Run, recompiles_run: Run) -> None:
    data = cli_json("recompiles", str(limit_run.path))
    [frame] = data["frames"]
    assert (frame["function"], frame["recompile_limit"], frame["limit_reached"], frame["recompiles"]) == ("limited", 2, True, 2)
    assert [e["limit_reached"] for e in frame["timeline"]] == [False, False, True]
    # torch compiled the first two calls; the third, refused by the limit, ran eagerly:
    # a limit hit, not a compile, in the frame's count and the summary's
    assert frame["compiles"] == 2
    summary = cli_json("summary", str(limit_run.path))
    assert (summary["compiles"], summary["graphs"], len(summary["recompile_limit_hit"])) == (2, 2, 1)
    assert "(2 compiles, 2 graphs, 1 recompile limit hit)" in cli("summary", str(limit_run.path)).stdout
    assert frame["timeline"][1]["failures"][0]["kind"] == "dtype"
    plain = cli("recompiles", str(recompiles_run.path))
    assert plain.returncode == 0
    assert "torch._dynamo.mark_dynamic(x, 0)" in plain.stdout and "[dtype]" in plain.stdout
    assert "RECOMPILE LIMIT reached" in cli("recompiles", str(limit_run.path)).stdout


def test_kernels(recompiles_run: Run, program: Recorded) -> None:
    line = marker_line(RECOMPILES, "RECOMPILE:shape") + 1
    data = cli_json("kernels", str(recompiles_run.path), "--at", f"recompiles.py:{line}")
    assert [k["compile_id"] for k in data["kernels"]] == ["0/0", "0/1"]
    assert all(any(s["line"] == line for s in k["source_lines"]) for k in data["kernels"])
    cov = cli_json("kernels", str(program.run_dir))["vectorization"]
    assert (cov["cpp_kernels"], cov["vectorized"], cov["share"]) == (2, 1, 0.5)
    plain = cli("kernels", str(program.run_dir))
    assert "vectorization: 1/2 (50%)" in plain.stdout
    bad = cli("kernels", str(program.run_dir), "--at", "nowhere")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "FILE:LINE" in bad.stderr


def test_graph_table_json_dot_diff(recompiles_run: Run) -> None:
    data = cli_json("graph", str(recompiles_run.path), "0/0")
    assert data["stage"] == "dynamo" and data["op_histogram"] == {"operator.mul": 1, "Tensor.sum": 1}
    assert {n["name"]: n["shape"] for n in data["nodes"]}["mul"] == "[4, 8]"
    aten = cli_json("graph", str(recompiles_run.path), "0/0", "--stage", "post_grad")
    assert aten["op_histogram"] == {"aten.mul": 1, "aten.sum": 1}
    dot = cli("graph", str(recompiles_run.path), "0/0", "--dot")
    assert dot.returncode == 0 and dot.stdout.startswith("digraph") and '"mul" -> "sum_1";' in dot.stdout
    diff = cli_json("graph", str(recompiles_run.path), "0/0", "--diff", "0/1")
    assert diff["ops_added"] == {} and diff["ops_removed"] == {} and any(c["node"] == "mul" for c in diff["changed"])
    missing = cli("graph", str(recompiles_run.path), "0/0", "--stage", "aot_bw")
    assert missing.returncode == 2 and "no aot_bw graph" in missing.stderr and missing.stderr.count("\n") == 1
    unknown = cli("graph", str(recompiles_run.path), "9/9")
    assert unknown.returncode == 2 and "no compile 9/9" in unknown.stderr


def test_graph_svg_without_graphviz_writes_dot_and_a_hint(recompiles_run: Run, tmp_path: Path) -> None:
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    out = tmp_path / "g.svg"
    p = cli("graph", str(recompiles_run.path), "0/0", "--svg", str(out), env={"PATH": str(empty_path)})
    assert p.returncode == 0 and not out.exists()
    assert "Graphviz" in p.stderr and "dot -Tsvg" in p.stderr and p.stderr.count("\n") == 1
    assert (tmp_path / "g.dot").read_text().startswith("digraph")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz not installed")
def test_graph_svg_with_graphviz(recompiles_run: Run, tmp_path: Path) -> None:
    out = tmp_path / "g.svg"
    p = cli("graph", str(recompiles_run.path), "0/0", "--svg", str(out))
    assert p.returncode == 0 and "<svg" in out.read_text()


def test_runs_lists_every_run_and_survives_an_unreadable_one(breaks_run: Run, limit_run: Run, tmp_path: Path) -> None:
    root = tmp_path / "runs"
    shutil.copytree(breaks_run.path, root / "20200101-000000-aaaaaa")
    shutil.copytree(limit_run.path, root / "20200102-000000-bbbbbb")
    newer = root / "20200103-000000-cccccc"
    shutil.copytree(limit_run.path, newer)
    _rewrite_header_schema(newer, 99)
    data = cli_json("runs", "--runs-dir", str(root))
    rows = {r["id"]: r for r in data["runs"]}
    assert list(rows) == ["20200101-000000-aaaaaa", "20200102-000000-bbbbbb", "20200103-000000-cccccc"]
    assert rows["20200101-000000-aaaaaa"]["graph_breaks"] == {"unique": 5, "total": 6}
    assert rows["20200102-000000-bbbbbb"]["recompile_limit_hits"] == 1 and rows["20200102-000000-bbbbbb"]["status"] == "finished"
    assert rows["20200103-000000-cccccc"]["status"] == "unreadable" and "newer dyn-inspect" in rows["20200103-000000-cccccc"]["error"]
    plain = cli("runs", "--runs-dir", str(root))
    assert plain.returncode == 0 and "breaks.py" in plain.stdout and "unreadable" in plain.stdout


def test_check_gate_exit_codes(example_run: Run, breaks_run: Run) -> None:
    ok = cli("check", str(example_run.path), "--max-graph-breaks", "3", "--max-recompiles", "5")
    assert ok.returncode == 0 and "check passed" in ok.stdout
    over = cli("check", str(example_run.path), "--max-graph-breaks", "2", "--max-recompiles", "4")
    assert over.returncode == 1
    assert "3 unique sites > 2" in over.stdout and "5 > 4" in over.stdout and "train.py:27" in over.stdout
    data = json.loads(cli("check", str(example_run.path), "--max-recompiles", "0", "--json").stdout)
    assert data["ok"] is False and [f["check"] for f in data["failures"]] == ["max_recompiles"]
    assert len(data["failures"][0]["items"]) == 5
    assert cli("check", str(example_run.path), "--baseline", str(example_run.path)).returncode == 0
    new = cli("check", str(example_run.path), "--baseline", str(breaks_run.path), "--json")
    assert new.returncode == 1
    checks = {f["check"]: f for f in json.loads(new.stdout)["failures"]}
    assert {(i["file"], i["type"]) for i in checks["new_graph_breaks"]["items"]} == {
        ("model_utils.py", "Failed to trace builtin operator"), ("train.py", "Data-dependent branching"), ("train.py", "Failed to trace builtin operator")
    }
    assert checks["new_recompiles"]["actual"] == 5
    # Fewer breaks than the baseline is fine: nothing new.
    assert cli("check", str(breaks_run.path), "--baseline", str(breaks_run.path), "--max-graph-breaks", "5").returncode == 0


def test_diff(recompiles_run: Run, limit_run: Run) -> None:
    data = cli_json("diff", str(recompiles_run.path), str(limit_run.path))
    assert list(data) == ["a", "b", "graph_breaks", "recompiles", "kernels", "compile_time"]
    assert {x["kind"] for x in data["recompiles"]["added"]} == {"dtype", "recompile_limit"}
    assert {x["function"] for x in data["recompiles"]["removed"]} == {"by_shape", "by_dtype"}
    plain = cli("diff", str(recompiles_run.path), str(limit_run.path))
    assert plain.returncode == 0 and "recompiles: +2 -2" in plain.stdout and "compile time:" in plain.stdout


def test_latest_run_in_the_current_directory_is_the_default(recompiles_run: Run, tmp_path: Path) -> None:
    runs = tmp_path / ".dyn-inspect" / "runs"
    shutil.copytree(recompiles_run.path, runs / recompiles_run.path.name)
    for command in (["breaks"], ["recompiles"], ["kernels"], ["graph", "0/0"], ["check"], ["runs"]):
        p = cli(*command, "--json", cwd=tmp_path)
        assert p.returncode == 0, (command, p.stderr)
        json.loads(p.stdout)
    assert cli_json("recompiles", cwd=tmp_path)["recompiles"] == 2


def test_every_command_on_the_gpu_trace(gpu_trace_run: Run) -> None:
    path = str(gpu_trace_run.path)
    assert cli_json("breaks", path)["unique"] == len(gpu_trace_run.model.breaks)
    frames = cli_json("recompiles", path)["frames"]
    assert len(frames) == 3 and all(f["timeline"][1]["failures"][0]["kind"] == "size" for f in frames)
    kernels = cli_json("kernels", path)
    assert kernels["vectorization"]["share"] is None and {k["backend"] for k in kernels["kernels"]} == {"triton"}
    assert cli_json("graph", path, "0/0", "--stage", "aot_bw")["nodes"]
    assert cli("check", path, "--max-recompiles", "3").returncode == 0
    assert cli_json("diff", path, path)["recompiles"]["added"] == []


# -- bad input -----------------------------------------------------------------------------

COMMANDS = [["breaks"], ["recompiles"], ["kernels"], ["graph", "RUN", "0/0"], ["check"], ["diff", "RUN", "RUN"]]


def _argv(command: list[str], run: Path) -> list[str]:
    if "RUN" in command:
        return [str(run) if a == "RUN" else a for a in command]
    return [*command, str(run)]


def _rewrite_header_schema(run: Path, schema: int) -> None:
    for log in run.glob("*.jsonl"):
        lines = log.read_text().splitlines(keepends=True)
        header = json.loads(lines[0])
        header["schema"] = schema
        lines[0] = json.dumps(header) + "\n"
        log.write_text("".join(lines))


def _process_log(run: Path) -> Path:
    return next(run.glob("p*.jsonl"))


def _broken(kind: str, src: Run, tmp_path: Path) -> Path:
    run = tmp_path / kind
    if kind == "not_a_run":
        run.mkdir()
        (run / "notes.txt").write_text("hello")
        return run
    if kind == "empty_run":
        (run / "blobs").mkdir(parents=True)
        return run
    if kind == "empty_logs":
        (run / "blobs").mkdir(parents=True)
        (run / "p1.jsonl").write_text("")
        return run
    shutil.copytree(src.path, run)
    log = _process_log(run)
    lines = log.read_bytes().splitlines(keepends=True)
    if kind == "truncated_last_line":
        lines[-1] = lines[-1][: len(lines[-1]) // 2]
    elif kind == "corrupted_middle_line":
        # A timing event in the middle: what it held is not needed for the answers.
        middle = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith(b'{"kind":"chromium"'))
        lines[middle] = b'{"kind": "chromium", "name": \x00 garbage\n'
    elif kind == "newer_schema":
        log.write_bytes(b"".join(lines))
        _rewrite_header_schema(run, 99)
        return run
    elif kind == "unknown_kind":
        lines.insert(2, b'{"kind":"quantum_flux","t":1.0,"cid":"0/0","flux":42}\n')
    log.write_bytes(b"".join(lines))
    return run


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("kind", ["not_a_run", "empty_run", "empty_logs", "newer_schema"])
def test_unreadable_input_is_one_line_and_exit_2(recompiles_run: Run, tmp_path: Path, kind: str, command: list[str]) -> None:
    run = _broken(kind, recompiles_run, tmp_path)
    p = cli(*_argv(command, run))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and p.stderr.startswith("dyn-inspect: ") and p.stderr.count("\n") == 1
    assert p.stdout == ""
    expected = {"not_a_run": "is not a dyn-inspect run", "empty_run": "holds no event logs", "empty_logs": "holds no events", "newer_schema": "newer dyn-inspect"}
    assert expected[kind] in p.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("kind", ["truncated_last_line", "corrupted_middle_line", "unknown_kind"])
def test_damaged_run_answers_what_is_readable_with_one_warning(recompiles_run: Run, tmp_path: Path, kind: str, command: list[str]) -> None:
    run = _broken(kind, recompiles_run, tmp_path)
    p = cli(*_argv(command, run), "--json")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    warnings = p.stderr.splitlines()
    assert len(warnings) == (2 if command[0] == "diff" else 1)  # diff reads the run twice
    assert all(w.startswith("dyn-inspect: warning: ") for w in warnings)
    words = {"truncated_last_line": "truncated last line", "corrupted_middle_line": "corrupted line skipped", "unknown_kind": "'quantum_flux'"}
    assert words[kind] in warnings[0]
    json.loads(p.stdout)  # the answer is still whole JSON


def test_damaged_run_still_reports_its_recompiles(recompiles_run: Run, tmp_path: Path) -> None:
    run = _broken("corrupted_middle_line", recompiles_run, tmp_path)
    assert cli_json("recompiles", str(run))["recompiles"] == 2


def test_missing_run_argument_is_one_line(tmp_path: Path) -> None:
    for command in (["breaks"], ["check"], ["diff", "a", "b"], ["graph", "0/0"]):
        p = cli(*command, cwd=tmp_path)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run the CLI with stdout on a pseudo-terminal; returns what it wrote."""
    import pty

    leader, follower = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "DYN_INSPECT_RUNS_DIR")}
    full_env.update(env)
    proc = subprocess.Popen([*DYN, *args], stdout=follower, stderr=subprocess.PIPE, env=full_env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_colour_on_a_terminal_and_none_with_no_color(breaks_run: Run) -> None:
    import re

    colour = re.compile(r"\x1b\[[0-9;]*3[0-9]m")  # any foreground colour (the headers are cyan)
    assert colour.search(_on_a_terminal(["breaks", str(breaks_run.path)], {"TERM": "xterm-256color"}))
    plain = _on_a_terminal(["breaks", str(breaks_run.path)], {"TERM": "xterm-256color", "NO_COLOR": "1"})
    assert "breaks.py" in plain and not colour.search(plain)


def test_recompiles_and_summary_lead_with_the_root_cause(example_run: Run) -> None:
    """The example's five recompiles: one root cause with one fix where `x` is made, said
    before the frame-by-frame timelines; automatic dynamic is named where it happened; the
    summary's frames it explains carry no mark_dynamic of their own locals."""
    made = next(n for n, t in enumerate((EXAMPLES / "train.py").read_text().splitlines(), start=1) if "x, y = torch.randn(bs, 32" in t)
    plain = cli("recompiles", str(example_run.path)).stdout
    first = plain.splitlines()[1]
    assert first.startswith("root cause: `x.shape[0]` takes 16, 32 → 5 recompiles — fix: torch._dynamo.mark_dynamic(x, 0) after ")
    assert f"train.py:{made} (where `x` is made)" in first
    assert "then: torch made `x.shape[0]` dynamic (automatic dynamic)" in plain
    summary = cli("summary", str(example_run.path)).stdout
    assert "root cause: `x.shape[0]` takes 16, 32 → 5 recompiles" in summary
    assert "fix: torch._dynamo.mark_dynamic(x, 0)  after " in summary and f"train.py:{made} (where `x` is made)" in summary
    assert "mark_dynamic(h, 0)" not in summary and "___stack0, 0" not in summary
