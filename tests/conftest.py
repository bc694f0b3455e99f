"""Shared fixtures: the corpus recorded once per session with the real Inductor backend."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

import inductor_pool
from corpus_support import LIVE_CHECK, PROGRAMS, Corpus, Recording, records
from dyn_inspect.inspector.run import Run

FIXTURES = Path(__file__).parent / "fixtures"

# The run index's key (inspector/index.py) lives in a directory of this session, not in the
# user's ~/.cache: every run a test opens writes its index under it, and subprocesses
# (the CLI, the LSP) inherit it.
# Each pytest-xdist worker has its own (the index's bounded folders keep the newest entries:
# one worker's runs must not push out another's).
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["DYN_INSPECT_KEY_DIR"] = tempfile.mkdtemp(prefix="dyn-inspect-key-")
else:
    os.environ.setdefault("DYN_INSPECT_KEY_DIR", tempfile.mkdtemp(prefix="dyn-inspect-key-"))

# Programs a test starts without naming an Inductor cache share one of this session, never
# torch's default /tmp/torchinductor_<user>, which outlives sessions (a later session's "first
# compile" would hit an earlier one's FX cache). It is seeded from the session's pool of built
# C++ when the first test starts (tests/inductor_pool.py).
_SESSION_INDUCTOR_CACHE = Path(tempfile.mkdtemp(prefix="dyn-inspect-inductor-"))
os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(_SESSION_INDUCTOR_CACHE)


def pytest_sessionstart(session: pytest.Session) -> None:
    inductor_pool.start_probes()  # the instruction-set probes every fresh cache would build


_session_cache_seeded = False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    global _session_cache_seeded
    if not _session_cache_seeded:
        inductor_pool.seed(_SESSION_INDUCTOR_CACHE, harvest_when_test_ends=False)
        _session_cache_seeded = True
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    try:
        return (yield)
    finally:
        # the caches this test's programs built in (they have exited) feed the later ones
        inductor_pool.harvest_test_caches()
        inductor_pool.harvest(_SESSION_INDUCTOR_CACHE)


# fixture name -> (the corpus program it needs, what that recording is): each is a session
# fixture made by ``_run_fixture`` (below) that reads the program's recording
RUN_FIXTURES: dict[str, tuple[str, str]] = {
    "breaks_run": ("breaks", "tests/corpus/breaks.py: one break of each kind at marked lines."),
    "recompiles_run": ("recompiles", "tests/corpus/recompiles.py: shape and dtype recompiles."),
    "limit_run": ("limit", "tests/corpus/limit.py: the recompile limit, then eager."),
    "raises_run": ("raises", "tests/corpus/raises.py: raises after compiling."),
    "killed_run": ("killed", "tests/corpus/killed.py: SIGKILLed after compiling."),
    "example_run": ("example", "examples/train.py --steps 4: the README's example."),
    "ranks_run": ("ranks", "torchrun --nproc-per-node 2 (gloo, CPU) of tests/corpus/ranks/train.py."),
    "fsdp_run": ("fsdp", "torchrun --nproc-per-node 2 (gloo, CPU) of tests/corpus/fsdp/train.py: FSDP2, per-block compile."),
    "ddp_run": ("ddp", "torchrun --nproc-per-node 2 (gloo, CPU) of tests/corpus/ddp/train.py: DDPOptimizer splits."),
    "faces_long_run": ("faces_long", "tests/corpus/faces_long.py: 319 lines, breaks past line 200."),
    "faces_failure_run": ("faces_failure", "tests/corpus/faces_failure.py: a caught fullgraph=True failure."),
    "faces_recompiles_run": ("faces_recompiles", "tests/corpus/faces_recompiles.py: float lr, kwargs, .item(), ids."),
    # the differential corpus (tests/inspector/test_differential.py compares each with torch)
    "long_file_run": ("long_file", "tests/corpus/long_file.py: 300+ lines, three breaks past line 200."),
    "pkg_run": ("pkg", "python -m pkg.train (tests/corpus/pkg/): the break is in pkg/metrics.py."),
    "hf_gpt2_run": ("hf_gpt2", "tests/corpus/hf_gpt2.py: tiny random GPT-2, forward+backward, 3 lengths."),
    "hf_bert_run": ("hf_bert", "tests/corpus/hf_bert.py: tiny random BERT, inference, 3 lengths."),
    "optim_lr_run": ("optim_lr", "tests/corpus/optim_lr.py: compiled optimizer step, float lr, new kwarg."),
    "reset_run": ("reset", "tests/corpus/reset.py: dynamo reset, recompile limit 3, two breaks on a line."),
    "fullgraph_fail_run": ("fullgraph_fail", "tests/corpus/fullgraph_fail.py: uncaught fullgraph=True error."),
    "train_step_fail_run": ("train_step_fail", "tests/corpus/train_step_fail.py: fullgraph train step, zero_grad 'marked as skipped'."),
    "exit3_run": ("exit3", "tests/corpus/exit3.py: compiles, then sys.exit(3)."),
    "first_forward_fail_run": ("first_forward_fail", "tests/corpus/first_forward_fail.py: fails before backward."),
    "warm_cache_run": ("warm_cache", "tests/corpus/warm/train.py, its Inductor cache warmed from another copy."),
    "shapes_run": ("shapes", "tests/corpus/shapes.py: dynamic=True, a dim specialized by an `if`, automatic dynamic."),
    "cache_warm_run": ("cache_warm", "tests/corpus/cache/train.py, warmed from a copy: a hit, a bypass, a miss."),
    "error_break_run": ("error_break", "tests/corpus/error_break.py: torch.sin(y, 1) breaks with GB0112."),
    "backend_break_run": ("backend_break", "tests/corpus/backend_break.py: Inductor-backed backend refuses a graph: GB0219."),
    "no_graph_run": ("no_graph", "tests/corpus/no_graph.py: a compiled function that only prints: no graph."),
    "control_flow_run": ("control_flow", "tests/corpus/control_flow.py: torch.cond recompiling on a length; nonzero's unbacked sizes."),
    "docs_pages_run": ("docs_pages", "tests/corpus/docs_pages.py: the graph-break and recompilation docs pages' situations."),
    "step_cost_run": ("step_cost", "tests/corpus/step_cost.py --profile=10: a break between two heavy compiled regions."),
    "step_cost_fixed_run": ("step_cost_fixed", "tests/corpus/step_cost.py --without-bookkeeping --profile=10: the same program, fixed."),
    "step_cost_eager_run": ("step_cost_eager", "the fixed step_cost.py under --disable-compile --profile=10: the eager baseline."),
    "ab_same_run": ("ab_same", "tests/corpus/ab_same.py --threads 1 --profile=10: compiled and eager steps take the same time."),
    "ranks_profiled_run": ("ranks_profiled", "tests/corpus/ranks/train.py --steps 10 under torchrun (2 ranks, gloo) with --profile=3."),
}
_needed: list[str] = []
_needed_plain: list[str] = []  # programs whose plain (torch-only) run the selection needs
_needed_live: list[str] = []  # LIVE_CHECK, when a selected test compares its kept account with a live one


def _records_real_runs(item: pytest.Item) -> bool:
    """Whether a fixture the test uses (its whole closure) records real runs (``@records``)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(getattr(fd.func, "records_real_runs", False) for name in item.fixturenames for fd in info.name2fixturedefs.get(name, ()))


