"""The bundle's pages: summary.md and report.html name every break site (at the lines
the corpus marks), every recompile with a suggestion, every kernel and the compile time
by stage; report.html renders its sections in headless Chromium without touching the
network."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import markupsafe
import pytest

from corpus_support import CORPUS, marker_line
from dyn_inspect.inspector.analysis.causes import causes
from dyn_inspect.inspector.export import export_run
from dyn_inspect.inspector.export.report import BreakRow, ReportData, report_html
from dyn_inspect.inspector.run import Run

SECTIONS = ["overview", "root-causes", "graph-breaks", "recompiles", "kernels", "compile-time", "compiles"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BREAKS = CORPUS / "breaks.py"
RECOMPILES = CORPUS / "recompiles.py"


@pytest.fixture(scope="module")
def pages(breaks_run: Run, recompiles_run: Run, tmp_path_factory: pytest.TempPathFactory) -> dict[str, zipfile.ZipFile]:
    tmp = tmp_path_factory.mktemp("pages")
    out = {}
    for name, run in (("breaks", breaks_run), ("recompiles", recompiles_run)):
        export_run(run, tmp / f"{name}.zip")
        out[name] = zipfile.ZipFile(tmp / f"{name}.zip")
    return out


def test_pages_name_every_break_site_with_its_type_and_hints(pages, breaks_run: Run) -> None:
    md = pages["breaks"].read("summary.md").decode()
    page = html.unescape(pages["breaks"].read("report.html").decode())
    for marker, gb_id in [("BREAK:branch", "GB0170"), ("BREAK:print", "GB0059"), ("BREAK:builtin", "GB0109"), ("BREAK:explicit", "GB0025")]:
        where = f"breaks.py:{marker_line(BREAKS, marker)}"  # relative to the run's directory
        assert where in md and where in page
        assert gb_id in md and gb_id in page
    helper = f"corpus_helpers.py:{marker_line(CORPUS / 'corpus_helpers.py', 'BREAK:helper_print')}"
    assert f"`{helper}`" in md and "×2" in md
    for g in breaks_run.model.break_groups():
        for hint in g.first.hints:
            assert hint in page
    # torch's graph-break pages are plain links, never loaded by the page.
    assert 'href="https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html"' in page


def test_pages_list_recompiles_with_suggestions_kernels_and_stage_times(pages, recompiles_run: Run) -> None:
    md = pages["recompiles"].read("summary.md").decode()
    page = html.unescape(pages["recompiles"].read("report.html").decode())
    for marker in ("RECOMPILE:shape", "RECOMPILE:dtype"):
        assert f"recompiles.py:{marker_line(RECOMPILES, marker)}" in md
    assert "size mismatch at index 0. expected 4, actual 8" in md and "dtype mismatch" in md
    assert "mark_dynamic(x, 0)" in md and "mark_dynamic(x, 0)" in page  # the shape suggestion
    for k in recompiles_run.model.kernels:
        assert k.name in md and k.name in page
    for stage in recompiles_run.model.compile_time_by_stage():
        assert f"| {stage} |" in md and f"<td>{stage}</td>" in page
    # Links into the bundle resolve to files that are there.
    names = set(pages["recompiles"].namelist())
    for k in recompiles_run.model.kernels:
        info = json.loads(pages["recompiles"].read(f"compiles/{next(iter(recompiles_run.model.processes)).removesuffix('.jsonl')}/{k.compile.cid.replace('/', '_')}/compile.json"))
        (path,) = [i["path"] for i in info["files"] if i["role"] == f"kernel:{k.name}"]
        assert path in names and f'href="{path}"' in page


def test_pages_lead_with_the_root_causes_and_their_fix(example_run: Run, tmp_path: Path) -> None:
    """The example's five recompiles have one cause, fixed by one mark_dynamic where the
    batch is made; its graph breaks are causes of their own."""
    export_run(example_run, tmp_path / "e.zip")
    z = zipfile.ZipFile(tmp_path / "e.zip")
    md, page = z.read("summary.md").decode(), html.unescape(z.read("report.html").decode())
    found = causes(example_run.model)
    (fixed,) = [c for c in found if c.fix is not None]
    assert fixed.fix is not None and "mark_dynamic" in fixed.fix.code
    assert page.count('<div class="card cause') == len(found) and f"## Root causes ({len(found)})" in md
    assert fixed.title in page and fixed.fix.code in page and fixed.fix.code in md
    assert page.index('id="root-causes"') < page.index('id="graph-breaks"')


def test_every_value_is_escaped() -> None:
    """Autoescape: text from a run (a graph break's reason quotes user code) never becomes markup."""
    evil = '<img src=x onerror="alert(1)"></code>'
    d = ReportData(run_id=evil, command=[evil], status="finished", exit_code=0, duration_s=1.0,
                   environment={"python": evil}, redacted=False, selection=evil)
    d.breaks.append(BreakRow(evil, evil, evil, "GB0001", 'https://x/"onmouseover="y', 1, evil, evil, [evil], ["0/0"], evil))
    page = report_html(d)
    assert "<img" not in page and 'onerror="' not in page and '"onmouseover="' not in page
    assert str(markupsafe.escape(evil)) in page and evil in html.unescape(page)
    assert page.count("<section ") == 6  # the sections without findings still render


def test_report_is_self_contained(pages) -> None:
    page = pages["breaks"].read("report.html").decode()
    low = page.lower()
    for needle in ("<link", "src=", "@import", "url(", "<iframe", "<img"):
        assert needle not in low, needle
    assert "default-src 'none'" in page  # and the CSP forbids any load the page might try


def _chromium(url: str, tmp: Path) -> tuple[str, list[dict]]:
    """The DOM after load, and the network requests the page itself started."""
    netlog = tmp / "net.json"
    p = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp / 'profile'}",
            f"--log-net-log={netlog}", "--dump-dom", url,
        ],
        capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    log = json.loads(netlog.read_text())
    types = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    # Chromium's own background traffic (update checks) has no page origin.
    page_requests = [
        e["params"]
        for e in log["events"]
        if types.get(e["type"]) == "URL_REQUEST_START_JOB"
        and "url" in e.get("params", {})
        and e["params"].get("initiator") != "not an origin"
    ]
    return p.stdout, page_requests


