"""Shared fixtures: the corpus recorded once per session with the real Inductor backend."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corpus_support import Corpus, Recording
from dyn_inspect.inspector.run import Run

FIXTURES = Path(__file__).parent / "fixtures"


# fixture name -> corpus program it needs
RUN_FIXTURES = {
    "breaks_run": "breaks",
    "recompiles_run": "recompiles",
    "limit_run": "limit",
    "raises_run": "raises",
    "killed_run": "killed",
    "example_run": "example",
    "ranks_run": "ranks",
    "faces_long_run": "faces_long",
    "faces_failure_run": "faces_failure",
    "faces_recompiles_run": "faces_recompiles",
}
_needed: list[str] = []


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Remember which corpus programs the selected tests need, to start them together."""
    for item in items:
        for name in getattr(item, "fixturenames", ()):
            program = RUN_FIXTURES.get(name)
            if program and program not in _needed:
                _needed.append(program)
        if "corpus" in getattr(item, "fixturenames", ()):
            for program in ("eager", "shadow", "raises", "killed"):
                if program not in _needed:
                    _needed.append(program)


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    c = Corpus(tmp_path_factory.mktemp("corpus-runs"))
    c.prestart(_needed)
    return c


def _run_fixture(program: str, doc: str) -> Callable[[Corpus], Run]:
    """A session fixture: the recorded run of one corpus program (see RUN_FIXTURES)."""

    def fixture(corpus: Corpus) -> Run:
        rec: Recording = corpus[program]
        return Run(rec.run_dir)

    fixture.__doc__ = doc
    return pytest.fixture(scope="session", name=f"{program}_run")(fixture)


breaks_run = _run_fixture("breaks", "tests/corpus/breaks.py: one break of each kind at marked lines.")
recompiles_run = _run_fixture("recompiles", "tests/corpus/recompiles.py: shape and dtype recompiles.")
limit_run = _run_fixture("limit", "tests/corpus/limit.py: the recompile limit, then eager.")
raises_run = _run_fixture("raises", "tests/corpus/raises.py: raises after compiling.")
killed_run = _run_fixture("killed", "tests/corpus/killed.py: SIGKILLed after compiling.")
example_run = _run_fixture("example", "examples/train.py --steps 4: the README's example.")
ranks_run = _run_fixture("ranks", "torchrun --nproc-per-node 2 (gloo, CPU) of tests/corpus/ranks/train.py.")
faces_long_run = _run_fixture("faces_long", "tests/corpus/faces_long.py: 319 lines, breaks past line 200.")
faces_failure_run = _run_fixture("faces_failure", "tests/corpus/faces_failure.py: a caught fullgraph=True failure.")
faces_recompiles_run = _run_fixture("faces_recompiles", "tests/corpus/faces_recompiles.py: float lr, kwargs, .item(), ids.")


@pytest.fixture(scope="session")
def gpu_trace_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The H200 TORCH_TRACE fixture (real Triton kernels) imported through our normalizers."""
    from dyn_inspect.engine.importer import import_trace

    out = tmp_path_factory.mktemp("gpu") / "run"
    result = import_trace(FIXTURES / "h200_torch211_toy.log.gz", out=out)
    return Run(result.run_dir)
