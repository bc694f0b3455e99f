"""Ranks: torchrun (gloo on CPU, 2 ranks) recorded into one run, per-rank views, and the
divergence report — on the real corpus run of tests/corpus/ranks/train.py, where rank 1
takes a branch with a print() (a graph break) and feeds a second batch size (a recompile)
that rank 0 never does; and on a real multi-rank TORCH_TRACE directory (tlparse's)."""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from corpus_support import CORPUS, DYN_INSPECT, marker_line
from dyn_inspect.cli import main
from dyn_inspect.cli.common import parse_ranks
from dyn_inspect.engine.importer import import_trace
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.ranks import (
    COMPILE_TIME_MIN_GAP_S,
    COMPILE_TIME_RATIO,
    Divergence,
    break_ranks,
    divergence_report,
    filter_rank,
    format_ranks,
    logs_by_rank,
    select_rank,
)
from dyn_inspect.inspector.reports import summary_dict
from dyn_inspect.inspector.run import Run
from inductor_pool import seed

RANKS_DIR = CORPUS / "ranks"
TRAIN = RANKS_DIR / "train.py"
TLPARSE_RANKS = Path(__file__).parents[1] / "fixtures" / "tlparse_multi_rank_logs"
BREAK_LINE = marker_line(TRAIN, "BREAK:rank1_print")


def _of_kind(report: list[Divergence], kind: str) -> list[Divergence]:
    return [d for d in report if d.kind == kind]


# -- torchrun, gloo, 2 ranks (the corpus run) -------------------------------------------


def test_one_log_per_rank_tagged_from_the_environment(ranks_run: Run) -> None:
    procs = list(ranks_run.model.processes.values())
    ranked = sorted((p for p in procs if p.rank is not None), key=lambda p: p.rank)
    assert [(p.rank, p.start.local_rank, p.start.world_size) for p in ranked] == [(0, 0, 2), (1, 1, 2)]
    assert len({p.pid for p in ranked}) == 2
    assert all(p.end is not None and p.end.exception is None for p in ranked)
    # The torchrun agent (the launcher's direct child) logs too, without a rank.
    assert [p.rank for p in procs if p not in ranked] == [None]
    assert logs_by_rank(ranks_run.model) == {0: [ranked[0].log], 1: [ranked[1].log]}
    assert ranks_run.model.status == "finished"


def test_the_break_is_rank_1s_only(ranks_run: Run) -> None:
    (group,) = [g for g in ranks_run.model.break_groups() if (g.loc.file, g.loc.line) == (str(TRAIN), BREAK_LINE)]
    assert break_ranks(ranks_run.model, group) == [1]
    rank0, rank1 = filter_rank(ranks_run, 0), filter_rank(ranks_run, 1)
    assert rank0.model.breaks == {} and rank0.model.recompiles == []
    assert [(g.loc.line, g.count) for g in rank1.model.break_groups()] == [(BREAK_LINE, group.count)]
    assert {p.rank for p in rank1.model.processes.values()} == {1}
    # The views split the run: every compile and kernel is in exactly one of them.
    assert len(rank0.model.compiles) + len(rank1.model.compiles) == len(ranks_run.model.compiles)
    assert len(rank0.model.kernels) + len(rank1.model.kernels) == len(ranks_run.model.kernels)
    assert rank0.model.run_start is not None  # the launcher's log belongs to every view


