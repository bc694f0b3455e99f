"""The bundle's TORCH_TRACE log: tlparse accepts it and sees every compile and graph
break; our own importer reads it back into the same run (compiles, breaks, kernels,
graph stages); the GPU fixture (real Triton kernels) exports its kernels and trace too."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from dyn_inspect.engine.importer import import_trace
from dyn_inspect.inspector.export import export_run
from dyn_inspect.inspector.run import Run

TLPARSE = shutil.which("tlparse", path=str(Path(sys.executable).parent)) or shutil.which("tlparse")


def _trace(run: Run, tmp: Path, **kw) -> tuple[zipfile.ZipFile, Path]:
    bundle = tmp / "bundle.zip"
    export_run(run, bundle, **kw)
    z = zipfile.ZipFile(bundle)
    (name,) = [n for n in z.namelist() if n.startswith("torch_trace/")]
    path = tmp / Path(name).name
    path.write_bytes(z.read(name))
    return z, path


def _tlparse(trace: Path, out: Path) -> subprocess.CompletedProcess[str]:
    if TLPARSE is None:
        pytest.skip("tlparse is not installed (pip install tlparse)")
    return subprocess.run([TLPARSE, str(trace), "-o", str(out), "--no-browser", "--strict"],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("fixture", ["example_run", "breaks_run"])
def test_tlparse_accepts_the_trace_and_sees_compiles_and_breaks(fixture: str, request, tmp_path: Path) -> None:
    run: Run = request.getfixturevalue(fixture)
    _, trace = _trace(run, tmp_path)
    p = _tlparse(trace, tmp_path / "tl")
    assert p.returncode == 0, p.stderr[-2000:]
    # tlparse counts lines it could not read (fail_glog, fail_json, fail_payload_md5, ...).
    stats = p.stderr + p.stdout
    assert "fail_" not in stats, stats[-2000:]
    directory = json.loads((tmp_path / "tl" / "compile_directory.json").read_text())
    for c in run.model.compiles_in_order():
        assert f"[{c.cid}]" in directory, c.cid
    break_files = list((tmp_path / "tl").glob("*/dynamo_graph_break_reason_*.txt"))
    assert len(break_files) == run.model.total_break_hits()
    # Compiles that restarted analysis at a break are listed as restarts (from the metrics).
    failures = (tmp_path / "tl" / "failures_and_restarts.html").read_text()
    restarted = [c.cid for c in run.model.compiles_in_order() if c.capture and c.capture.restart_reasons]
    assert restarted
    for cid in restarted:
        assert f"[{cid}]" in failures


def test_our_importer_reads_the_trace_back_into_the_same_run(example_run: Run, tmp_path: Path) -> None:
    _, trace = _trace(example_run, tmp_path)
    result = import_trace(trace, out=tmp_path / "imported")
    (f,) = result.files
    assert f.stats.bad_prefix == f.stats.bad_json == f.stats.md5_mismatch == 0
    assert result.normalizer_failures == 0
    back = Run(result.run_dir).model
    orig = example_run.model
    assert [(c.cid, c.outcome) for c in back.compiles_in_order()] == [(c.cid, c.outcome) for c in orig.compiles_in_order()]
    assert set(back.breaks) == set(orig.breaks)  # same break sites (type + file:line keys)
    assert sorted((k.compile.cid, k.name, k.event.backward) for k in back.kernels) == sorted(
        (k.compile.cid, k.name, k.event.backward) for k in orig.kernels
    )
    for c in orig.compiles_in_order():
        b = back.compiles[(next(iter(back.processes)), c.cid)]
        assert [g.stage for g in b.graphs] == [g.stage for g in c.graphs], c.cid
        assert (b.guards.count if b.guards else None) == (c.guards.count if c.guards else None)
    assert [r.event.reasons for r in back.recompiles] == [r.event.reasons for r in orig.recompiles]
    # Kernel provenance survives (kernels → user lines).
    assert {(k.name, tuple((l.file, l.line) for l in k.lines)) for k in back.kernels} == {
        (k.name, tuple((l.file, l.line) for l in k.lines)) for k in orig.kernels
    }


def test_gpu_fixture_exports_triton_kernels_and_a_readable_trace(gpu_trace_run: Run, tmp_path: Path) -> None:
    z, trace = _trace(gpu_trace_run, tmp_path)
    names = set(z.namelist())
    triton = [k for k in gpu_trace_run.model.kernels if k.event.backend == "triton"]
    assert triton
    infos = [json.loads(z.read(n)) for n in names if n.endswith("/compile.json")]
    paths = {i["path"] for info in infos for i in info["files"] if i["role"].startswith("kernel:")}
    contents = {z.read(p).decode() for p in paths}
    for k in triton:
        assert gpu_trace_run.blob_text(k.event.source) in contents
    assert all(p.endswith(".py") for p in paths)  # Triton kernels are Python
    m = json.loads(z.read("manifest.json"))
    assert m["run"]["source"] == "import"
    p = _tlparse(trace, tmp_path / "tl")
    assert p.returncode == 0, p.stderr[-2000:]
    directory = json.loads((tmp_path / "tl" / "compile_directory.json").read_text())
    for c in gpu_trace_run.model.compiles_in_order():
        assert f"[{c.cid}]" in directory
