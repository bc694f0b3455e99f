"""The text faces tell the truth on realistic programs (issue 12 items 9 and 12, issue 19's
summary length): compile failures at the top level of `summary` (text, --json, the
end-of-run summary), `check` and report.html; the user line first for a break inside a
library; `summary` lists the most recompiled functions and points to `--all`.

Lines come from the corpus programs' markers."""

from __future__ import annotations

import html
import json
import zipfile
from pathlib import Path

import pytest

from corpus_support import CORPUS, Corpus, marker_line
from dyn_inspect.cli import main
from dyn_inspect.inspector.export import export_run
from dyn_inspect.inspector.run import Run

FAILURE = CORPUS / "faces_failure.py"
RECOMPILES = CORPUS / "faces_recompiles.py"
pytestmark = pytest.mark.corpus


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


# -- compile failures ------------------------------------------------------------------------


def test_summary_shows_the_fullgraph_failure_with_its_user_line(faces_failure_run: Run, capsys) -> None:
    line = marker_line(FAILURE, "FAIL:fullgraph")
    code, text = run_cli(capsys, "summary", str(faces_failure_run.path))
    assert code == 0
    assert "compile failures: 1" in text
    assert f"faces_failure.py:{line}  strict: Unsupported: Data-dependent branching" in text
    assert "if y.sum() > 0:  # FAIL:fullgraph" in text
    code, out = run_cli(capsys, "summary", str(faces_failure_run.path), "--json")
    data = json.loads(out)
    (f,) = data["compile_failures"]
    assert (f["type"], f["function"], f["count"]) == ("Unsupported", "strict", 1)
    assert (f["user_loc"]["file"], f["user_loc"]["line"]) == (str(FAILURE), line)
    # torch's own exception text, whole
    assert "Detected data-dependent branching" in f["reason"] and "gb0170.html" in f["reason"]
    assert data["graph_breaks"]["total"] == 0 and data["recompiles"] == 0  # in no other count


def test_end_of_run_summary_shows_the_failure(corpus: Corpus) -> None:
    rec = corpus["faces_failure"]
    assert rec.returncode == 0, rec.stderr[-2000:]  # the program caught torch's exception
    line = marker_line(FAILURE, "FAIL:fullgraph")
    assert "compile failures: 1" in rec.stderr
    assert f"faces_failure.py:{line}  strict: Unsupported: Data-dependent branching" in rec.stderr


def test_check_fails_on_a_compile_failure_unless_allowed(faces_failure_run: Run, capsys) -> None:
    line = marker_line(FAILURE, "FAIL:fullgraph")
    code, text = run_cli(capsys, "check", str(faces_failure_run.path))
    assert code == 1
    assert "FAIL compile failures: 1 > 0 allowed" in text and f"faces_failure.py:{line}" in text
    code, out = run_cli(capsys, "check", str(faces_failure_run.path), "--json")
    data = json.loads(out)
    assert code == 1 and not data["ok"] and data["compile_failures"] == 1
    (fail,) = [f for f in data["failures"] if f["check"] == "max_failures"]
    assert fail["items"][0]["line"] == line and fail["items"][0]["type"] == "Unsupported"
    code, text = run_cli(capsys, "check", str(faces_failure_run.path), "--max-failures", "1")
    assert code == 0 and "1 compile failure(s) allowed" in text


def test_check_passes_a_run_without_failures(faces_long_run: Run, capsys) -> None:
    code, out = run_cli(capsys, "check", str(faces_long_run.path), "--json")
    assert code == 0 and json.loads(out)["compile_failures"] == 0


def test_report_pages_have_a_failures_section(faces_failure_run: Run, tmp_path: Path) -> None:
    line = marker_line(FAILURE, "FAIL:fullgraph")
    export_run(faces_failure_run, tmp_path / "b.zip")
    with zipfile.ZipFile(tmp_path / "b.zip") as z:
        page = html.unescape(z.read("report.html").decode())
        md = z.read("summary.md").decode()
    assert '<section id="failures" data-count="1">' in page
    for text in (page, md):
        assert f"faces_failure.py:{line}" in text and "Data-dependent branching" in text
        assert "Detected data-dependent branching" in text and "if y.sum() > 0:" in text
    assert "1 compile failures" in page
    # redacted: the line's text (read from the file) is left out
    export_run(faces_failure_run, tmp_path / "r.zip", redact_source=True)
    with zipfile.ZipFile(tmp_path / "r.zip") as z:
        assert "if y.sum() > 0:" not in z.read("report.html").decode()


# -- the user line first ---------------------------------------------------------------------


def test_library_break_shows_the_user_line_first(faces_recompiles_run: Run, capsys) -> None:
    # Optimizer.step breaks inside torch/optim/optimizer.py; the user's line is opt.step().
    user = marker_line(RECOMPILES, "CALLS:step")
    code, out = run_cli(capsys, "summary", str(faces_recompiles_run.path), "--json")
    (brk,) = [b for b in json.loads(out)["breaks"] if b["in_library"]]
    assert (brk["user_loc"]["file"], brk["user_loc"]["line"]) == (str(RECOMPILES), user)
    assert "torch/optim/" in brk["loc"]["file"]
    assert list(brk)[0] == "user_loc"
    code, text = run_cli(capsys, "summary", str(faces_recompiles_run.path))
    row = next(r for r in text.splitlines() if "torch/optim/" in r)
    assert row.split()[0].endswith(f"faces_recompiles.py:{user}") and "(in torch/optim/optimizer.py:" in row
    assert "site-packages" not in text
    code, text = run_cli(capsys, "breaks", str(faces_recompiles_run.path))
    header = next(r for r in text.splitlines() if r.startswith("hits"))
    assert header.split()[:2] == ["hits", "your"]
    row = next(r for r in text.splitlines() if "torch/optim/" in r)
    assert row.split()[1].endswith(f"faces_recompiles.py:{user}") and row.split()[-1].startswith("torch/optim/optimizer.py:")


