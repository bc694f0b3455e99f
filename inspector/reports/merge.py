"""What a merge of the per-node runs of one job did: each node's logs, the clock offset
applied per node, notes (``inspector/merge.py``), with the merged run's summary."""

from __future__ import annotations

from dyn_inspect.inspector.merge import MergeResult
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.reports.summary import summary
from dyn_inspect.inspector.run import Run


def merge_output(result: MergeResult) -> typed.Merge:
    return typed.Merge(
        run=str(result.run_dir),
        inputs=[str(p) for p in result.inputs],
        nodes=result.nodes,
        clock_offsets_s={str(n): round(o, 6) for n, o in sorted(result.offsets.items())},
        logs=[
            typed.MergedLog(log=m.log, from_=m.source, node=m.node, rank=m.rank, events=m.events, skipped_lines=m.skipped_lines)
            for m in result.logs
        ],
        events=result.events,
        blobs=result.blobs,
        notes=list(result.notes),
        duration_s=round(result.duration_s, 3),
    )


def merge_report(result: MergeResult, run: Run) -> typed.MergeReport:
    """What ``merge RUN... --json`` prints: the merge and ``run``'s (the merged run's) summary."""
    return typed.MergeReport(merge=merge_output(result), summary=summary(run))
