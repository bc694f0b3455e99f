"""Deduplicated graph breaks and their attribution to the user's own line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import inspector_program
from corpus_support import CORPUS, EXAMPLES, marker_line
from dyn_inspect.engine.normalizers.graph_breaks import parse_break_text
from dyn_inspect.inspector.analysis.breaks import break_sites
from dyn_inspect.inspector.analysis.messages import headline
from dyn_inspect.inspector.reports import summary
from dyn_inspect.inspector.run import Run
from inspector_program import Recorded

program = inspector_program.program  # the shared fixture


def test_dedup_counts(breaks_run: Run) -> None:
    # breaks.py: five break sites; the helper's is hit twice (inlined, then as its own frame).
    sites = break_sites(breaks_run.model)
    assert len(sites) == 5 and sum(s.count for s in sites) == 6
    top = sites[0]
    assert (top.loc.file, top.loc.line, top.count) == (str(CORPUS / "corpus_helpers.py"), marker_line(CORPUS / "corpus_helpers.py", "BREAK:helper_print"), 2)
    assert len(top.compile_ids) == 2


def test_library_break_attributed_to_the_calling_user_line(program: Recorded) -> None:
    run = Run(program.run_dir)
    [site] = break_sites(run.model, root=program.workdir)
    assert (site.loc.file, site.loc.line) == (str(program.library), marker_line(program.library, "BREAK:lib"))
    assert site.in_library  # under site-packages
    call = marker_line(program.program, "CALLS:lib")
    assert site.user_frame is not None and (site.user_frame.file, site.user_frame.line) == (str(program.program), call)
    assert [(f.file, f.line) for f in site.user_frames] == [(str(program.program), call)]
    # The full stack is kept: the library frame innermost, the user line before it.
    assert [(f.file, f.line) for f in site.stack[-2:]] == [(str(program.program), call), (str(program.library), site.loc.line)]
    # Without a root, the innermost non-library frame is the same line.
    [plain] = break_sites(run.model)
    assert plain.user_frame == site.user_frame
    # A root the program is not in has no frame inside it.
    [outside] = break_sites(run.model, root=program.library.parent)
    assert outside.user_frame is None


def test_helper_in_workspace_is_its_own_user_frame(example_run: Run) -> None:
    sites = {(s.loc.file, s.loc.line): s for s in break_sites(example_run.model, root=EXAMPLES)}
    helper = sites[(str(EXAMPLES / "model_utils.py"), marker_line(EXAMPLES / "model_utils.py", "graph break inside an inlined helper"))]
    # Inside the workspace the helper line itself is the user's; counted for both captures.
    assert helper.user_frame is not None and helper.user_frame.file == str(EXAMPLES / "model_utils.py")
    # Two batch sizes compile the resume frame that calls log_stats twice; each time the
    # break is hit inlined there and again when log_stats runs as its own frame.
    assert helper.count == 4 and len(helper.compile_ids) == 4


# -- torch's debug context: what the break actually hit (issue 28 #7) -----------------------

ERROR_BREAK = CORPUS / "error_break.py"
SIN_ERROR = "sin() takes 1 positional argument but 2 were given"


def test_debug_context_is_parsed_from_torchs_message() -> None:
    # torch 2.13's text for GB0112 (exc.format_graph_break_message): the explanation is
    # empty and the exception is only in the debug context, its continuation lines indented.
    text = (
        "Graph break in user code at /w/p.py:7\n"
        "Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):\n\n"
        "TypeError when making fake tensor call\n"
        "  Explanation: \n"
        "  Hint: Your code may result in an error when running in eager.\n\n"
        f"  Developer debug context: TypeError <built-in method sin of type object at 0x7f00>: {SIN_ERROR}\n"
        "    second line\n\n"
        " For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0112.html\n"
    )
    parsed = parse_break_text(text)
    assert parsed["gb_type"] == "TypeError when making fake tensor call" and parsed["gb_id"] == "GB0112"
    assert parsed["context"] == f"TypeError <built-in method sin of type object at 0x7f00>: {SIN_ERROR}\nsecond line"
    assert parsed["explanation"] == "" and parsed["hints"] == ["Your code may result in an error when running in eager."]


@pytest.mark.corpus
def test_type_error_break_shows_the_calls_own_error(error_break_run: Run) -> None:
    [site] = break_sites(error_break_run.model)
    assert (site.loc.file, site.loc.line) == (str(ERROR_BREAK), marker_line(ERROR_BREAK, "BREAK:type_error"))
    assert site.first.gb_id == "GB0112" and SIN_ERROR in site.context
    # Said first, where torch's type only says where the error surfaced.
    assert headline(site.first) == f"TypeError: {SIN_ERROR}"
    [summary_break] = summary(error_break_run).breaks
    assert SIN_ERROR in summary_break.context and summary_break.headline == f"TypeError: {SIN_ERROR}"


@pytest.mark.corpus
def test_cli_breaks_prints_the_debug_context(error_break_run: Run) -> None:
    base = [sys.executable, "-m", "dyn_inspect.cli", "breaks", str(error_break_run.path)]
    listed = subprocess.run(base, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and SIN_ERROR in listed.stdout  # the headline, in the table
    stacks = subprocess.run([*base, "--stacks"], capture_output=True, text=True, timeout=120)
    assert stacks.returncode == 0 and "torch's debug context: TypeError <built-in method sin" in stacks.stdout
    data = json.loads(subprocess.run([*base, "--json"], capture_output=True, text=True, timeout=120, check=True).stdout)
    assert SIN_ERROR in data["breaks"][0]["context"]


@pytest.mark.corpus
def test_faces_render_the_debug_context(error_break_run: Run) -> None:
    from dyn_inspect.inspector.analysis.messages import headline
    from dyn_inspect.inspector.export.report import build, report_html, summary_markdown
    from dyn_inspect.inspector.reports.findings import BreakFinding
    from dyn_inspect.lsp.hover import _break_md

    [site] = break_sites(error_break_run.model)
    hover = "\n".join(_break_md(BreakFinding(site.group.key, site.loc, site.first, headline(site.first), site.count, site.compile_ids)))
    assert "**torch's debug context:**" in hover and SIN_ERROR in hover
    data = build(
        error_break_run.model, run_id="r", cwd=None, environment={}, redacted=False, selection="all",
        compile_dirs={}, kernel_paths={}, repro_paths={}, skipped=[], scrub=lambda s: s,
    )  # fmt: skip
    assert SIN_ERROR in report_html(data) and "torch's debug context: TypeError" in summary_markdown(data)


BACKEND_BREAK = CORPUS / "backend_break.py"


def _kept_torch_account(program_name: str) -> dict:
    """torch's own account of a plain run of the program (tests/differential/kept/)."""
    return json.loads((CORPUS.parent / "differential" / "kept" / f"{program_name}.json").read_text())


