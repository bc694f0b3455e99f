"""Shared fixtures: the corpus recorded once per session with the real Inductor backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_support import Corpus, Recording
from dyn_inspect.inspector.run import Run

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return Corpus(tmp_path_factory.mktemp("corpus-runs"))


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
def gpu_trace_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The H200 TORCH_TRACE fixture (real Triton kernels) imported through our normalizers."""
    from dyn_inspect.engine.importer import import_trace

    out = tmp_path_factory.mktemp("gpu") / "run"
    result = import_trace(FIXTURES / "h200_torch211_toy.log.gz", out=out)
    return Run(result.run_dir)
