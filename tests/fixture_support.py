"""Helpers for the tests that read the recordings kept under tests/fixtures (no tests here)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def unpacked(tmp_path_factory: pytest.TempPathFactory, archive: Path, folder: str) -> Path:
    """A new temporary ``folder`` holding what the tarball ``archive`` holds (its run
    directories, say)."""
    out = tmp_path_factory.mktemp(folder)
    with tarfile.open(archive) as tar:
        tar.extractall(out, filter="data")
    return out