# The tests `tests/run.sh --quick` leaves out (marked `slow` here; docs/testing.md, "The quick
# tier"): each starts torch processes of its own that no kept recording replaces (torchrun
# launches, fixes applied and re-run, faults injected, a real editor or terminal), measured
# on this 2-CPU machine. A file, a test (``file::name``, all its parameters) or a folder
# (ending in ``/``). The full command runs them all.
SLOW: dict[str, str] = {
    # a real editor or terminal driving live recordings
    "tests/e2e/test_nvim.py": "Neovim on a verified fix: the example recorded, fixed and re-run",
    "tests/e2e/test_tui_tmux.py": "the TUI in tmux on live recordings",
    "tests/e2e/test_hostile_pass.py::test_rm_rf_while_recording_is_not_undone_and_said_once": "a live recording deleted under it",
    # fixes applied and re-run (the originals are kept by their text; the plain re-runs are not)
    "tests/inspector/test_fix_corpus.py::test_fix_is_applied_and_verified": "each fix applied, re-run plainly and recorded again",
    "tests/inspector/test_fix_corpus.py::test_snippet_is_applied_and_verified": "each snippet applied, re-run plainly and recorded again",
    "tests/cli/test_verify_rerun.py::test_a_fix_that_raises_on_its_first_step_is_not_verified": "records, verify re-runs",
    "tests/cli/test_verify_rerun.py::test_a_real_fix_in_a_copy_is_re_run_there_and_verified": "verify re-runs",
    "tests/cli/test_verify_rerun.py::test_a_fullgraph_failure_moved_to_another_line_is_not_fixed": "records, verify re-runs",
    "tests/lsp/test_lsp_verify.py": "the example recorded in a copy, fixed from the editor, verified (re-run)",
    "tests/tui/test_tui_causes.py::test_v_verifies_the_fix_and_marks_the_cause_fixed": "the example recorded in a copy, verified (re-run)",
    # the recorder under faults and launch forms: each a recording of its own
    "tests/engine/test_torch_compat.py": "one recording per broken torch hook",
    "tests/engine/test_faults.py": "injected faults, each a recording",
    "tests/engine/test_tracehook.py": "four recordings, one per trace-hook option",
    "tests/engine/test_cache_keys.py": "plain runs and recordings into warmed caches",
    "tests/engine/test_import_watcher.py": "recordings that import torch late",
    "tests/engine/test_multinode.py::test_layout_a_each_node_records_its_own_run": "2x2 torchrun layout A",
    "tests/engine/test_multinode.py::test_layout_a_merge_is_one_four_rank_run": "2x2 torchrun layout A",
    "tests/engine/test_multinode.py::test_merge_text_output_names_nodes_and_rank_3": "2x2 torchrun layout A",
    "tests/engine/test_multinode.py::test_merge_aligns_a_skewed_clock": "2x2 torchrun layout A",
    "tests/engine/test_multinode.py::test_each_nodes_launcher_status_is_kept": "2x2 torchrun layout A",
    "tests/engine/test_multinode.py::test_merge_refuses_bad_input_in_one_line": "2x2 torchrun layout A",
    "tests/engine/test_multinode.py::test_layout_b_shared_disk_is_one_run": "2x2 torchrun layout B",
    "tests/engine/test_multinode.py::test_layout_b2_launcher_form_on_a_shared_disk_is_one_run": "2x2 torchrun layout B2",
    "tests/inspector/test_ranks.py::test_torchrun_no_python_dyn_inspect_lands_in_one_run": "a torchrun launch form, recorded",
    "tests/inspector/test_ranks.py::test_torchrun_module_form_under_dyn_inspect": "a torchrun launch form, recorded",
    "tests/inspector/test_ranks.py::test_nested_dyn_inspect_joins_the_enclosing_run": "a torchrun launch form, recorded",
    "tests/inspector/test_ranks.py::test_a_failing_rank_ends_the_joined_run_as_crashed": "a torchrun launch form, recorded",
    "tests/inspector/test_no_graph.py::test_a_program_that_died_compiling_says_so_first": "DDP on two torchrun ranks, recorded",
    "tests/inspector/test_no_graph.py::test_ddp_around_a_torch_module_says_why_and_its_fix_compiles": "two torchrun recordings",
}


