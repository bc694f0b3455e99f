"""Typed outputs: every ``--json`` report of the CLI, the export bundle's manifest (and
each compile's ``compile.json``), the environment and the language server's command
results, as msgspec Structs. ``dyn-inspect schema --outputs`` prints their JSON Schema;
vscode-extension/schema/outputs.schema.json is that schema, committed, and the
extension's TypeScript types are generated from it.

Keys are only ever added, never renamed or removed (users script against them): where
two outputs used two names for one value (the summary's ``cpu_isa``/``devices``/
``platform``, the manifest's ``cpu_vector_isa``/``gpus``/``os``), both carry both names
with the same value.
"""

from __future__ import annotations

from typing import Any

import msgspec

from dyn_inspect.inspector.outputs import bundle, lsp, reports
from dyn_inspect.inspector.outputs.common import (
    Counts,
    Divergence,
    Environment,
    NodeStatus,
    Output,
    RankGroup,
    SourceLoc,
    environment,
    loc_of,
    source_loc,
    to_json,
)

__all__ = [
    "OUTPUTS",
    "Counts",
    "Divergence",
    "Environment",
    "NodeStatus",
    "Output",
    "RankGroup",
    "SourceLoc",
    "bundle",
    "environment",
    "json_schema",
    "loc_of",
    "lsp",
    "reports",
    "source_loc",
    "to_json",
]

# The top-level outputs, by where they are printed or written (the schema's ``$defs`` also
# hold every part they are made of).
OUTPUTS: dict[str, Any] = {
    "summary --json (run --json)": reports.Summary,
    "breaks --json": reports.BreaksReport,
    "causes --json": reports.CausesReport,
    "causes --fix --json": reports.SitePlansReport,
    "check --json": reports.CheckReport,
    "kernels --json": reports.KernelsReport,
    "kernel --json": reports.KernelReport,
    "diff --json": reports.DiffReport,
    "recompiles --json": reports.RecompilesReport,
    "graph --json": reports.GraphReport,
    "graph --diff --json": reports.GraphDiffReport,
    "cache --json": reports.CacheReport,
    "shapes --json": reports.ShapesReport,
    "cost --json": reports.CostReport,
    "code --json": reports.CodeReport,
    "runs --json": reports.RunsReport,
    "runs --prune --json": reports.PruneReport,
    "import --json": reports.ImportReport,
    "import --json (several nodes)": reports.ImportNodesReport,
    "merge --json": reports.MergeReport,
    "verify --json (verify.json)": reports.VerifyReport,
    "mcp fix_plans": reports.FixPlansReport,
    "mcp failures": reports.FailuresReport,
    "mcp graph (dot)": reports.GraphDotReport,
    "export --json": bundle.ExportResult,
    "manifest.json": bundle.Manifest,
    "compile.json": bundle.BundleCompile,
    "environment": Environment,
    "lsp dynInspect.summary / dynInspect.selectRun": lsp.LspSummary,
    "lsp dynInspect.listRuns": list[lsp.LspRunInfo],
    "lsp dynInspect.showDetails": lsp.LspFunctionDetails,
    "lsp dynInspect.verify": reports.VerifyReport,  # {} without a run
    "lsp dynInspect.verify (failed)": lsp.LspVerifyError,
}


def json_schema() -> dict[str, Any]:
    """The JSON Schema of every typed output: ``$defs`` by name, and ``outputs`` mapping
    each output (a command, a file, an LSP command) to its definition."""
    names = list(OUTPUTS)
    refs, defs = msgspec.json.schema_components([OUTPUTS[n] for n in names], ref_template="#/$defs/{name}")
    return {"outputs": dict(zip(names, refs, strict=True)), "$defs": defs}
