"""The runnable repro torch emits (``fx_graph_runnable``), taken out of a bundle of the
example run and run in a fresh Python process: a PyTorch developer can rerun the graph
without the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from dyn_inspect.inspector.export import export_run
from dyn_inspect.inspector.run import Run


def test_fx_graph_runnable_from_the_example_bundle_runs(example_run: Run, tmp_path: Path) -> None:
    bundle = tmp_path / "example.zip"
    export_run(example_run, bundle)
    z = zipfile.ZipFile(bundle)
    # The first compile that broke the graph: the one a bug report is about.
    first = next(c for c in example_run.model.compiles_in_order() if c.breaks and c.artifact("fx_graph_runnable"))
    info = next(
        json.loads(z.read(n)) for n in z.namelist()
        if n.endswith("/compile.json") and json.loads(z.read(n))["compile_id"] == first.cid
    )
    (repro,) = [i["path"] for i in info["files"] if i["role"] == "repro:forward"]
    script = tmp_path / "repro.py"
    script.write_bytes(z.read(repro))
    text = script.read_text()
    # The recording machine's Inductor cache directory is not forced on the recipient.
    assert "\nos.environ['TORCHINDUCTOR_CACHE_DIR']" not in text
    # It is the forward graph AOTAutograd compiled for that compile (its ATen ops).
    fw = example_run.blob_text(first.graph("aot_fw").code)
    assert "torch.ops.aten.addmm.default" in fw and "torch.ops.aten.addmm.default" in text
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor-cache")}
    env.pop("PYTHONPATH", None)
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    # It really compiled (Inductor wrote into the fresh cache) — not an eager no-op.
    assert any((tmp_path / "inductor-cache").iterdir())
