"""Multi-node runs on one machine: two torchrun agents (``--nnodes 2 --node-rank 0/1``, a
c10d rendezvous on a free localhost port), 2 ranks each (gloo), where global rank 3 hits a
graph break no other rank does (tests/corpus/multinode/train.py).

Layouts, each recorded once per session:
- A, node-local disks: each agent under ``dyn-inspect run`` into its own runs dir, then
  ``dyn-inspect merge`` → one 4-rank run;
- B, one shared disk: ``torchrun --no-python dyn-inspect`` on both agents into one runs
  dir → one run; B2: ``dyn-inspect run -- torchrun`` on both agents into one runs dir.
In every one the divergence report names rank 3."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from corpus_support import CORPUS, DYN_INSPECT, marker_line
from dyn_inspect.engine.eventlog import process_log_name
from dyn_inspect.engine.launcher import JOIN_WINDOW_S, join_group_run, multinode_launch_key, torchrun_options
from dyn_inspect.inspector.merge import merge_runs
from dyn_inspect.inspector.ranks import break_ranks, divergence_report, node_statuses, rank_behaviours
from dyn_inspect.inspector.run import Run
from inductor_pool import seed

PROGRAM_DIR = CORPUS / "multinode"
TRAIN = PROGRAM_DIR / "train.py"
BREAK_LINE = marker_line(TRAIN, "BREAK:rank3_print")
TLPARSE_RANKS = Path(__file__).parents[1] / "fixtures" / "tlparse_multi_rank_logs"
_CACHE = Path(tempfile.mkdtemp(prefix="dyn-inspect-multinode-inductor-"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["DYN_INSPECT_NO_TUI"] = "1"
    env.pop("DYN_INSPECT_RUNS_DIR", None)
    env.pop("DYN_INSPECT_RUN_DIR", None)
    env["TORCHINDUCTOR_CACHE_DIR"] = seed(_CACHE)  # the layouts compile the same graphs
    env["OMP_NUM_THREADS"] = "1"
    return env


def _torchrun(node: int, port: int, job: str) -> list[str]:
    return [
        sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node-rank", str(node), "--nproc-per-node", "2",
        "--rdzv-backend", "c10d", "--rdzv-endpoint", f"localhost:{port}", "--rdzv-id", job,
    ]


def _two_agents(commands: list[list[str]]) -> None:
    """Start both "nodes" at once (the rendezvous waits for both) and wait for them."""
    procs = [subprocess.Popen(cmd, cwd=PROGRAM_DIR, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for cmd in commands]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    for p, out in zip(procs, outs, strict=True):
        assert p.returncode == 0, out[-4000:]


def _runs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())


def _digest(run: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(run.rglob("*")):
        if f.is_file():
            h.update(f.relative_to(run).as_posix().encode() + f.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="session")
def layout_a(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Node-local disks: each node's `dyn-inspect run -- torchrun` into its own runs dir."""
    tmp = tmp_path_factory.mktemp("layout-a")
    port = _free_port()
    _two_agents([
        [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(tmp / f"node{n}"), "--", *_torchrun(n, port, "job-a"), "train.py"]
        for n in (0, 1)
    ])
    return {"root": tmp, "node0": _runs(tmp / "node0")[0], "node1": _runs(tmp / "node1")[0]}


