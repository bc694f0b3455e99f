"""TORCH_TRACE import: logs of other machines and older torch → runs every face reads.

Expected counts are read from the logs themselves with a plain text scan (``log_counts``),
never from our own output: envelope lines of ``dynamo_start`` (one per compile),
``dynamo_graph_break_reason`` and ``recompile_reasons`` artifacts, and kernel definitions
(``name = async_compile.<backend>(``) in output-code payloads.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import pytest

from dyn_inspect.cli import main
from dyn_inspect.engine.importer import TraceImportError, import_trace
from dyn_inspect.engine.schema import Raw
from dyn_inspect.engine.tracefile import TraceStats, iter_records
from dyn_inspect.inspector.run import Run

FIXTURES = Path(__file__).parents[1] / "fixtures"
TLPARSE_RANKS = FIXTURES / "tlparse_multi_rank_logs"
SIMPLE = FIXTURES / "multi_rank" / "dedicated_log_torch_trace_rank_0.log"  # tlparse's simple.log
DYN = [sys.executable, "-m", "dyn_inspect.cli"]

_ENVELOPE = re.compile(r"^[VIWEC]\d{4} [\d:.]+ +\d+ [^\]]*\] (\{.*)$")
_KERNEL_DEF = re.compile(r"^\t\w+ = async_compile\.(?:triton|cpp_pybinding|cpp|cuda|halide|mps)\(")


@dataclass
class LogCounts:
    envelopes: int = 0
    compiles: int = 0
    captures: int = 0
    breaks: int = 0
    recompiles: int = 0
    kernels: int = 0


def _lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:  # type: ignore[operator]
        return f.read().splitlines()


def log_counts(path: Path) -> LogCounts:
    c = LogCounts()
    for line in _lines(path):
        if _KERNEL_DEF.match(line):
            c.kernels += 1
            continue
        m = _ENVELOPE.match(line)
        if not m:
            continue
        c.envelopes += 1
        body = m[1]
        if body.startswith('{"dynamo_start"'):
            c.compiles += 1
        elif body.startswith('{"compilation_metrics"'):
            c.captures += 1
        elif body.startswith('{"artifact": {"name": "dynamo_graph_break_reason"'):
            c.breaks += 1
        elif body.startswith('{"artifact": {"name": "recompile_reasons"'):
            c.recompiles += 1
    return c


def _import(tmp_path: Path, source: Path, **kwargs) -> tuple[Run, object]:
    result = import_trace(source, out=tmp_path / "run", **kwargs)
    return Run(result.run_dir), result


LOGS = [
    FIXTURES / "comp_failure.log",
    FIXTURES / "simple_corrupted_json.log",
    SIMPLE,
    FIXTURES / "h200_torch211_toy.log.gz",
    *sorted(TLPARSE_RANKS.glob("*.log.gz")),
]


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_counts_match_the_log(tmp_path: Path, path: Path) -> None:
    expected = log_counts(path)
    run, _ = _import(tmp_path, path)
    m = run.model
    assert len(m.compiles) == expected.compiles
    assert sum(1 for c in m.compiles.values() if c.capture is not None) == expected.captures
    assert m.total_break_hits() == expected.breaks
    assert len(m.recompiles) == expected.recompiles
    assert len(m.kernels) == expected.kernels
    assert m.status == "finished" and not run.problems


def test_the_fixtures_cover_every_count() -> None:
    """The parametrized test above is only as good as what the logs hold."""
    totals = [log_counts(p) for p in LOGS]
    assert sum(c.breaks for c in totals) >= 4
    assert sum(c.recompiles for c in totals) >= 20
    assert sum(c.kernels for c in totals) >= 50
    assert sum(c.compiles for c in totals) >= 30


def test_failed_compile_keeps_torchs_failure(tmp_path: Path) -> None:
    path = FIXTURES / "comp_failure.log"
    metrics = next(json.loads(_ENVELOPE.match(line)[1]) for line in _lines(path) if '{"compilation_metrics"' in line)
    run, _ = _import(tmp_path, path)
    (compile_,) = run.model.compiles.values()
    assert compile_.outcome == "failed"
    assert compile_.capture.fail_type == metrics["compilation_metrics"]["fail_type"] == "BackendCompilerFailed"
    assert "broken backend" in compile_.capture.fail_reason


def test_payload_md5_mismatch_counted_like_tlparse(tmp_path: Path) -> None:
    """tlparse reports `fail_payload_md5: 1` for this file (a line removed from a payload)."""
    path = FIXTURES / "simple_corrupted_json.log"
    run, result = _import(tmp_path, path)
    (f,) = result.files
    assert f.stats.md5_mismatch == 1
    assert f.stats.records == log_counts(path).envelopes
    assert f.stats.bad_json == f.stats.bad_prefix == 0
    # The damaged payload was a chromium event: unreadable, kept raw; the compile is whole.
    assert f.normalizer_failures == 1
    (compile_,) = run.model.compiles.values()
    assert compile_.outcome == "graph" and len(compile_.kernels) == 2


def test_corrupted_lines_are_counted_and_skipped(tmp_path: Path) -> None:
    lines = _lines(SIMPLE)
    envelopes = [i for i, line in enumerate(lines) if _ENVELOPE.match(line)]
    chromium = [i for i in envelopes if '{"chromium_event"' in lines[i] and lines[i + 1].startswith("\t")]
    victim = chromium[5]
    lines[victim] = lines[victim][: len(lines[victim]) // 2]  # envelope cut in half: bad JSON
    lines.insert(envelopes[10], "this line is not a glog record")
    lines.append(lines[envelopes[-1]][:30])  # a last line cut short by a killed writer
    damaged = tmp_path / "damaged.log"
    damaged.write_text("\n".join(lines) + "\n")

    run, result = _import(tmp_path, damaged)
    (f,) = result.files
    assert f.stats.bad_prefix == 2  # the garbage line and the cut last line
    assert f.stats.bad_json == 1
    assert f.stats.records == len(envelopes) - 1
    # The cut envelope's payload lines went with it, not onto the record before.
    assert f.stats.md5_mismatch == 0
    expected = log_counts(SIMPLE)
    assert len(run.model.compiles) == expected.compiles and len(run.model.kernels) == expected.kernels


def test_gzip_cut_short_imports_what_was_written(tmp_path: Path) -> None:
    data = (FIXTURES / "h200_torch211_toy.log.gz").read_bytes()
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(data[: len(data) // 2])
    run, result = _import(tmp_path, cut)
    (f,) = result.files
    assert f.stats.truncated
    full = log_counts(FIXTURES / "h200_torch211_toy.log.gz")
    assert 0 < f.stats.records < full.envelopes
    assert 0 < len(run.model.compiles) <= full.compiles


def test_multi_rank_directory_skips_stray_files(tmp_path: Path) -> None:
    src = FIXTURES / "multi_rank"
    run, result = _import(tmp_path, src)
    assert sorted(p.name for p in result.skipped) == ["another.log", "some_other_file.txt"]
    assert [f.path.name for f in result.files] == ["dedicated_log_torch_trace_rank_0.log", "dedicated_log_torch_trace_rank_1.log"]
    assert run.model.ranks() == [0, 1]
    pid = int(_lines(src / "dedicated_log_torch_trace_rank_0.log")[0].split()[2])
    assert {p.start.pid for p in run.model.processes.values()} == {pid}  # the writer's pid from the glog prefix
    assert all(p.header.source == "import" for p in run.model.processes.values())


def test_rank_directory_of_gzipped_logs_in_rank_order(tmp_path: Path) -> None:
    run, result = _import(tmp_path, TLPARSE_RANKS)
    assert [f.rank for f in result.files] == [0, 1, 2, 3]
    per_rank = {p.rank: p.log for p in run.model.processes.values()}
    for f in result.files:
        expected = log_counts(f.path)
        log = per_rank[f.rank]
        assert sum(1 for (lg, _cid) in run.model.compiles if lg == log) == expected.compiles
        assert sum(1 for r in run.model.recompiles if r.log == log) == expected.recompiles


def test_unknown_kinds_are_kept_raw(tmp_path: Path) -> None:
    path = FIXTURES / "h200_torch211_toy.log.gz"
    in_log = sum(1 for line in _lines(path) if re.match(r"^\S+ \S+ +\d+ \S+\] \{\"compilation_metrics_runtime\"", line))
    assert in_log == 5
    run, result = _import(tmp_path, path)
    assert result.files[0].raw_kinds["compilation_metrics_runtime"] == in_log
    raws = [e for _log, e in run.events() if isinstance(e, Raw) and e.torch_kind == "compilation_metrics_runtime"]
    assert len(raws) == in_log
    assert all("compilation_metrics_runtime" in e.metadata for e in raws)  # the record, whole


def test_older_torch_formats(tmp_path: Path) -> None:
    """Late-2024 nightlies: timers only as *_us, inductor_post_grad_graph as a kind."""
    metrics = next(json.loads(_ENVELOPE.match(line)[1]) for line in _lines(SIMPLE) if '{"compilation_metrics"' in line)
    us = metrics["compilation_metrics"]["dynamo_cumulative_compile_time_us"]
    assert "entire_frame_compile_time_s" not in metrics["compilation_metrics"]
    run, _ = _import(tmp_path, SIMPLE)
    (compile_,) = run.model.compiles.values()
    assert compile_.capture.times.total_s == pytest.approx(us / 1e6)
    assert compile_.graph("post_grad") is not None


def test_path_map_rewrites_every_path(tmp_path: Path) -> None:
    old = "/data/users/xmfan/a/pytorch"
    assert any(old in line for line in _lines(SIMPLE))
    new = str(tmp_path / "checkout")
    run, _ = _import(tmp_path, SIMPLE, path_map=[f"{old}={new}"])
    (compile_,) = run.model.compiles.values()
    assert compile_.capture.co_filename.startswith(new + "/test/inductor/")
    assert compile_.start.stack and all(not f.file.startswith(old) for f in compile_.start.stack)
    assert any(f.file.startswith(new + "/") for f in compile_.start.stack)
    # Nothing written (events nor payloads) still names the other machine's checkout.
    for written in run.path.rglob("*"):
        if written.is_file():
            assert old.encode() not in written.read_bytes(), written


def test_records_are_streamed(tmp_path: Path) -> None:
    """A 4.9 MB log is read record by record: memory stays far below the file size."""
    path = FIXTURES / "h200_torch211_toy.log.gz"
    size = sum(len(line) + 1 for line in _lines(path))
    stats = TraceStats()
    tracemalloc.start()
    try:
        for _pid, _record in iter_records(path, stats):
            pass
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert stats.records == log_counts(path).envelopes
    assert peak < size / 4, f"peak {peak} bytes for a {size}-byte log"


def test_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(TraceImportError):
        import_trace(tmp_path / "nope")
    (tmp_path / "stray.txt").write_text("hello\n")
    with pytest.raises(TraceImportError, match="holds no TORCH_TRACE log"):
        import_trace(tmp_path)
    with pytest.raises(TraceImportError, match="is not a TORCH_TRACE log"):
        import_trace(tmp_path / "stray.txt")
    cases = [
        ["import", str(tmp_path / "nope")],
        ["import", str(tmp_path)],
        ["import", str(tmp_path / "stray.txt")],
        ["import", str(SIMPLE), "-o", str(tmp_path)],  # exists
        ["import", str(SIMPLE), "--path-map", "no-equals-sign", "-o", str(tmp_path / "x")],
    ]
    for argv in cases:
        p = subprocess.run([*DYN, *argv], capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 2, argv
        assert p.stderr.startswith("dyn-inspect: ") and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr


def test_import_command_reports_and_the_run_reads_like_any_other(tmp_path: Path, capsys) -> None:
    out = tmp_path / "imported"
    assert main(["import", str(FIXTURES / "multi_rank"), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "imported 2 TORCH_TRACE files" in text
    assert "rank 0" in text and "rank 1" in text
    assert "skipped (not TORCH_TRACE logs): another.log, some_other_file.txt" in text
    assert main(["summary", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["ranks"] == [0, 1] and summary["kernels"] == 2 * log_counts(SIMPLE).kernels
    assert summary["divergence"] == []  # two copies of one log compiled the same

    runs = tmp_path / "runs"
    assert main(["import", str(FIXTURES / "simple_corrupted_json.log"), "--runs-dir", str(runs), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (f,) = data["import"]["files"]
    assert f["md5_mismatches"] == 1 and f["records"] == log_counts(FIXTURES / "simple_corrupted_json.log").envelopes
    assert Path(data["import"]["run"]).parent == runs and (runs / "latest").resolve() == Path(data["import"]["run"])
