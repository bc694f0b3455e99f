"""``dyn-inspect causes --fix`` offers the plans the editor offers (issue 58, fixes as data):
on tests/corpus/quick_fixes.py's recording, the plans at each finding's line carry exactly
the titles of the language server's quick fixes there, and each plan's diff, applied with
``git apply`` in a copy of the run's directory, gives the text the quick fix gives."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from corpus_support import DYN_INSPECT, marker_line
from dyn_inspect.inspector.outputs.reports import SitePlansReport
from fix_support import NAME, PROGRAM, apply, fixes_on, record
from lsp_support import strict

pytestmark = pytest.mark.corpus

MARKERS = ("BREAK:print", "BREAK:talky", "BREAK:helper_print", "BREAK:branch", "BREAK:item", "FIX:rows", "RECOMPILE:int")


def test_causes_fix_offers_the_editors_plans_as_diffs(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    rec = record(PROGRAM.read_text(), tmp_path_factory.mktemp("quick-fixes"))
    p = subprocess.run([str(DYN_INSPECT), "causes", "--fix", "--json", str(rec.run.path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    report: SitePlansReport = strict(p.stdout, SitePlansReport)
    assert {plan.path for plan in report.plans} == {NAME}
    text = PROGRAM.read_text()
    seen = 0
    for marker in MARKERS:
        line = marker_line(PROGRAM, marker)
        editor = sorted(a.title for a in fixes_on(rec, text, line))
        plans = [plan for plan in report.plans if plan.line == line]
        assert editor and sorted(plan.title for plan in plans) == editor, (marker, editor, [plan.title for plan in plans])
        for plan in plans:
            copy = tmp_path / f"copy{seen}"
            copy.mkdir()
            shutil.copy(rec.path, copy / NAME)
            done = subprocess.run(["git", "apply", "-"], input=plan.diff, cwd=copy, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            assert (copy / NAME).read_text() == apply(rec, text, marker, plan.title), plan.title
            assert plan.verified_by.startswith("tests/") and "::test_" in plan.verified_by
            seen += 1
    assert seen == len(report.plans)  # every plan is one of the editor's, at its finding's line

    # the text report shows the same plans under their causes
    shown = subprocess.run([str(DYN_INSPECT), "causes", "--fix", str(rec.run.path)], capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr
    for plan in report.plans:
        assert plan.title in shown.stdout
    assert "+torch._dynamo.config.capture_scalar_outputs = True" in shown.stdout
