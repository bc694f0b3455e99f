"""Older torch's graph breaks known only from restart reasons.

Before torch wrote a graph-break record for every break (``dynamo_graph_break_reason``),
a break showed in a TORCH_TRACE log only as the reason Dynamo restarted the frame's
analysis (``compilation_metrics.restart_reasons``; tlparse lists them as "RestartAnalysis"
in failures_and_restarts.html). Those are breaks: each is one, typed by its reason, at
the line where Dynamo split the frame — the line its resume function
(``torch_dynamo_resume_in_<fn>_at_<line>``) names.

The log is real: torch 2.9.1's TORCH_TRACE of tests/corpus/breaks.py (the compat matrix's
fixture), with its graph-break records taken out, which is how such a log reads.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from corpus_support import CORPUS, marker_line
from dyn_inspect.engine.importer import import_trace
from dyn_inspect.inspector.analysis.breaks import break_sites
from dyn_inspect.inspector.run import Run

FIXTURE = Path(__file__).parents[1] / "compat" / "fixtures" / "torch-2.9.1"
# torch's own log of the run: "[2/0] [__graph_breaks] Graph break in user code at F:L"
# (or "Graph break (user stack suppressed due to duplicate graph break) in user code at F:L")
_LOGGED = re.compile(r"\] \[(?P<cid>\d+/\d+)\] \[__graph_breaks\] Graph break (?:\(user stack suppressed[^)]*\) )?in user code at (?P<file>\S+):(?P<line>\d+)")


def _records(text: str) -> list[tuple[dict, list[str]]]:
    """The log's records: each header's JSON and its payload lines."""
    out: list[tuple[dict, list[str]]] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("\t") and out:
            out[-1][1].append(line)
        elif (i := line.find("{")) >= 0:
            out.append((json.loads(line[i:]), [line]))
    return out


def test_restart_reasons_are_breaks_at_their_lines(tmp_path: Path) -> None:
    records = _records(gzip.decompress((FIXTURE / "breaks.log.gz").read_bytes()).decode())
    kept = [lines for head, lines in records if head.get("artifact", {}).get("name") != "dynamo_graph_break_reason"]
    assert len(kept) < len(records)  # the fixture has graph-break records: gone now
    log = tmp_path / "breaks_without_break_records.log"
    log.write_text("".join(line for lines in kept for line in lines))

    # torch's own account: each restarted compile's reasons (its metrics) and where torch
    # logged that compile's break (TORCH_LOGS=graph_breaks, recorded beside the trace)
    restarts = {
        f"{h['frame_id']}/{h['frame_compile_id']}": (h["compilation_metrics"]["co_name"], h["compilation_metrics"]["co_filename"], r)
        for h, _ in records
        if "compilation_metrics" in h
        for r in h["compilation_metrics"].get("restart_reasons") or []
    }
    logged = {m["cid"]: (Path(m["file"]).name, int(m["line"])) for m in _LOGGED.finditer((FIXTURE / "breaks.torch_logs.txt").read_text())}
    assert len(restarts) == 5 and set(restarts) <= set(logged)

    run = Run(import_trace(log, out=tmp_path / "run").run_dir)
    hits = [(e.cid, e) for s in break_sites(run.model) for _, e in s.group.hits]
    assert sorted(cid for cid, _ in hits) == sorted(restarts)
    for cid, event in hits:
        name, file, reason = restarts[cid]
        assert event.gb_type == reason.splitlines()[0]
        assert event.loc.file == file and event.loc.name == name
        if Path(file).name == logged[cid][0]:
            assert event.loc.line == logged[cid][1]  # the line torch logged
        else:
            # torch logged the inlined helper's line; in the frame that broke, the split is
            # at the call of that helper
            assert name == "with_helper" and event.loc.line == marker_line(CORPUS / "breaks.py", "CALLS:helper")
    assert {e.gb_id for _, e in hits} >= {"GB0109"}  # the id in torch's reason text


def test_the_breaks_torch_recorded_are_not_doubled(tmp_path: Path) -> None:
    # the same log with its graph-break records: each break once, from its record
    run = Run(import_trace(FIXTURE / "breaks.log.gz", out=tmp_path / "run").run_dir)
    logged = _LOGGED.findall((FIXTURE / "breaks.torch_logs.txt").read_text())
    assert sum(s.count for s in break_sites(run.model)) == len(logged) == 6
