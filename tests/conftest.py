"""Shared fixtures: the corpus recorded once per session with the real Inductor backend."""

from __future__ import annotations

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


def _run(corpus: Corpus, name: str) -> Run:
    rec: Recording = corpus[name]
    return Run(rec.run_dir)


@pytest.fixture(scope="session")
def breaks_run(corpus: Corpus) -> Run:
    return _run(corpus, "breaks")


@pytest.fixture(scope="session")
def recompiles_run(corpus: Corpus) -> Run:
    return _run(corpus, "recompiles")


@pytest.fixture(scope="session")
def limit_run(corpus: Corpus) -> Run:
    return _run(corpus, "limit")


@pytest.fixture(scope="session")
def raises_run(corpus: Corpus) -> Run:
    return _run(corpus, "raises")


@pytest.fixture(scope="session")
def killed_run(corpus: Corpus) -> Run:
    return _run(corpus, "killed")


@pytest.fixture(scope="session")
def example_run(corpus: Corpus) -> Run:
    return _run(corpus, "example")


@pytest.fixture(scope="session")
def ranks_run(corpus: Corpus) -> Run:
    """torchrun --nproc-per-node 2 (gloo, CPU) of tests/corpus/ranks/train.py."""
    return _run(corpus, "ranks")


@pytest.fixture(scope="session")
def gpu_trace_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The H200 TORCH_TRACE fixture (real Triton kernels) imported through our normalizers."""
    from dyn_inspect.engine.importer import import_trace

    out = tmp_path_factory.mktemp("gpu") / "run"
    result = import_trace(FIXTURES / "h200_torch211_toy.log.gz", out=out)
    return Run(result.run_dir)
