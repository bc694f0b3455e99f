"""A run whose compiles captured no graph says so first, with torch's reason (issue 28 #12)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_support import CORPUS, marker_line
from dyn_inspect.inspector.analysis.no_graph import DDP_WRAPS_TORCH_MODULE, no_graph
from dyn_inspect.inspector.locations import file_line
from dyn_inspect.inspector.reports import summary
from dyn_inspect.inspector.run import Run

NO_GRAPH = CORPUS / "no_graph.py"


@pytest.mark.corpus
def test_a_run_that_compiled_no_graph_says_so_first(no_graph_run: Run) -> None:
    found = no_graph(no_graph_run.model)
    assert found is not None and (found.compiles, found.frames) == (1, 1)
    line = marker_line(NO_GRAPH, "BREAK:only_print")
    assert found.reasons == [f"graph break: `print(...)` can't be traced (GB0059) at {file_line(str(NO_GRAPH), line)}"]
    s = summary(no_graph_run)
    assert (s.graphs, s.kernels) == (0, 0) and s.no_graph == found.headline
    assert s.no_graph.startswith("no graph was compiled: 1 compile of 1 frame captured nothing — graph break:")
    text = subprocess.run(
        [sys.executable, "-m", "dyn_inspect.cli", "summary", str(no_graph_run.path)], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert text.splitlines()[0] == f"dyn-inspect: {found.headline}"


@pytest.mark.corpus
def test_a_run_with_a_graph_has_no_such_headline(error_break_run: Run) -> None:
    # error_break.py captures `x * 2` before its break: one graph, no headline.
    assert no_graph(error_break_run.model) is None and summary(error_break_run).no_graph is None
    text = subprocess.run(
        [sys.executable, "-m", "dyn_inspect.cli", "summary", str(error_break_run.path)], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert text.startswith("dyn-inspect: finished")


@pytest.mark.corpus
async def test_the_tui_overview_says_it_before_the_counts(no_graph_run: Run) -> None:
    import io

    from rich.console import Console
    from textual.widgets import Static

    from dyn_inspect.tui.app import InspectorApp

    headline = summary(no_graph_run).no_graph
    assert headline is not None
    app = InspectorApp(no_graph_run.path, run=no_graph_run, clock=lambda: 0.0)
    async with app.run_test(size=(200, 45)) as pilot:
        await pilot.pause(0.2)
        console = Console(file=io.StringIO(), width=400, color_system=None)
        console.print(app.query_one("#overview-counts", Static).content)
        shown = " ".join(console.file.getvalue().split())  # type: ignore[attr-defined]
    assert shown.startswith(" ".join(headline.split())), shown[:300]
    assert shown.index("captured nothing") < shown.index("frames")


DDP_PROGRAM = '''
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(6)])
step = torch.compile(DDP(model, bucket_cap_mb=0.25))
step(torch.randn(8, 256)).sum().backward()
'''


@pytest.mark.corpus
def test_a_program_that_died_compiling_says_so_first(tmp_path) -> None:
    """``torch.compile(DDP(model))`` on two gloo ranks, with buckets DDPOptimizer refuses:
    each rank dies with torch's AssertionError while the compile is being set up, and torch
    records no failed compile for it. The headline said "the frame held no tensor
    operations to capture"; it now names the exception first, once for both ranks."""

    from corpus_support import DYN_INSPECT

    (tmp_path / "ddp.py").write_text(DDP_PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYN_INSPECT_")}
    proc = subprocess.run(
        [str(DYN_INSPECT), "run", "--no-tui", "--runs-dir", str(tmp_path / "runs"), sys.executable, "-m", "torch.distributed.run",
         "--standalone", "--nproc-per-node", "2", "ddp.py"],
        cwd=tmp_path, env={**env, "DYN_INSPECT_NO_TUI": "1"}, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    run = Run(next(p for p in (tmp_path / "runs").iterdir() if p.is_dir() and not p.is_symlink()))
    ended = [p.end.exception for p in run.model.processes.values() if p.end is not None and p.end.exception is not None]
    raised = [e for e in ended if e.type == "AssertionError"]
    assert len(raised) == 2  # both ranks (and torchrun's own ChildFailedError, not raised compiling)
    found = no_graph(run.model)
    assert found is not None
    first = f"the program raised AssertionError while compiling at {file_line(str(tmp_path / 'ddp.py'), 8)}: {raised[0].message}"
    assert found.reasons[0] == first and sum("raised" in r for r in found.reasons) == 1, found.reasons
    assert summary(run).no_graph == found.headline


SEQUENTIAL_PROGRAM = '''
import gc, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = torch.nn.Sequential(*[torch.nn.Linear(512, 512) for _ in range(3)])
step = torch.compile(DDP(model, bucket_cap_mb=1))
for _ in range(2):
    step(torch.randn(8, 512)).sum().backward()
del step, model  # before the process group goes: tests/corpus/ddp/train.py says why
gc.collect()
dist.destroy_process_group()
'''


def _record_two_ranks(tmp_path: Path, name: str) -> Run:
    from corpus_support import DYN_INSPECT
    from inductor_pool import seed

    env = {k: v for k, v in os.environ.items() if not k.startswith("DYN_INSPECT_")}
    env.update(DYN_INSPECT_NO_TUI="1", TORCHINDUCTOR_CACHE_DIR=seed(tmp_path / f"inductor-{name}"))
    runs = tmp_path / f"runs-{name}"
    proc = subprocess.run(
        [str(DYN_INSPECT), "run", "--no-tui", "--runs-dir", str(runs), sys.executable, "-m", "torch.distributed.run",
         "--standalone", "--nproc-per-node", "2", name],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return Run(next(p for p in runs.iterdir() if p.is_dir() and not p.is_symlink()))


@pytest.mark.corpus
def test_ddp_around_a_torch_module_says_why_and_its_fix_compiles(tmp_path: Path) -> None:
    """``torch.compile(DDP(nn.Sequential(...)))``: DDP's forward breaks by design and Dynamo
    starts no frame in ``Sequential.forward``, so nothing compiles. The headline says so
    before the breaks, and the fix it names — ``DDP(torch.compile(model))`` — applied to the
    program and re-run compiles the graphs (which DDPOptimizer then splits at its buckets)."""
    (tmp_path / "before.py").write_text(SEQUENTIAL_PROGRAM)
    found = no_graph(_record_two_ranks(tmp_path, "before.py").model)
    assert found is not None and found.reasons[0] == DDP_WRAPS_TORCH_MODULE, found
    fixed = SEQUENTIAL_PROGRAM.replace("torch.compile(DDP(model, bucket_cap_mb=1))", "DDP(torch.compile(model), bucket_cap_mb=1)")
    assert fixed != SEQUENTIAL_PROGRAM and "DDP(torch.compile(model)" in DDP_WRAPS_TORCH_MODULE
    (tmp_path / "after.py").write_text(fixed)
    after = _record_two_ranks(tmp_path, "after.py")
    assert no_graph(after.model) is None
    s = summary(after)
    assert s.graphs == 2 and s.graph_breaks.total == 0  # one graph per rank, no break
    (site,) = s.ddp_splits
    assert site.graphs == 3 and site.ranks == [0, 1]
    assert site.called_at is not None and (site.called_at.file, site.called_at.line) == (str(tmp_path / "after.py"), 9)
    assert site.headline.startswith(f"the graph called at {file_line(str(tmp_path / 'after.py'), 9)}: split by DDP")