@pytest.mark.corpus
def test_backend_exception_break_keeps_its_type_and_user_line(backend_break_run: Run) -> None:
    # GB0219: the backend raised on the captured graph. torch first logs its warning (the
    # exception's traceback, "WON'T CONVERT refused ...") as a graph-break record, then the
    # break itself. That is one break, typed as torch types it — not an extra `unknown` at
    # `<unknown>:0` — at the line where the graph was being compiled (the debug context's
    # traceback), torch's own location ("Graph break in user code at ...:<def line>") kept.
    account = _kept_torch_account("backend_break")
    [torch_break] = account["truth"]["counters"]["unimplemented"]  # torch's record of the break
    torch_type = torch_break.splitlines()[0]
    logged = [line for line in account["stderr"] if "Graph break in user code at" in line]
    sites = break_sites(backend_break_run.model)
    assert len(sites) == len(logged) == 1
    [site] = sites
    assert (site.first.gb_type, site.first.gb_id) == (torch_type, "GB0219") == ("Backend compiler exception", "GB0219")
    assert int(logged[0].rsplit(":", 1)[1]) == site.loc.line  # torch's location, as it logged it
    assert site.user_frame is not None
    assert (site.user_frame.file, site.user_frame.line) == (str(BACKEND_BREAK), marker_line(BACKEND_BREAK, "BREAK:backend"))
    [shown] = summary(backend_break_run).breaks
    assert (shown.type, shown.user_loc.line if shown.user_loc else None) == (torch_type, marker_line(BACKEND_BREAK, "BREAK:backend"))
    # the frame ran eagerly: torch made the one graph of `taken` (stats.unique_graphs)
    assert summary(backend_break_run).graphs == account["truth"]["counters"]["stats"]["unique_graphs"] == 1


def test_warned_break_without_a_logged_break_is_typed_and_placed() -> None:
    # torch's warning text (as torch 2.13 formats it, format_error_msg_verbose), alone:
    from dyn_inspect.engine.normalizers.graph_breaks import warned_break

    text = (
        "WON'T CONVERT refused /w/backend_break.py line 20\n"
        "========== TorchDynamo Stack Trace ==========\n"
        "Traceback (most recent call last):\n"
        '  File "/w/backend_break.py", line 16, in picky_inductor\n'
        "    raise UnsupportedOperatorException(torch.ops.aten.sin.default)\n"
        "torch._subclasses.fake_tensor.UnsupportedOperatorException: aten.sin.default\n"
    )
    warned = warned_break(text)
    assert warned is not None
    assert (warned.gb_type, warned.loc.file, warned.loc.line, warned.loc.name) == ("UnsupportedOperatorException", "/w/backend_break.py", 20, "refused")
    assert warned_break("Graph break in user code at /w/x.py:3\nGraph Break Reason: x\n") is None


def test_skipped_frame_break_text_keeps_its_type_and_line() -> None:
    # torch's convert_frame logs a break it cannot resume from (with TORCH_LOGS=graph_breaks)
    # in another form: no "Graph Break Reason:", the user code under its own heading, the
    # type in the Unsupported that ends the traceback. Laid out as torch 2.13 writes it.
    text = (
        "Graph break: torch.compile cannot properly resume from this graph break, which results in a skip.\n"
        "torch.compile will skip tracing the frame f (/w/x.py line 3) and fall back to eager.\n"
        "The graph break occurred in the following user code:\n"
        '  File "/w/x.py", line 5, in f\n'
        '    print("hi")\n'
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/t/torch/_dynamo/convert_frame.py", line 1, in _compile\n'
        "    raise\n"
        "torch._dynamo.exc.Unsupported: Failed to trace builtin operator\n"
        "  Explanation: Dynamo does not know how to trace builtin operator `print`\n"
    )
    parsed = parse_break_text(text)
    assert parsed["gb_type"] == "Failed to trace builtin operator"
    assert [(f.file, f.line, f.name) for f in parsed["stack"]] == [("/w/x.py", 5, "f")]