def test_report_renders_its_sections_in_chromium_without_network(pages, breaks_run: Run, tmp_path: Path) -> None:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    report = tmp_path / "report.html"
    report.write_bytes(pages["breaks"].read("report.html"))
    dom, requests = _chromium(report.as_uri(), tmp_path / "a")
    # The inline script ran and built the table of contents from the rendered sections.
    assert f'data-rendered="{len(SECTIONS)}"' in dom
    for sid in SECTIONS:
        assert f'<section id="{sid}"' in dom
        assert f'href="#{sid}"' in dom
    assert dom.count('class="card gb"') == len(breaks_run.model.break_groups())
    assert requests == []
    # Control: a page that does load something shows up in the same check.
    control = tmp_path / "control.html"
    control.write_text('<html><body><img src="http://127.0.0.1:9/x.png"></body></html>')
    _, control_requests = _chromium(control.as_uri(), tmp_path / "b")
    assert [r["url"] for r in control_requests] == ["http://127.0.0.1:9/x.png"]


def test_pages_show_dynamic_shapes_and_lead_breaks_with_the_users_code(example_run: Run, tmp_path: Path) -> None:
    """The example's recompiles made the batch dim dynamic (automatic dynamic): the report's
    Dynamic shapes section says which dim, per compile; a break's title is what the user
    wrote (`print(...)`), torch's type under it."""
    export_run(example_run, tmp_path / "e.zip")
    page = html.unescape(zipfile.ZipFile(tmp_path / "e.zip").read("report.html").decode())
    assert page.index('id="recompiles"') < page.index('id="shapes"') < page.index('id="kernels"')
    section = page[page.index('id="shapes"') : page.index('id="kernels"')]
    assert "automatic dynamic after a recompile" in section and "x.shape[0]" in section
    assert "torch/nn/modules" not in section  # the user's line, not torch's
    assert "`print(...)` can't be traced" in page and "torch: Failed to trace builtin operator" in page