@pytest.fixture(scope="session")
def merged_a(layout_a: dict[str, Path]) -> tuple[Run, dict, dict[str, str]]:
    before = {k: _digest(layout_a[k]) for k in ("node0", "node1")}
    out = layout_a["root"] / "merged"
    p = subprocess.run([str(DYN_INSPECT), "merge", str(layout_a["node0"]), str(layout_a["node1"]), "-o", str(out), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    after = {k: _digest(layout_a[k]) for k in ("node0", "node1")}
    assert before == after  # the inputs are only read
    return Run(out), json.loads(p.stdout), before


@pytest.fixture(scope="session")
def layout_b(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One shared disk: `torchrun --no-python dyn-inspect` on both nodes into one runs dir."""
    tmp = tmp_path_factory.mktemp("layout-b")
    port = _free_port()
    _two_agents([
        [*_torchrun(n, port, "job-b"), "--no-python", str(DYN_INSPECT), "--no-tui", "--runs-dir", str(tmp / "shared"), "train.py"]
        for n in (0, 1)
    ])
    return tmp / "shared"


@pytest.fixture(scope="session")
def layout_b2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One shared disk, the other form: `dyn-inspect run -- torchrun ...` on both nodes."""
    tmp = tmp_path_factory.mktemp("layout-b2")
    port = _free_port()
    _two_agents([
        [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(tmp / "shared"), "--", *_torchrun(n, port, "job-b2"), "train.py"]
        for n in (0, 1)
    ])
    return tmp / "shared"


def _assert_four_ranks_rank3_differs(run: Run) -> None:
    model = run.model
    assert model.ranks() == [0, 1, 2, 3]
    ranked = [p for p in model.processes.values() if p.rank is not None]
    assert len(ranked) == 4 and all(p.end is not None and p.end.exception is None for p in ranked)
    # (node, global rank): two ranks per node, global ranks unique across nodes.
    by_node: dict[int, list[int]] = {}
    for p in ranked:
        assert p.start is not None and p.start.node_rank is not None and p.start.world_size == 4
        by_node.setdefault(p.start.node_rank, []).append(p.rank)  # type: ignore[arg-type]
    assert sorted(by_node) == [0, 1] and all(len(r) == 2 for r in by_node.values())
    assert len({p.start.job_id for p in ranked if p.start}) == 1
    (group,) = [g for g in model.break_groups() if (Path(g.loc.file).name, g.loc.line) == ("train.py", BREAK_LINE)]
    assert break_ranks(model, group) == [3]
    report = divergence_report(model)
    breaks = [d for d in report if d.kind == "graph_break"]
    assert len(breaks) == 1 and breaks[0].ranks == (3,)
    assert f"train.py:{BREAK_LINE}" in breaks[0].message and "rank 3" in breaks[0].message
    assert all(d.ranks == (3,) for d in report if d.kind != "compile_time")
    ref, odd = rank_behaviours(model)  # grouped: "ranks 0-2: identical; rank 3: extra graph break …"
    assert ref.describe() == "ranks 0-2: identical"
    assert odd.ranks == (3,) and odd.describe().startswith(f"rank 3: extra graph break `print(...)` can't be traced at train.py:{BREAK_LINE}")
    nodes = node_statuses(model)
    assert [n.node for n in nodes] == [0, 1] and all(n.status == "finished" and len(n.ranks) == 2 for n in nodes)
    assert model.status == "finished"


# -- layout A: node-local disks, then merge -------------------------------------------------


def test_layout_a_each_node_records_its_own_run(layout_a: dict[str, Path]) -> None:
    for n in (0, 1):
        assert len(_runs(layout_a["root"] / f"node{n}")) == 1
        run = Run(layout_a[f"node{n}"])
        assert len(run.model.ranks()) == 2 and len(node_statuses(run.model)) == 0  # one node each


def test_layout_a_merge_is_one_four_rank_run(merged_a: tuple[Run, dict, dict[str, str]]) -> None:
    run, data, _ = merged_a
    _assert_four_ranks_rank3_differs(run)
    names = sorted(p.name for p in run.path.glob("*.jsonl"))
    assert "launcher-n0.jsonl" in names and "launcher-n1.jsonl" in names  # each node's status kept
    assert all(n.startswith(("n0-", "n1-", "launcher-n")) for n in names)
    assert all(n.from_launcher for n in node_statuses(run.model))
    assert run.model.run_end is not None and run.model.run_end.exit_code == 0
    merge = data["merge"]
    assert merge["nodes"] == [0, 1] and merge["clock_offsets_s"] == {"0": 0.0, "1": 0.0}  # one machine: one clock
    assert (run.path / "merged.json").is_file()
    summary = data["summary"]
    assert summary["ranks"] == [0, 1, 2, 3]
    assert [(n["node"], n["status"]) for n in summary["nodes"]] == [(0, "finished"), (1, "finished")]
    brk = [d for d in summary["divergence"] if d["kind"] == "graph_break"]
    assert brk and brk[0]["ranks"] == [3]
    # Every blob an event names was carried over.
    for kernel in run.model.kernels:
        assert run.blob_exists(kernel.event.source)


def test_merge_text_output_names_nodes_and_rank_3(layout_a: dict[str, Path], tmp_path: Path) -> None:
    p = subprocess.run([str(DYN_INSPECT), "merge", str(layout_a["node0"]), str(layout_a["node1"]), "-o", str(tmp_path / "m")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "node 0: ranks 0, 1, clock +0.000s" in p.stdout or "node 0: ranks" in p.stdout
    assert "node 1" in p.stdout and f"train.py:{BREAK_LINE}" in p.stdout and "rank 3" in p.stdout


def test_merge_aligns_a_skewed_clock(layout_a: dict[str, Path], tmp_path: Path) -> None:
    """The node without rank 0 an hour ahead: the merge shifts its events back onto the
    clock of the node holding rank 0 (the reference, which keeps its clock)."""
    ref, other = sorted(("node0", "node1"), key=lambda k: 0 in Run(layout_a[k]).model.ranks(), reverse=True)
    skewed = tmp_path / "skewed"
    shutil.copytree(layout_a[other], skewed)
    for log in skewed.glob("*.jsonl"):
        lines = []
        for raw in log.read_text().splitlines():
            event = json.loads(raw)
            if event.get("t"):
                event["t"] += 3600.0
            if event["kind"] == "chromium":
                event["ts"] += 3600e6
            lines.append(json.dumps(event))
        log.write_text("\n".join(lines) + "\n")
    result = merge_runs([layout_a[ref], skewed], out=tmp_path / "merged")
    run = Run(result.run_dir)
    starts = [p.start for p in run.model.processes.values() if p.rank is not None and p.start]
    ref_node = next(s.node_rank for s in starts if s.rank == 0)
    other_node = 1 - ref_node  # type: ignore[operator]
    assert result.offsets[ref_node] == 0.0 and abs(result.offsets[other_node] + 3600.0) < 5.0  # type: ignore[index]
    assert max(s.t for s in starts) - min(s.t for s in starts) < 5.0
    shifted = [s for s in starts if s.node_rank == other_node]
    assert len(shifted) == 2 and all(s.clock_offset_s is not None and abs(s.clock_offset_s + 3600.0) < 5.0 for s in shifted)
    # Chromium timestamps (µs, the same skewed clock) moved with the events' times.
    def gaps(logs: list[Path]) -> list[float]:  # ts − t per chromium event (torch's own, kept)
        events = [json.loads(line) for log in logs for line in log.read_text().splitlines()]
        return sorted(round(e["ts"] / 1e6 - e["t"], 2) for e in events if e["kind"] == "chromium")

    shifted_gaps = gaps(sorted(run.path.glob(f"n{other_node}-*.jsonl")))
    assert shifted_gaps and shifted_gaps == gaps(sorted(skewed.glob("*.jsonl")))


def test_each_nodes_launcher_status_is_kept(layout_a: dict[str, Path], tmp_path: Path) -> None:
    """One node's launcher ended with exit 3 (its log says so): the merged run says which
    node, and the run as a whole exited with 3 — the other node still finished."""
    failing = tmp_path / "node1-exit3"
    shutil.copytree(layout_a["node1"], failing)
    (launcher,) = failing.glob("launcher*.jsonl")
    lines = [json.loads(raw) for raw in launcher.read_text().splitlines()]
    for event in lines:
        if event["kind"] == "run_end":
            event["exit_code"] = 3
    launcher.write_text("".join(json.dumps(e) + "\n" for e in lines))
    run = Run(merge_runs([layout_a["node0"], failing], out=tmp_path / "merged").run_dir)
    nodes = {n.ranks: n for n in node_statuses(run.model)}
    node1_ranks = tuple(sorted(Run(layout_a["node1"]).model.ranks()))
    assert nodes[node1_ranks].status == "exited with 3" and nodes[node1_ranks].from_launcher
    (other,) = [n for r, n in nodes.items() if r != node1_ranks]
    assert other.status == "finished"
    assert run.model.status == "exited" and run.model.exit_code == 3
    p = subprocess.run([str(DYN_INSPECT), "summary", str(run.path)], capture_output=True, text=True, timeout=120)
    assert f"{', '.join(map(str, node1_ranks))} — exited with 3" in p.stdout and p.stdout.startswith("dyn-inspect: exited with 3")


def test_merge_refuses_bad_input_in_one_line(layout_a: dict[str, Path], tmp_path: Path) -> None:
    def merge(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(DYN_INSPECT), "merge", *args], capture_output=True, text=True, timeout=120)

    node0, node1 = str(layout_a["node0"]), str(layout_a["node1"])
    copy = tmp_path / "node0-again"
    shutil.copytree(layout_a["node0"], copy)
    (tmp_path / "exists").mkdir()
    (tmp_path / "empty").mkdir()
    cases = {
        (node0,): "at least two runs",
        (node0, node0): "given twice",
        (node0, str(copy)): "is in both",
        (node0, node1, "-o", str(tmp_path / "exists")): "already exists",
        (node0, str(tmp_path / "empty")): "not a dyn-inspect run",
    }
    for args, words in cases.items():
        p = merge(*args, *(() if "-o" in args else ("-o", str(tmp_path / "out"))))
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert words in p.stderr and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
        assert not (tmp_path / "out").exists()


# -- layout B: one shared disk ------------------------------------------------------------


def test_layout_b_shared_disk_is_one_run(layout_b: Path) -> None:
    (path,) = _runs(layout_b)
    run = Run(path)
    _assert_four_ranks_rank3_differs(run)
    names = sorted(p.name for p in path.glob("*.jsonl"))
    # Pids of two machines may clash: each node's logs carry the node.
    assert len(names) == 4 and all(n.startswith(("n0-p", "n1-p")) for n in names)
    assert not any(n.startswith("launcher") for n in names)  # no single launcher: status from the ranks
    assert (layout_b / "latest").resolve() == path
    assert all(not n.from_launcher for n in node_statuses(run.model))


def test_layout_b2_launcher_form_on_a_shared_disk_is_one_run(layout_b2: Path) -> None:
    (path,) = _runs(layout_b2)
    run = Run(path)
    _assert_four_ranks_rank3_differs(run)
    launchers = sorted(p.name for p in path.glob("launcher*.jsonl"))
    assert len(launchers) == 2 and len(run.model.launchers) == 2
    assert all(n.from_launcher for n in node_statuses(run.model))  # each node's launcher says how it ended
    p = subprocess.run([str(DYN_INSPECT), "summary", str(path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "node 0" in p.stdout and "node 1" in p.stdout and "rank 3" in p.stdout


# -- import of several nodes' TORCH_TRACE directories ---------------------------------------


def test_import_of_several_nodes_trace_dirs_is_one_run(tmp_path: Path) -> None:
    dirs = [tmp_path / "node0", tmp_path / "node1"]
    for d in dirs:
        d.mkdir()
    for f in TLPARSE_RANKS.glob("*.log.gz"):
        rank = int(f.name.split("rank_")[1].split(".")[0])
        shutil.copy(f, dirs[rank // 2])
    p = subprocess.run([str(DYN_INSPECT), "import", *map(str, dirs), "-o", str(tmp_path / "run"), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["summary"]["ranks"] == [0, 1, 2, 3]
    assert [(n["node"], n["ranks"]) for n in data["summary"]["nodes"]] == [(0, [0, 1]), (1, [2, 3])]
    (rec,) = [d for d in data["summary"]["divergence"] if d["kind"] == "recompile"]
    assert rec["ranks"] == [1, 3]  # as the one-directory import says (tests/inspector/test_ranks.py)
    assert len(data["import"]) == 2 and not any(tmp_path.glob("dyn-inspect-import-*"))


# -- the pieces ---------------------------------------------------------------------------


def test_torchrun_options_and_the_shared_launch_key() -> None:
    cmd = ["torchrun", "--nnodes=2", "--node_rank", "1", "--nproc-per-node", "2", "--rdzv-endpoint", "h:1", "--rdzv-id", "j",
           "train.py", "--nnodes", "9"]
    assert torchrun_options(cmd) == {"nnodes": "2", "node_rank": "1", "rdzv_endpoint": "h:1", "rdzv_id": "j"}
    other_node = [w if w != "1" else "0" for w in cmd]
    assert multinode_launch_key(cmd) == multinode_launch_key(other_node) is not None  # both nodes: one key
    assert multinode_launch_key([*cmd[:-4], "--rdzv-id", "k", "train.py"]) != multinode_launch_key(cmd)
    assert multinode_launch_key(["torchrun", "--standalone", "--nproc-per-node", "2", "train.py"]) is None
    assert multinode_launch_key([sys.executable, "train.py"]) is None
    assert torchrun_options([sys.executable, "-m", "torch.distributed.run", "--nnodes", "1:4", "x.py"]) == {"nnodes": "1:4"}


def test_process_log_names_carry_the_node_only_in_multi_node_jobs() -> None:
    assert process_log_name(12, {}) == "p12.jsonl"
    assert process_log_name(12, {"GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1"}) == "p12.jsonl"
    assert process_log_name(12, {"GROUP_RANK": "3", "GROUP_WORLD_SIZE": "4"}) == "n3-p12.jsonl"


def test_a_stale_claim_starts_a_new_run(tmp_path: Path) -> None:
    """The same rendezvous id and port reused by a later job: after JOIN_WINDOW_S its
    workers start a run of their own; within it they join."""
    first, created = join_group_run(tmp_path, "k")
    again, created_again = join_group_run(tmp_path, "k")
    assert created and not created_again and again == first
    old = time.time() - JOIN_WINDOW_S - 10
    os.utime(tmp_path / ".group-k-0", (old, old), follow_symlinks=False)
    time.sleep(1.1)  # run names have one-second resolution plus a random part
    later, created_later = join_group_run(tmp_path, "k")
    assert created_later and later != first
    assert join_group_run(tmp_path, "k") == (later, False)
