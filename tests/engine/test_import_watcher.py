"""The recorder starts however the program imports torch (issue 28, item 0).

Each program compiles one function once and dumps torch's own ``counters["frames"]``;
the recording must hold as many compiles. The old watcher removed itself at the first
``find_spec("torch")`` (transformers' availability check) and recorded 0 compiles.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from inductor_pool import seed

pytestmark = pytest.mark.corpus

_BODY = """
f = torch.compile(lambda x: x.sin() + 1)
f(torch.randn(4))
from torch._dynamo.utils import counters
import json, os
with open(os.environ["COUNTS_OUT"], "w") as out:
    json.dump(dict(counters["frames"]), out)
"""

PROGRAMS = {
    "find_spec_first": 'import importlib.util\nassert importlib.util.find_spec("torch") is not None\nimport torch\n',
    "transformers_first": "from transformers import AutoConfig  # noqa: F401\nimport torch\n",
    "import_module": 'import importlib\ntorch = importlib.import_module("torch")\n',
}


def _dyn_inspect() -> str:
    return str(Path(sys.executable).with_name("dyn-inspect"))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiles_recorded_however_torch_is_imported(tmp_path: Path, name: str) -> None:
    program = tmp_path / f"{name}.py"
    program.write_text(PROGRAMS[name] + _BODY)
    counts = tmp_path / "counts.json"
    env = {
        **__import__("os").environ,
        "COUNTS_OUT": str(counts),
        "TORCHINDUCTOR_CACHE_DIR": seed(tmp_path / "inductor"),
        "DYN_INSPECT_RUNS_DIR": str(tmp_path / "runs"),
    }
    done = subprocess.run([_dyn_inspect(), "--no-tui", str(program)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    truth = json.loads(counts.read_text())
    assert truth["ok"] == 1, truth  # the program's structure: one frame, compiled once
    summary = subprocess.run(
        [_dyn_inspect(), "summary", "--json", "--runs-dir", str(tmp_path / "runs")], env=env, capture_output=True, text=True, timeout=120
    )
    assert summary.returncode == 0, summary.stderr
    data = msgspec.json.decode(summary.stdout)
    assert data["compiles"] == truth["ok"], (data, done.stderr)
    assert data["frames"] == truth["ok"]
    assert "recording stopped" not in done.stderr


def test_torch_imported_without_recorder_says_so(tmp_path: Path) -> None:
    """A process that imported torch while no recorder started must not read as "0 compiles"."""
    program = tmp_path / "unwatched.py"
    program.write_text(
        "import sys\nsys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != '_TorchWatcher']\nimport torch  # noqa: F401\n"
    )
    env = {**__import__("os").environ, "DYN_INSPECT_RUNS_DIR": str(tmp_path / "runs")}
    done = subprocess.run([_dyn_inspect(), "--no-tui", str(program)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "recording stopped:" in done.stderr and "recorder never started" in done.stderr, done.stderr
    summary = subprocess.run(
        [_dyn_inspect(), "summary", "--json", "--runs-dir", str(tmp_path / "runs")], env=env, capture_output=True, text=True, timeout=120
    )
    data = msgspec.json.decode(summary.stdout)
    assert any("recorder never started" in note for note in data["degraded"]), data
