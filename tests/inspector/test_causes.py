"""Root causes (issue 14): the bundled example's five batch-size recompiles are one cause
with one fix where the batch is made; applying the fix and ``dyn-inspect verify`` shows
5 → 0 recompiles, end to end, on real compiles."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_support import CORPUS, EXAMPLES, marker_line
from dyn_inspect.inspector.analysis.causes import causes, recompile_causes
from dyn_inspect.inspector.run import Run

DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.corpus
def test_example_batch_size_recompiles_are_one_cause(example_run: Run) -> None:
    m = example_run.model
    found = recompile_causes(m)
    assert len(m.recompiles) == 5
    assert len(found) == 1
    cause = found[0]
    assert cause.recompile_count == 5 and {c.cid for c in cause.recompiles} == {r.compile.cid for r in m.recompiles}
    assert cause.title.startswith("`x.shape[0]` takes 16, 32")
    assert cause.fix is not None and cause.fix.code == "torch._dynamo.mark_dynamic(x, 0)"
    train = EXAMPLES / "train.py"
    assert Path(cause.fix.file) == train and cause.fix.after_line == _line_of(train, "x, y = torch.randn(bs")
    assert cause.fix.text.startswith(" " * 8)  # the loop body's indentation
    # the frames it shows on: forward and its resume functions, plus the helper
    assert {f.name for f in cause.frames} >= {"forward", "log_stats"}
    # breaks are causes too; the recompile cause costs the most
    everything = causes(m)
    assert everything[0] is not None and everything[0].kind == "recompile"
    assert sum(1 for c in everything if c.kind == "graph_break") == len(m.breaks)


@pytest.mark.corpus
def test_causes_stay_apart_across_functions_and_resets(reset_run: Run) -> None:
    found = recompile_causes(reset_run.model)
    by_frame = {c.frames[0].name: c for c in found}
    assert set(by_frame) == {"warm", "limited"}
    assert by_frame["limited"].recompile_count == 3 and "Float, Double, Half, BFloat16" in by_frame["limited"].title
    assert by_frame["warm"].recompile_count == 1
    assert all(c.fix is None for c in found)  # a dtype change: no fix is known to be right
    # ... and every face says so with the inspector's one sentence
    assert {c.no_fix for c in found} == {"no fix known to be right for this change: see `dyn-inspect recompiles`"}
    out = subprocess.run([str(DYN_INSPECT), "causes", "--json", str(reset_run.path)], capture_output=True, text=True, timeout=120)
    shown = [c for c in json.loads(out.stdout)["causes"] if c["kind"] == "recompile"]
    assert shown and all(c["fix"] is None and c["no_fix"] == found[0].no_fix for c in shown)
    text = subprocess.run([str(DYN_INSPECT), "causes", str(reset_run.path)], capture_output=True, text=True, timeout=120).stdout
    assert text.count(f"({found[0].no_fix})") == len(shown)


@pytest.mark.corpus
def test_one_function_recompiling_alike_before_and_after_a_reset_reads_as_two_causes(docs_pages_run: Run) -> None:
    """docs_pages.py recompiles `fn(x, scale)` on x's length before and after its reset:
    two causes (torch counts them apart), which read identically but for the epoch."""
    line = marker_line(CORPUS / "docs_pages.py", "RECOMPILE:docs_float")
    found = [c for c in recompile_causes(docs_pages_run.model) if f"docs_pages.py:{line})" in c.detail or f"docs_pages.py:{line}," in c.detail]
    assert len(found) == 2, [c.detail for c in recompile_causes(docs_pages_run.model)]
    before, after = sorted(found, key=lambda c: "reset" in c.detail)
    assert before.title == after.title and "reset" not in before.detail
    assert "after torch._dynamo.reset() #1" in after.detail


@pytest.mark.corpus
def test_a_cause_that_ran_into_the_recompile_limit_says_so(docs_pages_run: Run) -> None:
    """docs_pages.py's dynamic=False function recompiles for every length until the limit
    (8), then runs eagerly: the cause said only "8 recompiles"."""
    line = marker_line(CORPUS / "docs_pages.py", "RECOMPILE:docs_limit")
    found = [c for c in recompile_causes(docs_pages_run.model) if f"docs_pages.py:{line}" in c.detail]
    assert len(found) == 1 and found[0].recompile_count == 8, [c.detail for c in found]
    assert "then the recompile limit (8): later calls that fail its guards run eagerly" in found[0].detail
    # and only there: the program's other causes never reached it
    assert sum("recompile limit" in c.detail for c in recompile_causes(docs_pages_run.model)) == 1


# The fix applied and verified end to end (CLI verify driven by the LSP's quick fix and
# command): tests/lsp/test_lsp_verify.py.


def test_verify_without_a_recorded_command_is_one_line(tmp_path: Path) -> None:
    fixture = Path(__file__).parents[1] / "fixtures" / "h200_torch211_toy.log.gz"
    subprocess.run([str(DYN_INSPECT), "import", str(fixture), "--runs-dir", str(tmp_path)], capture_output=True, text=True, check=True)
    done = subprocess.run([str(DYN_INSPECT), "verify", "--runs-dir", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no recorded command" in done.stderr or "nothing to re-run" in done.stderr


@pytest.mark.corpus
def test_check_counts_causes(example_run: Run) -> None:
    fail = subprocess.run([str(DYN_INSPECT), "check", str(example_run.path), "--max-causes", "0", "--json"], capture_output=True, text=True)
    ok = subprocess.run([str(DYN_INSPECT), "check", str(example_run.path), "--max-causes", "1"], capture_output=True, text=True)
    assert fail.returncode == 1 and ok.returncode == 0, (fail.stderr, ok.stderr)
    data = json.loads(fail.stdout)
    item = next(f for f in data["failures"] if f["check"] == "max_causes")
    assert item["actual"] == 1 and item["items"][0]["recompiles"] == 5


@pytest.mark.corpus
def test_recompile_causes_name_their_frame_with_file_and_line(optim_lr_run: Run) -> None:
    """Two functions of one name read alike without the place (issue 28 #3)."""
    import re

    found = recompile_causes(optim_lr_run.model)
    assert found
    for c in found:
        assert re.search(rf"{re.escape(c.frames[0].name)} \(\S+:\d+\)", c.detail), c.detail