def _slow(nodeid: str) -> bool:
    for entry in SLOW:
        if entry.endswith("/") and nodeid.startswith(entry):
            return True
        if nodeid == entry or nodeid.startswith((entry + "::", entry + "[")):
            return True
    return False


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Remember which corpus programs the selected tests need, to start them together; mark
    the tests that record real runs ``corpus`` and those in ``SLOW`` ``slow``."""
    for item in items:
        if _records_real_runs(item):
            item.add_marker(pytest.mark.corpus)
        if _slow(item.nodeid):
            item.add_marker(pytest.mark.slow)
        for name in getattr(item, "fixturenames", ()):
            program = RUN_FIXTURES[name][0] if name in RUN_FIXTURES else None
            if program and program not in _needed:
                _needed.append(program)
        if "corpus" in getattr(item, "fixturenames", ()):
            for program in ("eager", "shadow", "raises", "killed"):
                if program not in _needed:
                    _needed.append(program)
        program = getattr(item, "callspec", None) and item.callspec.params.get("program")
        if "corpus" in getattr(item, "fixturenames", ()) and program in PROGRAMS and program not in _needed:
            _needed.append(program)  # a test parametrized over the programs (test_faces_agree_corpus)
        if "differential" in getattr(item, "fixturenames", ()) and program and program not in _needed_plain:
            _needed_plain.append(program)
        if "kept_truth_live" in getattr(item, "fixturenames", ()) and not _needed_live:
            _needed_live.append(LIVE_CHECK)


@pytest.fixture(scope="session")
@records
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    # pytest-xdist's workers share one root (each worker's basetemp is a folder of the
    # session's): each program is recorded by one of them, the others read its result.
    shared = os.environ.get("PYTEST_XDIST_WORKER")
    c = Corpus(tmp_path_factory.getbasetemp().parent / "corpus-runs" if shared else tmp_path_factory.mktemp("corpus-runs"))
    # Recordings first: the differential's plain runs are started behind them, so the
    # programs other tests wait on get the cores first.
    c.prestart([*_needed, *(p for p in _needed_plain if p not in _needed)])
    c.prestart_plain(_needed_plain)
    for name in _needed_live:
        c.prestart_plain_live(name)
    return c


@pytest.fixture(scope="session")
def kept_truth_live(corpus: Corpus) -> Recording:
    """LIVE_CHECK's plain run made now, even when its kept account holds."""
    return corpus.plain_live(LIVE_CHECK)


