"""Bug-report bundles on the real corpus runs: every promised file, the manifest against
the machine, selection, refusing to overwrite, partial and corrupted runs, deduplication."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import msgspec
import pytest
import torch
import torch._inductor.config

from corpus_support import CORPUS, EXAMPLES, marker_line
from dyn_inspect.engine.eventlog import blob_path
from dyn_inspect.engine.schema import AnyEvent, Blob, UnknownEvent
from dyn_inspect.inspector.analysis.graphs import compile_graph, graphviz, to_dot
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.export import ExportResult, PictureOptions, export_run
from dyn_inspect.inspector.reports import summary_dict
from dyn_inspect.inspector.run import Run

DYN = [sys.executable, "-m", "dyn_inspect.cli"]
TRAIN = EXAMPLES / "train.py"
HELPERS = CORPUS / "corpus_helpers.py"


def _bundle(run: Run, path: Path, **kw) -> tuple[ExportResult, zipfile.ZipFile]:
    result = export_run(run, path, **kw)
    return result, zipfile.ZipFile(path)


@pytest.fixture(scope="module")
def example_bundle(example_run: Run, tmp_path_factory: pytest.TempPathFactory) -> tuple[ExportResult, zipfile.ZipFile]:
    # Every picture is checked below: a budget no loaded machine runs out of (the default
    # budget's skips are tests/inspector/export/test_export_pictures.py's).
    return _bundle(example_run, tmp_path_factory.mktemp("bundle") / "example.zip", pictures=PictureOptions(budget_s=600))


def _manifest(z: zipfile.ZipFile) -> dict:
    return json.loads(z.read("manifest.json"))


def _compile_info(z: zipfile.ZipFile) -> dict[str, dict]:
    return {
        json.loads(z.read(n))["compile_id"]: json.loads(z.read(n))
        for n in z.namelist()
        if n.startswith("compiles/") and n.endswith("/compile.json")
    }


def _roles(info: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in info["files"]:
        out.setdefault(item["role"], []).append(item["path"])
    return out


# -- contents ------------------------------------------------------------------------------


def test_root_holds_index_manifest_summary_report_events_and_trace(example_bundle, example_run: Run) -> None:
    result, z = example_bundle
    names = set(z.namelist())
    assert {"index.md", "manifest.json", "summary.md", "report.html"} <= names
    proc_logs = [n for n in example_run.logs if n != "launcher.jsonl"]
    for log in example_run.logs:
        assert f"events/{log}" in names
    assert any(n.startswith("torch_trace/") and n.endswith(".log") for n in names)
    assert len([n for n in names if n.startswith("torch_trace/")]) == len(proc_logs)
    m = _manifest(z)
    # The index lists every file of the bundle, and every listed file is there.
    index = z.read("index.md").decode()
    for name in names:
        assert f"`{name}`" in index, name
    assert set(m["files"]) == names
    assert result.files == len(names)
    assert result.path.stat().st_size == result.size_bytes


def test_every_compile_has_graphs_repro_guards_output_code_and_kernels(example_bundle, example_run: Run) -> None:
    _, z = example_bundle
    names = set(z.namelist())
    infos = _compile_info(z)
    compiles = example_run.model.compiles_in_order()
    assert sorted(infos) == sorted(c.cid for c in compiles)
    for c in compiles:
        info = infos[c.cid]
        roles = _roles(info)
        for item in info["files"]:
            assert item["path"] in names, item
        # FX graphs of every stage, readable, with the recorded code (unredacted bundle).
        for g in c.graphs:
            assert example_run.blob_text(g.code) in {z.read(p).decode() for p in roles[f"graph:{g.stage}"]}
            assert any(p.endswith(".dot") for p in roles[f"picture:{g.stage}"])
            if graphviz():
                assert any(p.endswith(".svg") for p in roles[f"picture:{g.stage}"])
        if c.guards is not None:
            assert z.read(roles["guards"][0]).decode() == example_run.blob_text(c.guards.text)
        for oc in c.output_codes:
            which = "backward" if oc.backward else "forward"
            assert example_run.blob_text(oc.code) in {z.read(p).decode() for p in roles[f"output_code:{which}"]}
        for k in c.kernels:
            paths = roles[f"kernel:{k.name}"]
            assert all(p.endswith(".cpp") for p in paths)  # C++ kernels on this CPU machine
            assert example_run.blob_text(k.event.source) in {z.read(p).decode() for p in paths}
        runnable = [a for a in c.artifacts if a.name == "fx_graph_runnable"]
        repro = [p for r, ps in roles.items() if r.startswith("repro:") for p in ps]
        assert len(repro) == len(runnable)
        for p in repro:
            assert "class Repro(torch.nn.Module)" in z.read(p).decode()
        for b in c.breaks:
            assert example_run.blob_text(b.text) in {z.read(p).decode() for p in roles["graph_break"]}


def test_graph_pictures_follow_the_graph(example_bundle, example_run: Run) -> None:
    """The DOT of the first Dynamo graph has one node per FX assignment and the edges the
    code reads (checked against the recorded graph text, not against the exporter)."""
    _, z = example_bundle
    c = example_run.model.compiles_in_order()[0]
    g = c.graph("dynamo")
    code = example_run.blob_text(g.code)
    dot = z.read(_roles(_compile_info(z)[c.cid])["picture:dynamo"][0]).decode()
    assert dot.startswith("digraph")
    # Every op node of the graph text is a node; `linear` feeds `h = torch.relu(linear)`.
    for line in code.splitlines():
        s = line.strip()
        if ': "' in s and " = " in s and not s.startswith("#"):
            assert f'"{s.split(":")[0]}" [label=' in dot, s
    assert '"linear" -> "h";' in dot
    assert '"output"' in dot
    # One parser, one DOT writer: `dyn-inspect graph --dot` draws the same nodes and edges.
    same = to_dot(compile_graph(example_run, c, "dynamo"), "x")
    assert dot.splitlines()[1:] == same.splitlines()[1:]


def test_manifest_matches_this_machine_and_the_run(example_bundle, example_run: Run) -> None:
    _, z = example_bundle
    m = _manifest(z)
    env = m["environment"]
    # The corpus was recorded by this venv on this machine: compare with what the test sees.
    assert env["torch"] == torch.__version__
    assert env["python"] == platform.python_version()
    assert env["os"] == platform.platform()
    assert env["cuda"] == torch.version.cuda
    assert env["cpu_vector_isa"] and env["cpu_vector_isa"].lower() in str(torch.backends.cpu.get_cpu_capability()).lower()
    assert m["run"]["exit_status"] == 0 and m["run"]["status"] == "finished"
    # One set of key names: `summary --json` says the same about the environment.
    assert summary_dict(example_run)["environment"] == env
    assert env["cpu_isa"] == env["cpu_vector_isa"] and env["platform"] == env["os"] and env["devices"] == env["gpus"]
    assert m["run"]["command"][1:] == ["train.py", "--steps", "4"]
    assert m["tool"]["version"] and m["tool"]["name"] == "dyn-inspect"
    assert m["redacted"] is False and m["contains_source"] is True
    # Config at compile time: torch's values, from its own metrics record.
    (cs,) = m["config"]["at_compile_time"]
    assert sorted(cs["compile_ids"]) == sorted(c.cid for c in example_run.model.compiles_in_order() if c.capture)
    assert cs["relevant"]["dynamo"]["recompile_limit"] == torch._dynamo.config.recompile_limit
    assert cs["relevant"]["inductor"]["max_autotune"] is False
    full = json.loads(z.read(cs["file"]))
    assert full["inductor"]["cpp.simdlen"] == torch._inductor.config.cpp.simdlen
    assert m["skipped"] == [] and m["incomplete"] == []


def test_events_are_the_run_and_payload_digests_resolve(example_bundle, example_run: Run) -> None:
    _, z = example_bundle
    m = _manifest(z)
    decoder = msgspec.json.Decoder(AnyEvent)
    for log in example_run.logs:
        lines = z.read(f"events/{log}").splitlines()
        recorded = [e for name, e in example_run.events(log)]
        assert len(lines) == len(recorded)
        for raw, original in zip(lines, recorded, strict=True):
            ev = decoder.decode(raw)
            assert type(ev) is type(original)
            for f in ev.__struct_fields__:
                v = getattr(ev, f)
                if isinstance(v, Blob):
                    # Unredacted: the stored payload is the recorded one, digest and all.
                    path = m["payloads"][v.digest]
                    data = z.read(path)
                    assert hashlib.blake2b(data, digest_size=16).hexdigest() == v.digest or "repro" in path
                    assert v == getattr(original, f) or "repro" in path


def test_payloads_are_stored_once(example_bundle, recompiles_run: Run, tmp_path: Path) -> None:
    """No two payload files of a bundle hold the same bytes; the estimate printed before
    writing is the sum of the unique payloads the events reference."""
    for _run, z in ((None, example_bundle[1]), (recompiles_run, _bundle(recompiles_run, tmp_path / "r.zip")[1])):
        generated = (".dot", ".svg", "compile.json")
        seen: dict[str, str] = {}
        for n in z.namelist():
            if not (n.startswith("compiles/") or n.startswith("blobs/")) or n.endswith(generated):
                continue
            h = hashlib.sha256(z.read(n)).hexdigest()
            assert h not in seen, f"{n} duplicates {seen.get(h)}"
            seen[h] = n
    result, _ = _bundle(recompiles_run, tmp_path / "r2.zip")
    unique: dict[str, int] = {}
    for _, ev in recompiles_run.events():
        if isinstance(ev, UnknownEvent):
            continue
        for f in ev.__struct_fields__:
            v = getattr(ev, f)
            if isinstance(v, Blob):
                unique[v.digest] = v.size
    assert result.payload_bytes == sum(unique.values())
    # Proportional: the zip is smaller than the payloads plus the event log it carries.
    log_bytes = sum((recompiles_run.path / n).stat().st_size for n in recompiles_run.logs)
    assert result.size_bytes < sum(unique.values()) + log_bytes


# -- selection -----------------------------------------------------------------------------


def test_compile_id_selection_keeps_only_those_compiles(example_run: Run, tmp_path: Path) -> None:
    _, z = _bundle(example_run, tmp_path / "sel.zip", compile_ids=["0/1"])
    assert sorted(_compile_info(z)) == ["0/1"]
    m = _manifest(z)
    assert m["selection"]["compiles"] == ["0/1"] and m["selection"]["whole_run"] is False
    decoder = msgspec.json.Decoder(AnyEvent)
    for n in z.namelist():
        if n.startswith("events/"):
            for raw in z.read(n).splitlines():
                ev = decoder.decode(raw)
                assert ev.cid in (None, "0/1"), ev
    trace = next(n for n in z.namelist() if n.startswith("torch_trace/"))
    for line in z.read(trace).decode().splitlines():
        if line.startswith("V") and '"frame_id"' in line:
            md = json.loads(line.split("] ", 1)[1])
            assert (md["frame_id"], md["frame_compile_id"]) == (0, 1)
    with pytest.raises(InspectorError, match="no compile 9/9"):
        export_run(example_run, tmp_path / "bad.zip", compile_ids=["9/9"])
    assert not (tmp_path / "bad.zip").exists()


def test_at_selects_the_compiles_that_touched_the_line(example_run: Run, breaks_run: Run, tmp_path: Path) -> None:
    line = marker_line(TRAIN, "data-dependent branch: graph break")
    group = next(g for g in example_run.model.break_groups() if (g.loc.file, g.loc.line) == (str(TRAIN), line))
    expected = {e.cid for _, e in group.hits}
    # The frame whose function spans the line, and the resume function torch starts at it.
    frames = {"forward", f"torch_dynamo_resume_in_forward_at_{line}"}
    expected |= {c.cid for f in example_run.model.frames_in_order() if f.name in frames for c in f.compiles}
    _, z = _bundle(example_run, tmp_path / "at.zip", at=f"{TRAIN}:{line}")
    assert set(_compile_info(z)) == expected
    # A relative path (from the run's directory) names the same file.
    _, z2 = _bundle(example_run, tmp_path / "at2.zip", at=f"train.py:{line}")
    assert set(_compile_info(z2)) == expected
    # A break inside an inlined helper selects both compiles that logged it.
    hline = marker_line(HELPERS, "BREAK:helper_print")
    hits = {e.cid for g in breaks_run.model.break_groups() if (g.loc.file, g.loc.line) == (str(HELPERS), hline) for _, e in g.hits}
    _, z3 = _bundle(breaks_run, tmp_path / "at3.zip", at=f"{HELPERS}:{hline}")
    assert hits <= set(_compile_info(z3)) and len(hits) == 2
    with pytest.raises(InspectorError, match="nothing in this run was compiled at"):
        export_run(example_run, tmp_path / "none.zip", at=f"{TRAIN}:1")
    with pytest.raises(InspectorError, match="FILE:LINE"):
        export_run(example_run, tmp_path / "none.zip", at="train.py")


# -- output file rules ---------------------------------------------------------------------


def _tree(path: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(path)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(path.rglob("*")) if p.is_file()}


def test_refuses_to_overwrite_and_writes_nothing_else(recompiles_run: Run, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "bundle.zip"
    target.write_text("precious")
    run_before = _tree(recompiles_run.path)
    with pytest.raises(InspectorError, match="exists; pass --force"):
        export_run(recompiles_run, target)
    assert target.read_text() == "precious"
    p = subprocess.run([*DYN, "export", str(recompiles_run.path), "-o", str(target)], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines()[-1].startswith("dyn-inspect: ") and "Traceback" not in p.stderr
    assert target.read_text() == "precious"
    result = export_run(recompiles_run, target, force=True)
    assert zipfile.is_zipfile(target) and result.path == target
    # Only the chosen output changed: no temporary files left, the run untouched.
    assert sorted(os.listdir(out_dir)) == ["bundle.zip"]
    assert _tree(recompiles_run.path) == run_before


def test_cli_default_name_size_estimate_and_source_notice(recompiles_run: Run, tmp_path: Path) -> None:
    p = subprocess.run([*DYN, "export", str(recompiles_run.path)], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = tmp_path / f"dyn-inspect-{recompiles_run.path.name}.zip"
    assert sorted(os.listdir(tmp_path)) == [out.name]
    assert "of payloads (" in p.stderr and "before compression" in p.stderr
    assert "contains your model's source code" in p.stderr
    assert f"wrote {out}" in p.stdout
    p2 = subprocess.run(
        [*DYN, "export", str(recompiles_run.path), "-o", str(tmp_path / "r.zip"), "--redact-source", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert p2.returncode == 0, p2.stderr
    assert "source code" not in p2.stderr
    data = json.loads(p2.stdout)
    assert data["redacted"] is True and data["contains_source"] is False and data["path"] == str(tmp_path / "r.zip")
    # A missing run is one line, exit 2.
    p3 = subprocess.run([*DYN, "export", str(tmp_path / "nope")], capture_output=True, text=True, cwd=tmp_path)
    assert p3.returncode == 2 and p3.stderr.count("\n") == 1


# -- partial and corrupted runs ------------------------------------------------------------


def test_killed_run_exports_and_says_what_is_missing(killed_run: Run, tmp_path: Path) -> None:
    result, z = _bundle(killed_run, tmp_path / "k.zip")
    m = _manifest(z)
    assert m["run"]["status"] == "killed" and m["run"]["signal"] == 9
    assert any("no end record" in i for i in m["incomplete"])
    assert result.incomplete == m["incomplete"]
    assert _compile_info(z)  # what was recorded before the kill is there


def test_corrupted_run_exports_what_it_can_and_lists_what_was_skipped(breaks_run: Run, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(breaks_run.path, copy)
    log = next(p for p in sorted(copy.glob("p*.jsonl")))
    lines = log.read_bytes().split(b"\n")
    bad = len(lines) // 2
    lines[bad] = b'{"kind": "graph", "cid": "0/0", broken'
    # A payload reference that tries to leave the run's blobs/ folder.
    evil = b'{"kind":"artifact","cid":"0/0","name":"evil","payload":{"digest":"../../../../../../etc/passwd","size":9}}'
    lines.insert(bad + 5, evil)
    log.write_bytes(b"\n".join(lines) + b'{"kind":"chromium","name":"cut')  # truncated last line
    run = Run(copy)
    victim = next(c for c in run.model.compiles_in_order() if c.graph("dynamo") is not None)
    graph = victim.graph("dynamo")
    blob_path(copy, graph.code).unlink()
    result, z = _bundle(run, tmp_path / "c.zip")
    m = _manifest(z)
    whys = " | ".join(f"{s['what']}: {s['why']}" for s in m["skipped"])
    assert f"{log.name}:{bad + 1}: corrupted line skipped" in whys
    assert "truncated last line" in whys
    assert graph.code.digest in whys and f"dynamo FX graph of compile {victim.cid}" in whys
    # Everything else is there: the other stages of that compile, the other compiles.
    info = _compile_info(z)
    assert "graph:dynamo" not in _roles(info[victim.cid])
    assert any(r.startswith("graph:") for r in _roles(info[victim.cid]))
    assert len(info) == len(run.model.compiles)
    assert "corrupted line skipped" in z.read("summary.md").decode()
    assert result.skipped
    assert "../../../../../../etc/passwd" in whys  # listed as missing, never read
    assert Path("/etc/passwd").read_bytes()[:20] not in b"".join(z.read(n) for n in z.namelist())
