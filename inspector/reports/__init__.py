"""The report layer: one builder per question, from the analyses' results
(``inspector/analysis/``) to the typed outputs (``inspector/outputs/``) that every face
renders — ``--json`` and the text reports, the TUI, the language server, the bundle. The
builders compute the counts, locations and costs the faces show; the words and the fixes
come from the analyses they call: a headline from ``analysis/messages.py``, a root
cause's fix from ``analysis/causes.py``, and every fix a face offers — a root cause's and
the editor's quick fixes (a ``mark_dynamic`` before a call, ``dynamic=True``, the logging
and ``.item()`` breaks, ``torch.where``, ``@torch.compiler.disable``) — as a plan from
``fix_plans``, gated by ``analysis/fix_kinds.VERIFIED``: the language server only anchors a
plan's edits in the live buffer (``lsp/code_actions.py``), ``causes --fix`` prints them as
diffs.

One module per question:

- ``summary``: the run at a glance (``summary --json``);
- ``breaks``: where it graph-breaks;
- ``recompiles``: why it recompiled;
- ``causes``: which root causes, and the fix for each;
- ``fix_plans``: every fix as a plan (kind, site, edits, behaviour kept, verified-by): a
  cause's for agents and ``causes --fix``, a break's and a recompile's for the editor;
- ``failures``: what failed to compile;
- ``shapes``: which shapes are dynamic;
- ``cache``: what the compile caches did;
- ``code``: what Dynamo made of a compile's code;
- ``graph``: one compile's FX graph, and its diff with another;
- ``kernels``: which kernels it generated, and one kernel's answer;
- ``cost``: what a step costs, and each break per step;
- ``diff``: what changed between two runs;
- ``check``: whether the run passes the CI gate;
- ``divergence``: how the ranks of a distributed run differ;
- ``runs``: which runs are recorded;
- ``verify``: where ``dyn-inspect verify`` re-runs the program, and whether that verifies
  the fix;
- ``timeline``: the compiles in order, where each one's time went, and a Chrome trace;
- ``findings``: what the run says about each workspace file (the language server's index);
- ``screens``: what the TUI's screens show (run state, header, overview, series);
- ``imports``, ``merge``: what an import of TORCH_TRACE logs, or a merge of runs, brought;
- ``reading``: what could not be read of the run;
- ``rounding``: how the builders round what was measured.

This package re-exports what its callers import by name
(``from dyn_inspect.inspector.reports import summary``); the other builders are imported
from their own module.
"""

from __future__ import annotations

from dyn_inspect.inspector.reports.breaks import break_site
from dyn_inspect.inspector.reports.cost import NOT_PROFILED, cost
from dyn_inspect.inspector.reports.divergence import divergence, node_status, rank_group
from dyn_inspect.inspector.reports.failures import failure_site
from dyn_inspect.inspector.reports.kernels import kernel, kernel_profile, vectorization_coverage
from dyn_inspect.inspector.reports.reading import read_warnings
from dyn_inspect.inspector.reports.recompiles import recompile_row
from dyn_inspect.inspector.reports.summary import STDERR_TAIL_LINES, summary, summary_dict

__all__ = [
    "NOT_PROFILED",
    "STDERR_TAIL_LINES",
    "break_site",
    "cost",
    "divergence",
    "failure_site",
    "kernel",
    "kernel_profile",
    "node_status",
    "rank_group",
    "read_warnings",
    "recompile_row",
    "summary",
    "summary_dict",
    "vectorization_coverage",
]