def _run_fixture(program: str, doc: str) -> Callable[[Corpus], Run]:
    """A session fixture: the recorded run of one corpus program (see RUN_FIXTURES)."""

    def fixture(corpus: Corpus) -> Run:
        rec: Recording = corpus[program]
        return Run(rec.run_dir)

    fixture.__doc__ = doc
    return pytest.fixture(scope="session", name=f"{program}_run")(fixture)


for _name, (_program, _doc) in RUN_FIXTURES.items():
    globals()[_name] = _run_fixture(_program, _doc)


@pytest.fixture(scope="session")
def gpu_trace_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The H200 TORCH_TRACE fixture (real Triton kernels) imported through our normalizers."""
    from dyn_inspect.engine.importer import import_trace

    out = tmp_path_factory.mktemp("gpu") / "run"
    result = import_trace(FIXTURES / "h200_torch211_toy.log.gz", out=out)
    return Run(result.run_dir)


# With DYN_INSPECT_TEST_TIMES=FILE each test phase appends {"nodeid", "when", "s", "stop",
# "worker"} to FILE as it ends (``stop``: the epoch second it ended; ``worker``: xdist's gw0,
# gw1; docs/testing.md, "Where the time goes"): unlike --durations, what a session stopped
# half-way measured is kept, and when each test ran shows where the CPUs were idle.
# Measurement only; no test reads it.
def _log_test_time(report: pytest.TestReport) -> None:
    path = os.environ.get("DYN_INSPECT_TEST_TIMES")
    if path and not os.environ.get("PYTEST_XDIST_WORKER"):  # under xdist the controller logs each
        with open(path, "a") as f:
            gateway = getattr(getattr(report, "node", None), "gateway", None)
            line = {"nodeid": report.nodeid, "when": report.when, "s": round(report.duration, 2),
                    "stop": round(getattr(report, "stop", 0.0), 1), "worker": getattr(gateway, "id", None)}
            f.write(json.dumps(line) + "\n")


# -- the differential's verdict per program, printed at the end (tests/inspector/test_differential.py)
_differential: dict[str, list[str]] = {}  # program -> quantities that did not match torch


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _log_test_time(report)
    _note_fix_verdict(report)
    if "test_differential.py::" not in report.nodeid or "[" not in report.nodeid:
        return
    # tests/inspector/test_differential.py::test_x[program-quantity] or ::test_y[program]
    program = report.nodeid.rsplit("[", 1)[1].rstrip("]").split("-")[0]
    failed = _differential.setdefault(program, [])
    name = report.nodeid.split("::", 1)[1]
    # a known difference (xfail) still does not match torch
    if (report.failed or hasattr(report, "wasxfail") and report.skipped) and name not in failed:
        failed.append(name)


# -- the fix corpus's verdict per fix kind (tests/inspector/test_fix_corpus.py puts ("fix_verified",
# (kind, program)) in its reports' user_properties, which reach the controller under xdist too)
_fixes_verified: dict[str, bool] = {}


def _note_fix_verdict(report: pytest.TestReport) -> None:
    if report.when != "call":
        return
    for name, value in report.user_properties:
        if name == "fix_verified":
            kind, program = value
            _fixes_verified[f"{kind} ({program})"] = report.passed


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    lines = [f"  {kind}: not verified" for kind, ok in sorted(_fixes_verified.items()) if not ok]
    if _fixes_verified:
        lines.append(f"fixes: {sum(_fixes_verified.values())}/{len(_fixes_verified)} verified")
    if lines:
        terminalreporter.write_sep("-", "fix corpus: each fix applied and re-run")
        for line in lines:
            terminalreporter.write_line(line)
    if not _differential:
        return
    matching = sorted(p for p, failed in _differential.items() if not failed)
    terminalreporter.write_sep("-", "differential corpus vs torch")
    for program, failed in sorted(_differential.items()):
        if failed:
            terminalreporter.write_line(f"  {program}: differs in {', '.join(failed)}")
    terminalreporter.write_line(f"differential: {len(matching)}/{len(_differential)} programs match torch")
