"""Bug-report bundles (``dyn-inspect export``, the TUI's ``e``, the editor's command).

``export_run(run, out, ...)`` writes one self-describing zip: manifest, summary and an
offline HTML report, per-compile graphs / repro / guards / output code / kernels, the
run's events and a TORCH_TRACE log for tlparse. See ``docs/export.md``.
"""

from dyn_inspect.inspector.export.bundle import (
    ExportPlan,
    ExportResult,
    Skipped,
    export_run,
    plan_export,
    write_bundle,
)
from dyn_inspect.inspector.export.pictures import PictureOptions

__all__ = ["ExportPlan", "ExportResult", "PictureOptions", "Skipped", "export_run", "plan_export", "write_bundle"]