def test_divergence_report_names_rank_1(ranks_run: Run) -> None:
    report = divergence_report(ranks_run.model)
    (brk,) = _of_kind(report, "graph_break")
    assert brk.ranks == (1,) and f"train.py:{BREAK_LINE}" in brk.message
    assert brk.compile_id == "0/0"

    step = [d for d in _of_kind(report, "recompile") if d.message.startswith("step (")]
    assert len(step) == 1 and step[0].ranks == (1,)
    assert "rank 0: 0×; rank 1: 1×" in step[0].message

    # Compile 0/0 is `step` on both ranks: rank 0 captured it whole, rank 1 up to the print.
    (graph,) = [d for d in _of_kind(report, "graph") if d.compile_id == "0/0"]
    assert graph.ranks == (1,) and "graph_break" in graph.message
    (kernels,) = [d for d in _of_kind(report, "kernels") if d.compile_id == "0/0"]
    assert kernels.ranks == (1,)
    by_rank = {r: filter_rank(ranks_run, r) for r in (0, 1)}
    names = {r: {k.name for k in v.model.kernels if k.compile.cid == "0/0"} for r, v in by_rank.items()}
    assert names[0] != names[1]
    assert all(n in kernels.message for n in names[1] - names[0])

    (ids,) = _of_kind(report, "compile_ids")
    only_rank1 = sorted({cid for (_log, cid) in by_rank[1].model.compiles} - {cid for (_log, cid) in by_rank[0].model.compiles})
    assert ids.ranks == (1,) and only_rank1 and all(cid in ids.message for cid in only_rank1)
    # Rank 1 compiled strictly more; if the spread is flagged, it names rank 1.
    assert all(d.ranks == (1,) for d in _of_kind(report, "compile_time"))
    assert [d.kind for d in report][:2] == ["graph_break", "recompile"]  # the likeliest cause first


def test_summary_includes_the_divergence(ranks_run: Run, capsys) -> None:
    data = summary_dict(ranks_run)
    assert data["ranks"] == [0, 1]
    assert {d["kind"] for d in data["divergence"]} >= {"graph_break", "recompile", "graph", "kernels", "compile_ids"}
    assert all(d["ranks"] == [1] for d in data["divergence"])
    (brk,) = [b for b in data["breaks"] if b["loc"]["line"] == BREAK_LINE]
    assert brk["ranks"] == [1]
    assert main(["summary", str(ranks_run.path)]) == 0
    text = capsys.readouterr().out
    # Grouped by behaviour: the reference group, then how rank 1 differs — on one line.
    assert "ranks: 0, 1 — 2 behaviours" in text and "    rank 0: identical" in text
    (line,) = [ln for ln in text.splitlines() if ln.startswith("    ! rank 1: ")]
    assert f"extra graph break `print(...)` can't be traced at train.py:{BREAK_LINE}" in line
    assert "step (train.py:" in line and "recompiled 1× (the others 0×)" in line and "extra compile id" in line
    assert f"train.py:{BREAK_LINE}" in text and "(rank 1)" in text
    (recompiled,) = [ln for ln in text.splitlines() if ln.startswith("    step (") and " compiles" in ln]
    assert " compiles " in recompiled and recompiled.endswith("  (rank 1)"), recompiled  # only rank 1 recompiled
    groups = data["rank_groups"]
    assert [(g["ranks"], g["reference"]) for g in groups] == [([0], True), ([1], False)]
    assert groups[1]["text"] == line.removeprefix("    ! ")


