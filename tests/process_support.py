"""Helpers for the tests that run child processes (no tests here)."""

from __future__ import annotations

import subprocess

import pytest


def finished(proc: subprocess.Popen[str], timeout: float, hung: str) -> subprocess.CompletedProcess[str]:
    """What ``proc`` printed and its exit status once it ends. One still running after
    ``timeout`` seconds is killed and fails the test, saying ``hung`` and how long it had."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"{hung} in {timeout}s")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