def test_end_of_run_summary_shows_the_user_line_first(corpus: Corpus) -> None:
    rec = corpus["faces_recompiles"]
    user = marker_line(RECOMPILES, "CALLS:step")
    row = next(r for r in rec.stderr.splitlines() if "(in torch/optim/optimizer.py:" in r)
    assert row.split()[0] == f"faces_recompiles.py:{user}"  # relative to the program's directory


def test_report_shows_the_user_line_for_a_library_break(faces_recompiles_run: Run, tmp_path: Path) -> None:
    user = marker_line(RECOMPILES, "CALLS:step")
    export_run(faces_recompiles_run, tmp_path / "b.zip")
    with zipfile.ZipFile(tmp_path / "b.zip") as z:
        page = html.unescape(z.read("report.html").decode())
    assert f"<code>faces_recompiles.py:{user}</code>" in page and "torch reports it at <code>torch/optim/optimizer.py:" in page
    # suggestions are the frame-aware ones: a tensor lr, not the int flag
    assert "lr=torch.tensor(0.01)" in page and "allow_unspec_int_on_nn_module" not in page


# -- recompiles summarized ---------------------------------------------------------------------


def test_summary_lists_the_top_recompiled_functions_and_points_to_all(faces_recompiles_run: Run, capsys) -> None:
    m = faces_recompiles_run.model
    recompiled = [f for f in m.frames_in_order() if len(f.compiles) > 1]
    # faces_recompiles.py recompiles seven functions once each and by_dtypes four times
    assert sorted(len(f.compiles) for f in recompiled) == [2, 2, 2, 2, 2, 2, 2, 5]
    code, text = run_cli(capsys, "summary", str(faces_recompiles_run.path))
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  recompiles: "))
    assert lines[start] == f"  recompiles: {len(m.recompiles)} in 8 functions"
    listed = [line for line in lines[start + 1 :] if line.startswith("    ") and not line.startswith("      ")]
    assert len(listed) == 6 and listed[-1].startswith("    … and 3 more functions (3 recompiles)")
    assert listed[0].startswith("    by_dtypes (") and "5 compiles" in listed[0]  # most recompiled first
    assert "`summary --all`" in listed[-1]
    code, text = run_cli(capsys, "summary", str(faces_recompiles_run.path), "--all")
    for frame in recompiled:
        assert f"    {frame.name} (" in text
    assert "… and" not in text
    assert "size mismatch at index 1. expected 8, actual 16" in text


def test_recompiles_text_shows_a_few_older_cache_entries_per_recompile(faces_recompiles_run: Run, capsys) -> None:
    # by_dtypes' fifth compile failed on all four older cache entries: two are listed.
    code, text = run_cli(capsys, "recompiles", str(faces_recompiles_run.path))
    block = text.split("by_dtypes", 1)[1]
    last = block.split("] guard failed")[4]
    assert last.count("also failed") == 2 and "… and 1 older cache entry failed too" in last
    code, out = run_cli(capsys, "recompiles", str(faces_recompiles_run.path), "--json")
    (frame,) = [f for f in json.loads(out)["frames"] if f["function"] == "by_dtypes"]
    assert len(frame["timeline"][4]["failures"]) == 4  # JSON keeps every one


def test_backend_exception_is_a_compile_failure(tmp_path: Path, capsys) -> None:
    # tlparse's comp_failure.log: a backend that raises (BackendCompilerFailed), imported.
    from dyn_inspect.engine.importer import import_trace

    result = import_trace(Path(__file__).parents[1] / "fixtures" / "comp_failure.log", out=tmp_path / "run")
    code, out = run_cli(capsys, "summary", str(result.run_dir), "--json")
    (f,) = json.loads(out)["compile_failures"]
    assert f["type"] == "BackendCompilerFailed" and f["headline"] == "backend='broken_backend' raised: RuntimeError: broken backend"
    assert f["user_loc"]["line"] == 10755 and f["function"] == "fn"
    code, text = run_cli(capsys, "check", str(result.run_dir))
    assert code == 1 and "BackendCompilerFailed: backend='broken_backend' raised: RuntimeError: broken backend" in text


# issue 28 #1: torch's "Attempted to inline function marked as skipped" is a failure that
# killed the program, not a frame torch chose to skip.
def test_a_fullgraph_train_step_failure_that_says_skipped_is_a_failure(train_step_fail_run: Run, capsys) -> None:
    program = CORPUS / "train_step_fail.py"
    line = marker_line(program, "FAIL:zero_grad")
    code, out = run_cli(capsys, "summary", str(train_step_fail_run.path), "--json")
    data = json.loads(out)
    (f,) = data["compile_failures"]
    assert (f["type"], f["function"], f["count"]) == ("Unsupported", "train_step", 1)
    assert (f["user_loc"]["file"], f["user_loc"]["line"]) == (str(program), line)
    assert "marked as skipped" in f["reason"]
    code, text = run_cli(capsys, "summary", str(train_step_fail_run.path))
    assert "compile failures: 1" in text
    code, _ = run_cli(capsys, "check", str(train_step_fail_run.path))
    assert code != 0
