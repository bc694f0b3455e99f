"""Typed outputs (inspector/outputs/): every ``--json`` report, the bundle's manifest.json
and compile.json, and the language server's command results decode *strictly* into their
Struct on real runs — every key known, of its type, in field order, none missing or extra
— and the schema the VS Code extension's types are generated from is what
``dyn-inspect schema --outputs`` prints now (so a changed output fails here, not in the
editor)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import msgspec
import pytest
from pytest_lsp import LanguageClient

from corpus_support import CORPUS
from dyn_inspect.inspector import outputs
from dyn_inspect.inspector.outputs import bundle, lsp, reports
from dyn_inspect.inspector.run import Run
from lsp_support import command, corpus_options, diagnostics, line_of, lsp_client_fixture, open_doc, start, strict

DYN = [sys.executable, "-m", "dyn_inspect.cli"]
REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "vscode-extension"
FIXTURES = Path(__file__).parents[1] / "fixtures"

client = lsp_client_fixture()


def cli(*args: str, ok: tuple[int, ...] = (0,)) -> str:
    env = {k: v for k, v in os.environ.items() if k != "DYN_INSPECT_RUNS_DIR"}
    p = subprocess.run([*DYN, *args], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode in ok, p.stderr[-3000:]
    assert "Traceback" not in p.stderr
    return p.stdout


# -- the schema ----------------------------------------------------------------------------


def test_committed_schema_is_what_schema_outputs_prints() -> None:
    """vscode-extension/schema/outputs.schema.json is regenerated with
    ``dyn-inspect schema --outputs > vscode-extension/schema/outputs.schema.json`` (then
    ``npm run generate:outputs`` in vscode-extension/ for the TypeScript types)."""
    printed = cli("schema", "--outputs")
    committed = (EXTENSION / "schema" / "outputs.schema.json").read_text()
    assert printed == committed, "the typed outputs changed: regenerate vscode-extension/schema/outputs.schema.json (see docstring)"
    schema = json.loads(printed)
    assert set(schema["outputs"]) == set(outputs.OUTPUTS)
    for ref in schema["outputs"].values():
        target = ref.get("$ref") or ref["items"]["$ref"]
        assert target.removeprefix("#/$defs/") in schema["$defs"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (the extension's npm test runs the same check)")
def test_generated_typescript_is_current() -> None:
    p = subprocess.run(["node", "scripts/gen-outputs.mjs", "--check"], cwd=EXTENSION, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def test_both_names_of_one_value_are_carried() -> None:
    """Keys are only added: the summary's and the manifest's names for one value both stay."""
    fields = set(outputs.Environment.__struct_fields__)
    assert {"cpu_isa", "cpu_vector_isa", "devices", "gpus", "platform", "os"} <= fields
    assert {"exit_status", "exit_code"} <= set(bundle.ManifestRun.__struct_fields__)
    for struct in (reports.RecompilesReport, reports.VerifyCounts):
        assert {"limit_hits", "recompile_limit_hits"} <= set(struct.__struct_fields__)


# -- the CLI's --json reports on real runs ---------------------------------------------------


def test_summary_breaks_causes_recompiles_kernels_shapes_code(example_run: Run, breaks_run: Run, limit_run: Run) -> None:
    for run in (example_run, breaks_run, limit_run):
        p = str(run.path)
        strict(cli("summary", p, "--json"), reports.Summary)
        strict(cli("breaks", p, "--json"), reports.BreaksReport)
        strict(cli("causes", p, "--json"), reports.CausesReport)
        strict(cli("recompiles", p, "--all", "--json"), reports.RecompilesReport)
        strict(cli("kernels", p, "--json"), reports.KernelsReport)
        strict(cli("shapes", p, "--json"), reports.ShapesReport)
        strict(cli("code", "0/0", p, "--json"), reports.CodeReport)
    kernels = strict(cli("kernels", str(example_run.path), "--json"), reports.KernelsReport).kernels
    line = next(loc for k in kernels for loc in k.source_lines if loc is not None)
    at = f"{line.file}:{line.line}"
    data = strict(cli("kernels", str(example_run.path), "--at", at, "--json"), reports.KernelsReport)
    assert data.at == at and data.kernels
    # a run that recompiled: the timeline carries guard failures and suggestions
    recompiles = strict(cli("recompiles", str(limit_run.path), "--json"), reports.RecompilesReport)
    assert recompiles.limit_hits == recompiles.recompile_limit_hits > 0
    assert any(e.failures and e.suggestion for f in recompiles.frames for e in f.timeline)


def test_summary_of_ranks(ranks_run: Run) -> None:
    data = strict(cli("summary", str(ranks_run.path), "--json"), reports.Summary)
    assert data.ranks == [0, 1] and data.rank_groups
    strict(cli("summary", str(ranks_run.path), "--rank", "1", "--json"), reports.Summary)


def test_summary_of_a_failed_compile(faces_failure_run: Run) -> None:
    data = strict(cli("summary", str(faces_failure_run.path), "--json"), reports.Summary)
    assert data.compile_failures and data.compile_failures[0].user_loc is not None


def test_check_every_failure_kind(example_run: Run, breaks_run: Run, faces_failure_run: Run) -> None:
    limits = ["--max-graph-breaks", "0", "--max-recompiles", "0", "--max-causes", "0", "--max-divergences", "0"]
    data = strict(cli("check", str(example_run.path), *limits, "--baseline", str(breaks_run.path), "--json", ok=(1,)), reports.CheckReport)
    kinds = {type(f) for f in data.failures}
    assert {reports.MaxGraphBreaks, reports.MaxRecompiles, reports.MaxCauses, reports.NewGraphBreaks, reports.NewRecompiles} <= kinds
    failed = strict(cli("check", str(faces_failure_run.path), "--json", ok=(1,)), reports.CheckReport)
    assert [type(f) for f in failed.failures] == [reports.MaxFailures]
    assert strict(cli("check", str(breaks_run.path), "--max-failures", "9", "--json"), reports.CheckReport).ok


def test_diff_graph_runs(example_run: Run, breaks_run: Run) -> None:
    strict(cli("diff", str(example_run.path), str(breaks_run.path), "--json"), reports.DiffReport)
    graph = strict(cli("graph", str(example_run.path), "0/0", "--json"), reports.GraphReport)
    assert graph.nodes and graph.op_histogram
    strict(cli("graph", str(example_run.path), "0/0", "--diff", "0/1", "--json"), reports.GraphDiffReport)
    rows = strict(cli("runs", "--runs-dir", str(example_run.path.parent), "--json"), reports.RunsReport).runs
    assert rows and all(r.error is msgspec.UNSET for r in rows)


def test_runs_lists_an_unreadable_run_and_prunes(example_run: Run, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(example_run.path, runs / example_run.path.name)
    (runs / "20000101-000000-broken").mkdir()
    (runs / "20000101-000000-broken" / "p1.jsonl").write_bytes(b"\xff\xfe not json\n")
    rows = strict(cli("runs", "--runs-dir", str(runs), "--json"), reports.RunsReport).runs
    assert sorted(r.status for r in rows) == ["finished", "unreadable"]
    broken = next(r for r in rows if r.status == "unreadable")
    assert broken.error and broken.command is msgspec.UNSET  # an unreadable run has only id, path, latest, status, error
    pruned = strict(cli("runs", "--runs-dir", str(runs), "--prune", "--keep", "1", "--json"), reports.PruneReport)
    assert pruned.runs_dir == str(runs)


def test_cache(cache_warm_run: Run) -> None:
    data = strict(cli("cache", str(cache_warm_run.path), "--json"), reports.CacheReport)
    assert any(cc.lookups for cc in data.compiles)


def test_shapes_of_dynamic_compiles(shapes_run: Run) -> None:
    data = strict(cli("shapes", str(shapes_run.path), "--json"), reports.ShapesReport)
    assert any(cs.symbols for cs in data.compiles) and any(cs.specializations for cs in data.compiles)


def test_import_and_merge(tmp_path: Path, example_run: Run, breaks_run: Run) -> None:
    one = strict(cli("import", str(FIXTURES / "multi_rank"), "-o", str(tmp_path / "one"), "--json"), reports.ImportReport)
    assert one.import_.files and one.summary.run == str(tmp_path / "one")
    nodes = cli("import", str(FIXTURES / "multi_rank"), str(FIXTURES / "tlparse_multi_rank_logs"), "-o", str(tmp_path / "two"), "--json")
    assert len(strict(nodes, reports.ImportNodesReport).import_) == 2
    merged = strict(cli("merge", str(example_run.path), str(breaks_run.path), "-o", str(tmp_path / "m"), "--json"), reports.MergeReport)
    assert merged.merge.nodes == [0, 1] and "from" in json.loads(nodes)["merge"]["logs"][0]


def test_export_result_manifest_and_compile_json(example_run: Run, faces_failure_run: Run, tmp_path: Path) -> None:
    for run, extra in ((example_run, []), (faces_failure_run, ["--redact-source"])):
        out = tmp_path / f"{run.path.name}.zip"
        result = strict(cli("export", str(run.path), "-o", str(out), *extra, "--json"), bundle.ExportResult)
        assert result.path == str(out) and result.redacted == bool(extra)
        with zipfile.ZipFile(out) as zf:
            manifest = strict(zf.read("manifest.json"), bundle.Manifest)
            assert manifest.environment.cpu_isa == manifest.environment.cpu_vector_isa
            assert manifest.run.exit_status == manifest.run.exit_code
            for c in manifest.compiles:
                info = strict(zf.read(f"{c.dir}/compile.json"), bundle.BundleCompile)
                assert (info.compile_id, info.dir) == (c.compile_id, c.dir)


# -- the language server's command results ---------------------------------------------------


async def test_lsp_command_results(client: LanguageClient, breaks_run: Run, recompiles_run: Run) -> None:
    await start(client, CORPUS, corpus_options(breaks_run))
    u = open_doc(client, CORPUS / "breaks.py")
    await diagnostics(client, u, 4)
    summary = strict(await command(client, "dynInspect.summary"), lsp.LspSummary)
    assert summary.run == str(breaks_run.path)
    (row,) = strict(await command(client, "dynInspect.listRuns"), list[lsp.LspRunInfo])
    assert row.path == str(breaks_run.path)
    found = strict(
        await command(client, "dynInspect.showDetails", str(CORPUS / "breaks.py"), line_of(CORPUS / "breaks.py", "def branchy(") + 1),
        lsp.LspFunctionDetails,
    )
    assert found.found and found.function == "branchy" and found.recompiles == []
    missing = strict(await command(client, "dynInspect.showDetails", str(CORPUS / "breaks.py"), 1), lsp.LspFunctionDetails)
    assert not missing.found and missing.line == 1 and missing.function is msgspec.UNSET
    bad = strict(await command(client, "dynInspect.showDetails"), lsp.LspFunctionDetails)
    assert bad.error
    selected = strict(await command(client, "dynInspect.selectRun", str(recompiles_run.path)), lsp.LspSummary)
    assert selected.recompiles == 2
    v = open_doc(client, CORPUS / "recompiles.py")
    await diagnostics(client, v, 2)
    recompiled = []
    for line in range(1, len((CORPUS / "recompiles.py").read_text().splitlines()) + 1):
        d = strict(await command(client, "dynInspect.showDetails", str(CORPUS / "recompiles.py"), line), lsp.LspFunctionDetails)
        if d.found and d.recompiles:
            recompiled.append(d)
    assert recompiled and recompiled[0].recompiles[0].reasons  # type: ignore[index]
