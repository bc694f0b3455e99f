"""The session's pool of built C++ (tests/inductor_pool.py): a seeded cache skips the C++
compiler and nothing else — every graph still misses the FX-graph cache as in a first run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import inductor_pool

PROGRAM = """import json, sys, torch
from torch._dynamo.utils import counters
@torch.compile
def f(x):
    return (x.cos() * 3).tanh()
f(torch.randn(16))
json.dump(dict(counters["inductor"]), open(sys.argv[1], "w"))
"""


def _run(tmp_path: Path, cache: str, name: str) -> dict[str, int]:
    out = tmp_path / f"{name}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DYN_INSPECT_", "TORCH_"))}
    env["TORCHINDUCTOR_CACHE_DIR"] = cache
    (tmp_path / "prog.py").write_text(PROGRAM)
    proc = subprocess.run([sys.executable, "prog.py", str(out)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.corpus
def test_a_seeded_cache_reuses_built_cpp_but_no_fx_graph(tmp_path: Path) -> None:
    first = tmp_path / "first"
    counts = _run(tmp_path, inductor_pool.seed(first), "first")
    assert counts.get("fxgraph_cache_miss") == 1 and not counts.get("fxgraph_cache_hit"), counts
    inductor_pool.harvest(first)
    built = set(inductor_pool._built(first))
    assert any(p.name.endswith(".main.so") for p in built), built  # the program's own kernel
    assert built <= set(inductor_pool._built(inductor_pool.POOL))

    second = tmp_path / "second"
    inductor_pool.seed(second)
    assert not (second / "fxgraph").exists() and not (second / "aotautograd").exists()
    before = {p: (second / p).stat().st_ino for p in inductor_pool._built(second)}
    assert set(before) >= built
    counts = _run(tmp_path, str(second), "second")
    # a first run as far as torch can tell: the graph misses, is compiled and cached anew ...
    assert counts.get("fxgraph_cache_miss") == 1 and not counts.get("fxgraph_cache_hit"), counts
    assert any((second / "fxgraph").iterdir())
    # ... and the C++ compiler built nothing: every .so there is the pool's (same inode)
    after = {p: (second / p).stat().st_ino for p in inductor_pool._built(second) if p.suffix == ".so"}
    assert after and all(before.get(p) == ino for p, ino in after.items()), set(after) - set(before)


def test_an_unfinished_or_broken_build_never_enters_the_pool(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "ab").mkdir(parents=True)
    (cache / "ab" / "cut.so").write_bytes(b"\x7fELF partial")
    (cache / "ab" / "cut_CxxBuild").mkdir()  # Inductor removes it once the build ended
    (cache / "ab" / "empty.so").write_bytes(b"")
    (cache / "ab" / "good.so").write_bytes(b"\x7fELF whole")
    (cache / "ab" / "good.cpp").write_text("// source")
    (cache / "fxgraph" / "xy").mkdir(parents=True)
    (cache / "fxgraph" / "xy" / "entry.so").write_bytes(b"\x7fELF")  # never a C++ build of ours
    assert sorted(str(p) for p in inductor_pool._built(cache)) == ["ab/good.cpp", "ab/good.so"]
