"""Every torch version's format, replayed: the version matrix's fixtures through the
importer (the normalizers' import path), in seconds, without that torch installed.

tests/compat/fixtures/torch-<version>[-cuda]/<program>.log.gz are real TORCH_TRACE logs
of the corpus programs recorded under that torch (tests/compat/record.sh re-records
them). Each replay must give the breaks, recompiles, kernels and kernel lines reviewed
in tests/compat/expectations.py — and those must still agree with what torch itself
printed (TORCH_LOGS, next to each log) and defined (the kernels in its output code).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from dyn_inspect.engine.importer import import_trace
from dyn_inspect.inspector.run import Run

COMPAT = Path(__file__).parents[1] / "compat"
FIXTURES = COMPAT / "fixtures"
sys.path.insert(0, str(COMPAT))
from digest import digest  # noqa: E402
from expectations import EXPECTED  # noqa: E402

CASES = [(version, program) for version, programs in sorted(EXPECTED.items()) for program in programs]
_BREAK_RE = re.compile(r"Graph break in user code at (\S+):(\d+)")
_RECOMPILE_RE = re.compile(r"Recompiling function (\S+) in ")
# a kernel's definition in Inductor's output code: CPU (C++) or GPU (Triton)
_KERNEL_DEF_RE = re.compile(r"^(\w+) = async_compile\.(?:cpp_pybinding|cpp|triton)\(", re.M)


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    root = tmp_path_factory.mktemp("compat-replay")
    for version, program in CASES:
        result = import_trace(FIXTURES / version / f"{program}.log.gz", out=root / f"{version}-{program}")
        out[(version, program)] = digest(Run(result.run_dir))
    return out


def test_every_version_has_its_fixtures() -> None:
    """At least the four versions the issue asks for are replayed; nothing stale is left."""
    dirs = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
    assert dirs == sorted(EXPECTED), (dirs, sorted(EXPECTED))
    releases = {re.match(r"torch-(\d+\.\d+)", d)[1] for d in dirs}  # type: ignore[index]
    assert {"2.11", "2.13", "2.14", "2.15"} <= releases, releases


@pytest.mark.parametrize("version,program", CASES)
def test_replay_matches_reviewed_expectations(replays: dict[tuple[str, str], dict[str, Any]], version: str, program: str) -> None:
    got = replays[(version, program)]
    want = EXPECTED[version][program]
    assert {k: got[k] for k in want} == want


@pytest.mark.parametrize("version,program", CASES)
def test_expectations_agree_with_torchs_own_output(version: str, program: str) -> None:
    """The reviewed numbers are torch's: its TORCH_LOGS lines and its output code."""
    want = EXPECTED[version][program]
    logs = (FIXTURES / version / f"{program}.torch_logs.txt").read_text(errors="replace")
    torch_breaks = sorted({f"{os.path.basename(f)}:{n}" for f, n in _BREAK_RE.findall(logs)})
    assert torch_breaks == want["breaks"]
    assert len(_RECOMPILE_RE.findall(logs)) == want["recompiles"]
    assert sorted(set(_RECOMPILE_RE.findall(logs))) == want["recompiled"]
    assert _kernels_defined(FIXTURES / version / f"{program}.log.gz") == want["kernels"]


def _kernels_defined(log: Path) -> int:
    """Kernels Inductor defined, counted in the raw log: one output code per compiled
    graph (forward, backward), each once (a record repeated on a cache hit counts once)."""
    seen: set[str] = set()
    count = 0
    code: list[str] | None = None
    with gzip.open(log, "rt", errors="replace") as f:
        for line in f:
            if line.startswith("\t"):
                if code is not None:
                    code.append(line[1:])
                continue
            if code is not None:
                count += _count_new(code, seen)
            code = [] if '{"inductor_output_code":' in line[:400] else None
    if code is not None:
        count += _count_new(code, seen)
    return count


def _count_new(code: list[str], seen: set[str]) -> int:
    text = "".join(code)
    if text in seen:
        return 0
    seen.add(text)
    return len(_KERNEL_DEF_RE.findall(text))


def test_fixtures_are_small() -> None:
    """They travel with every clone: a re-record that grows them should be looked at."""
    total = sum(p.stat().st_size for p in FIXTURES.rglob("*") if p.is_file())
    assert total < 8 * 1024 * 1024, total


def test_live_recording_agreed_with_replay() -> None:
    """What our live recorder wrote under each torch (recorded.json, kept by record.sh)
    says the same breaks and recompiles as the replay of torch's own log."""
    for version, programs in EXPECTED.items():
        recorded = json.loads((FIXTURES / version / "recorded.json").read_text())
        for program, want in programs.items():
            live = recorded[program]["live"]
            for key in ("breaks", "recompiles", "recompiled"):
                assert live[key] == want[key], (version, program, key)


def test_torch_has_no_upper_bound_and_the_floor_is_tested() -> None:
    """pip must never downgrade a user's newer torch; the floor is the oldest recorded."""
    import tomllib

    from dyn_inspect.engine import torch_compat

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    torch_req = next(d for d in project["dependencies"] if re.match(r"torch\b", d))
    assert "<" not in torch_req and "==" not in torch_req, torch_req
    floor = re.search(r">=\s*([\d.]+)", torch_req)[1]  # type: ignore[index]
    recorded = sorted({re.match(r"torch-([\d.]+)", v)[1] for v in EXPECTED}, key=lambda v: tuple(map(int, v.split("."))))  # type: ignore[index]
    assert recorded[0].startswith(floor), (floor, recorded)
    assert sorted(torch_compat.TESTED_VERSIONS) == sorted(recorded)
    newest = tuple(int(x) for x in recorded[-1].split(".")[:2])
    assert torch_compat.NEWEST_TESTED == newest
