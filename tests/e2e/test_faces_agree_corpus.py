"""Every face renders one answer, on every corpus program (issue 30): for each question a
count answers — graph break sites, compile failures, recompiles, kernels, root causes,
compiles — the CLI's JSON (``summary --json``, ``causes --json``), the TUI's tab labels
(Pilot, as rendered), report.html's sections and, for the breaks, the language server's
diagnostics say the same. A face that computed its own answer drifted before (the Shapes
tab said "Shapes (0)" over 8 rows; the TUI said torch's words where the CLI said ours).

test_faces_agree.py checks the breaks of breaks.py line by line against the program's
markers; this file checks every recording the session makes against the CLI's JSON."""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from corpus_support import PROGRAMS, Corpus
from dyn_inspect.cli import main
from dyn_inspect.inspector.export.report import build, report_html
from dyn_inspect.inspector.reports.findings import build_index
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace
from dyn_inspect.lsp.diagnostics import break_message
from dyn_inspect.tui.app import InspectorApp
from tui_support import render, settle

pytestmark = pytest.mark.corpus

# question -> (the TUI tab, report.html's section)
FACES = {
    "breaks": ("breaks", "graph-breaks"),
    "failures": ("failures", "failures"),
    "recompiles": ("recompiles", "recompiles"),
    "kernels": ("kernels", "kernels"),
    "causes": ("causes", "root-causes"),
    "compiles": ("compiles", "compiles"),
}


def _cli(*argv: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(list(argv))  # (a crashed run's summary exits non-zero: its JSON is the answer all the same)
    return json.loads(out.getvalue())


def _cli_counts(run: Run) -> tuple[dict[str, int], list[dict], list[dict]]:
    summary = _cli("summary", str(run.path), "--json")
    causes = _cli("causes", str(run.path), "--json")
    counts = {
        "breaks": summary["graph_breaks"]["unique"],
        "failures": sum(f["count"] for f in summary["compile_failures"]),
        "recompiles": summary["recompiles"],
        "kernels": summary["kernels"],
        "causes": len(causes["causes"]),
        "compiles": summary["compiles"],
    }
    return counts, summary["breaks"], causes["causes"]


def _report_counts(run: Run) -> tuple[dict[str, int], str]:
    data = build(
        run.model, run_id=run.path.name, cwd=None, environment={}, redacted=False, selection="the whole run",
        compile_dirs={}, kernel_paths={}, repro_paths={}, skipped=[], scrub=lambda s: s,
    )  # fmt: skip
    page = report_html(data)
    sections = {m[1]: int(m[2]) for m in re.finditer(r'<section id="([\w-]+)" data-count="(\d+)"', page)}
    # (the failures and root-causes sections are left out when there are none)
    return {q: sections.get(section, 0) for q, (_, section) in FACES.items()}, html.unescape(page)


async def _tui_counts(run: Run) -> dict[str, int]:
    app = InspectorApp(run.path, run=run, clock=lambda: 0.0)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, 0.2)
        tabs = app.query_one(TabbedContent)
        out = {}
        for question, (tab, _) in FACES.items():
            label = render(tabs.get_tab(tab).label).strip()
            number = re.search(r"\((\d+)\)$", label)
            assert number is not None, (tab, label)
            out[question] = int(number[1])
        return out


@pytest.mark.parametrize("program", sorted(PROGRAMS))
async def test_the_faces_count_what_the_cli_counts(corpus: Corpus, program: str) -> None:
    run = Run(corpus[program].run_dir)
    cli, breaks, causes = _cli_counts(run)
    report, page = _report_counts(run)
    assert report == cli, f"report.html {report} vs the CLI {cli}"
    tui = await _tui_counts(run)
    assert tui == cli, f"the TUI's tabs {tui} vs the CLI {cli}"
    # What each break is called, and where: report.html and the editor say the CLI's words.
    root = Path(PROGRAMS[program][0])
    index = build_index(run, Workspace.for_run([root], run))
    # (two breaks can sit at one line: torch.compile(DDP(model))'s call line has two)
    said: dict[tuple[str, int], list[str]] = {}
    for ff in index.files.values():
        for brk in ff.breaks:
            said.setdefault((Path(brk.loc.file).name, brk.loc.line), []).append(break_message(brk))
    for b in breaks:
        assert b["headline"] in page, b["headline"]
        user = b["user_loc"]
        if user is not None and Path(user["file"]).resolve().is_relative_to(root.resolve()):
            where = (Path(user["file"]).name, user["line"])
            assert where in said, (where, sorted(said))
            assert any(f": {b['headline']}" in message for message in said[where]), (where, said[where])
    # Each root cause: its title and fix as report.html says them, and a fix inside the
    # program's folder noted by the editor at the line the CLI names, with the same title.
    noted = {(Path(c.loc.file).name, c.loc.line): c for ff in index.files.values() for c in ff.causes}
    for c in causes:
        assert c["title"] in page, c["title"]
        fix = c["fix"]
        if fix is None:
            assert c["no_fix"] is None or c["no_fix"] in page, c["no_fix"]
            continue
        assert fix["code"] in page, fix["code"]
        if Path(fix["file"]).resolve().is_relative_to(root.resolve()) and fix["after_line"] is not None:
            # noted at the line the fix goes after, or at the next one when it goes before that line
            name = Path(fix["file"]).name
            at, below = noted.get((name, fix["after_line"])), noted.get((name, fix["after_line"] + 1))
            found = at if at is not None and not at.before else below if below is not None and below.before else None
            assert found is not None and found.title == c["title"] and found.code == fix["code"], (fix, sorted(noted))
    # Each recompiled function and the suggestion for its recompiles, as report.html says.
    recompiles = _cli("recompiles", str(run.path), "--json")
    for frame in recompiles["frames"]:
        assert frame["function"] in page, frame["function"]
        for entry in frame["timeline"]:
            if entry["suggestion"] is not None:
                assert entry["suggestion"]["text"] in page, entry["suggestion"]["text"]
