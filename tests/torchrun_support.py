"""Torch's own account of a program run without dyn-inspect under torchrun (two gloo ranks
on CPU): its TORCH_TRACE per rank and its stderr, for the multi-rank tests to compare with."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from inductor_pool import seed

TIMEOUT_S = 600

# `V1206 20:05:46.918000 25934 torch/_dynamo/utils.py:2009] {"compilation_metrics": ...}`
_RECORD = re.compile(r"^[VIWEDC]\d{4} [\d:.]+ +\d+ \S+:\d+\] (?P<json>\{.*\})\s*$")


@dataclass
class PlainRun:
    trace_dir: Path
    stderr: str

    def records(self, rank: int) -> list[dict[str, object]]:
        """Rank ``rank``'s TORCH_TRACE records (metadata only), in order."""
        (log,) = [p for p in self.trace_dir.iterdir() if f"rank_{rank}_" in p.name]
        out = []
        for line in log.read_text().splitlines():
            m = _RECORD.match(line)
            if m:
                out.append(json.loads(m["json"]))
        return out

    def kinds(self, rank: int) -> Counter[str]:
        """How many records of each kind rank ``rank`` logged (artifacts by name)."""
        out: Counter[str] = Counter()
        for r in self.records(rank):
            kind = next(iter(r))
            body = r[kind]
            out[f"artifact:{body['name']}" if kind == "artifact" and isinstance(body, dict) else kind] += 1
        return out


def plain_torchrun(program: Path, tmp: Path, torch_logs: str | None = None) -> PlainRun:
    """``torchrun --standalone --nproc-per-node 2 <program>`` with TORCH_TRACE (and
    ``torch_logs``) on, an Inductor cache of its own seeded from the session's C++ pool."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DYN_INSPECT_", "TORCH_"))}
    env.update(TORCH_TRACE=str(tmp / "trace"), TORCHINDUCTOR_CACHE_DIR=seed(tmp / "inductor"))
    if torch_logs:
        env["TORCH_LOGS"] = torch_logs
    # A session of its own: a rank that hangs is killed with torchrun, not left behind.
    proc = subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", program.name],
        cwd=program.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        _, stderr = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
        pytest.fail(f"torchrun {program} did not end in {TIMEOUT_S} s: {stderr[-2000:]}")
    assert proc.returncode == 0, stderr[-3000:]
    return PlainRun(tmp / "trace", stderr)