def test_summary_rank_option(ranks_run: Run, capsys) -> None:
    assert main(["summary", str(ranks_run.path), "--rank", "0", "--json"]) == 0
    rank0 = json.loads(capsys.readouterr().out)
    assert rank0["ranks"] == [0] and rank0["graph_breaks"]["total"] == 0 and rank0["divergence"] == []
    assert main(["summary", str(ranks_run.path), "--rank", "1", "--json"]) == 0
    rank1 = json.loads(capsys.readouterr().out)
    assert rank1["graph_breaks"]["unique"] == 1 and rank1["recompiles"] >= 1
    assert main(["summary", str(ranks_run.path), "--rank", "5"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"dyn-inspect: no rank 5 in {ranks_run.path.name}: it has ranks 0, 1"
    with pytest.raises(InspectorError):
        select_rank(ranks_run, 2)
    assert select_rank(ranks_run, None) is ranks_run
    # Ranges: `0-1` is both ranks (the whole run's counts); a missing rank in a list is named.
    assert main(["summary", str(ranks_run.path), "--rank", "0-1", "--json"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert both["ranks"] == [0, 1] and both["graph_breaks"] == summary_dict(ranks_run)["graph_breaks"]
    assert main(["summary", str(ranks_run.path), "--rank", "0,5-6"]) == 2
    assert capsys.readouterr().err.strip() == f"dyn-inspect: no ranks 5, 6 in {ranks_run.path.name}: it has ranks 0, 1"


def test_rank_ranges_and_their_text() -> None:
    assert parse_ranks("3") == (3,) and parse_ranks("0-3,7") == (0, 1, 2, 3, 7) and parse_ranks("2–4, 1") == (1, 2, 3, 4)
    for bad in ("x", "3-1", "-2", "1,,2"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_ranks(bad)
    assert format_ranks([0, 1]) == "ranks 0, 1" and format_ranks([3]) == "rank 3" and format_ranks(range(4)) == "ranks 0-3"
    assert format_ranks([*range(63), *range(64, 128)]) == "ranks 0-62, 64-127"
    assert format_ranks([0, 1, 3, 4, 5, 9]) == "ranks 0, 1, 3-5, 9"


# -- imported rank directory (tlparse's multi_rank_logs) --------------------------------


def _log_text(path: Path) -> str:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read()


def test_divergence_of_an_imported_rank_directory(tmp_path: Path) -> None:
    result = import_trace(TLPARSE_RANKS, out=tmp_path / "run")
    run = Run(result.run_dir)
    assert run.model.ranks() == [0, 1, 2, 3]
    report = divergence_report(run.model)

    # Recompiles per rank, from the logs: rank 1 14, rank 3 6, ranks 0 and 2 none.
    recompiles = {}
    total_s = {}
    for f in sorted(TLPARSE_RANKS.glob("*.log.gz")):
        rank = int(re.search(r"rank_(\d+)", f.name)[1])
        text = _log_text(f)
        recompiles[rank] = text.count('{"artifact": {"name": "recompile_reasons"')
        total_s[rank] = sum(int(us) for us in re.findall(r'"compilation_metrics": \{.*?"dynamo_cumulative_compile_time_us": (\d+)', text)) / 1e6
    assert recompiles == {0: 0, 1: 14, 2: 0, 3: 6}
    (rec,) = _of_kind(report, "recompile")
    assert rec.ranks == (1, 3) and "rank 1: 14×" in rec.message and "rank 3: 6×" in rec.message

    # Compile time: flagged ranks computed from the logs' own timers with the same rule.
    fastest = min(total_s.values())
    slow = tuple(r for r, t in sorted(total_s.items()) if t - fastest > COMPILE_TIME_MIN_GAP_S and t / fastest > COMPILE_TIME_RATIO)
    (spread,) = _of_kind(report, "compile_time")
    assert spread.ranks == slow and slow

    # Ranks 0 and 2 failed their only compile (0/0) where 1 and 3 captured a graph.
    (graph,) = [d for d in _of_kind(report, "graph") if d.compile_id == "0/0"]
    assert graph.ranks == (1, 3) and "failed" in graph.message


# -- the other ways to start ranks ------------------------------------------------------


_SHARED_CACHE = Path(tempfile.mkdtemp(prefix="dyn-inspect-ranks-inductor-"))


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["DYN_INSPECT_NO_TUI"] = "1"
    env.pop("DYN_INSPECT_RUNS_DIR", None)
    env.pop("DYN_INSPECT_RUN_DIR", None)
    # One Inductor cache for the launch-form tests: they compile the same graphs, so after
    # the first one the C++ kernels come from the FX cache (still the real Inductor path).
    env["TORCHINDUCTOR_CACHE_DIR"] = seed(_SHARED_CACHE)
    return env


def _only_run(runs: Path) -> Run:
    found = [p for p in runs.iterdir() if p.is_dir() and not p.is_symlink()]
    assert len(found) == 1, found
    return Run(found[0])


def _assert_two_ranks_rank1_breaks(run: Run) -> None:
    ranked = {p.rank: p for p in run.model.processes.values() if p.rank is not None}
    assert sorted(ranked) == [0, 1]
    (group,) = run.model.break_groups()
    assert (Path(group.loc.file).name, group.loc.line) == ("train.py", BREAK_LINE)
    assert break_ranks(run.model, group) == [1]
    assert _of_kind(divergence_report(run.model), "graph_break")[0].ranks == (1,)


TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]


@pytest.mark.corpus  # records a real compile inline
def test_torchrun_no_python_dyn_inspect_lands_in_one_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    cmd = [*TORCHRUN, "--no-python", str(DYN_INSPECT), "--no-tui", "--runs-dir", str(runs), "train.py"]
    p = subprocess.run(cmd, cwd=RANKS_DIR, env=_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    run = _only_run(runs)
    _assert_two_ranks_rank1_breaks(run)
    assert (runs / "latest").resolve() == run.path
    assert not (run.path / "launcher.jsonl").exists()  # no single launcher: status from the ranks
    assert run.model.status == "finished"
    assert p.stderr.count("dyn-inspect: finished") == 1  # one summary (rank 0's), not one per rank


@pytest.mark.corpus  # records a real compile inline
def test_torchrun_module_form_under_dyn_inspect(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    cmd = [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(runs), "--", *TORCHRUN, "-m", "train"]
    p = subprocess.run(cmd, cwd=RANKS_DIR, env=_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    run = _only_run(runs)
    _assert_two_ranks_rank1_breaks(run)
    assert run.model.run_start is not None and run.model.run_start.command[-2:] == ["-m", "train"]


@pytest.mark.corpus  # records a real compile inline
def test_nested_dyn_inspect_joins_the_enclosing_run(tmp_path: Path) -> None:
    """`dyn-inspect run -- torchrun --no-python dyn-inspect train.py`: one run, the outer one."""
    runs = tmp_path / "runs"
    inner = [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(tmp_path / "inner-runs"), "train.py"]
    cmd = [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(runs), "--", *TORCHRUN, "--no-python", *inner]
    p = subprocess.run(cmd, cwd=RANKS_DIR, env=_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    run = _only_run(runs)
    _assert_two_ranks_rank1_breaks(run)
    assert not (tmp_path / "inner-runs").exists()
    assert run.model.run_end is not None and run.model.run_end.exit_code == 0


@pytest.mark.corpus  # records a real compile inline
def test_a_failing_rank_ends_the_joined_run_as_crashed(tmp_path: Path) -> None:
    """Rank 1 raises; torchrun stops rank 0 (SIGTERM) while it waits in all_reduce. Rank 0
    writes no end of its own then: its dyn-inspect launcher does, so the run is not left
    "running" forever."""
    runs = tmp_path / "runs"
    cmd = [*TORCHRUN, "--no-python", str(DYN_INSPECT), "--no-tui", "--runs-dir", str(runs), "train.py", "--fail-rank", "1"]
    p = subprocess.run(cmd, cwd=RANKS_DIR, env=_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert p.returncode != 0
    run = _only_run(runs)
    ranked = {proc.rank: proc for proc in run.model.processes.values() if proc.rank is not None}
    assert sorted(ranked) == [0, 1]
    assert ranked[1].end.exception.type == "RuntimeError" and "fails on purpose" in ranked[1].end.exception.message
    assert ranked[0].end is not None
    assert ranked[0].end.exception is not None or (ranked[0].end.exit_code or 0) > 128
    assert run.model.status == "crashed"


def test_cli_commands_take_rank_and_check_reports_divergence(ranks_run: Run) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(DYN_INSPECT), *args], capture_output=True, text=True)

    only1 = json.loads(cli("breaks", str(ranks_run.path), "--rank", "1", "--json").stdout)
    assert [(Path(b["loc"]["file"]).name, b["loc"]["line"]) for b in only1["breaks"]] == [("train.py", BREAK_LINE)]
    assert json.loads(cli("breaks", str(ranks_run.path), "--rank", "0", "--json").stdout)["breaks"] == []
    assert json.loads(cli("recompiles", str(ranks_run.path), "--rank", "0", "--json").stdout) != \
        json.loads(cli("recompiles", str(ranks_run.path), "--rank", "1", "--json").stdout)
    gate = cli("check", str(ranks_run.path), "--max-divergences", "0", "--json")
    assert gate.returncode == 1
    data = json.loads(gate.stdout)
    assert "graph_break" in {d["kind"] for d in data["divergence"]}
    assert all(d["ranks"] == [1] for d in data["divergence"])
    assert cli("check", str(ranks_run.path)).returncode == 0  # reported, not failing, without a limit
    bad = cli("kernels", str(ranks_run.path), "--rank", "7")
    assert bad.returncode == 2 and bad.stderr.startswith("dyn-inspect: no rank 7")
