"""The IPython extension in a real Jupyter kernel (nbclient + ipykernel): ``%%dyn_inspect``
records the cell in the kernel's own process, shows what it compiled under the cell (HTML
and text), changes none of the cell's other outputs, and lets its exceptions through as they
are. Checked against torch's own counters, read in the same kernel."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbclient
import nbformat
import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from corpus_support import DYN_INSPECT
from inductor_pool import seed
from lsp_support import diagnostics, lsp_client_fixture, ours, wait_for

pytestmark = pytest.mark.corpus

# ipykernel's name for a cell: pid, hash of its text, in the temp folder ($TMPDIR or /tmp)
CELL_FILE = re.compile(r"/(?:[^\s/\"':]+/)*ipykernel_\d+/\d+\.py")
LOG_PREFIX = re.compile(r"^[VIWEDC]\d{4} \d\d:\d\d:\d\d\.\d+ \d+ ", re.M)  # torch's log lines: time and pid
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# torch's own account of the breaks and recompiles, in the cells' stderr (of both notebooks).
DEFINE = """import json, torch
torch._logging.set_logs(graph_breaks=True, recompiles=True)
@torch.compile
def f(x):
    if x.sum() > 0:
        return x * 2
    return x + 1"""
# Cell 3: a data-dependent break in f (cell 2's line 5) and a recompile on the new size.
RECORDED = """print(f(torch.ones(4)))
f(torch.ones(5)).shape"""
COUNTERS = """from torch._dynamo.utils import counters
print(json.dumps({"unique_graphs": counters["stats"]["unique_graphs"]}))"""
NOTHING = "y = 3"
FAILS = """@torch.compile(fullgraph=True)
def g(x):
    if x.sum() > 0:
        return x
    return -x
g(torch.ones(3))"""


def _cells(extension: bool) -> list[str]:
    # The plain notebook has a comment where the other has %%dyn_inspect: the same lines.
    mark = "%%dyn_inspect\n" if extension else "# (not recorded)\n"
    return [
        "%load_ext dyn_inspect" if extension else "pass",
        DEFINE,
        mark + RECORDED,
        COUNTERS,
        "1 + 1",
        mark + NOTHING,
        mark + FAILS,
    ]


def _execute(cells: list[str], cwd: Path) -> Any:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    env_before = dict(os.environ)
    os.environ.pop("DYN_INSPECT_RUNS_DIR", None)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = seed(cwd / "inductor-cache")  # each kernel its own: the same compiles
    try:
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(cwd)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    return nb


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Path]:
    with_ext = tmp_path_factory.mktemp("nb-ext")
    plain = tmp_path_factory.mktemp("nb-plain")
    return _execute(_cells(True), with_ext), _execute(_cells(False), plain), with_ext


def _ours(output: Any) -> bool:
    return output.output_type == "display_data" and "dyn-inspect" in output.get("data", {}).get("text/plain", "")


def _theirs(cell: Any) -> list[dict[str, Any]]:
    """A cell's outputs without ours, without the kernel's execution counts."""
    out = []
    for o in cell.outputs:
        if _ours(o):
            continue
        d = dict(o)
        d.pop("execution_count", None)
        d.pop("traceback", None)  # its frames name the cell's temp file (another hash per kernel)
        for key in ("evalue", "text"):
            if key in d:
                d[key] = CELL_FILE.sub("<cell>", LOG_PREFIX.sub("", d[key]))
        out.append(d)
    return out


def _by_stream(outputs: list[dict[str, Any]]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Each stream's whole text, and the other outputs in order. The kernel flushes stdout
    and stderr separately (ipykernel's OutStream, on its IO thread), so how their chunks
    interleave differs between two runs of the same plain notebook (seen under load: the
    recompile log on stderr before or after the cell's print); within a stream the order holds."""
    streams: dict[str, str] = {}
    others = []
    for o in outputs:
        if o.get("output_type") == "stream":
            streams[o["name"]] = streams.get(o["name"], "") + o["text"]
        else:
            others.append(o)
    return streams, others


def test_other_outputs_are_those_of_the_plain_notebook(notebooks) -> None:
    ext, plain, _ = notebooks
    for i in range(1, len(ext.cells)):  # cell 0 is %load_ext vs pass
        assert _by_stream(_theirs(ext.cells[i])) == _by_stream(_theirs(plain.cells[i])), i


def test_exception_in_a_compiled_function_propagates_unchanged(notebooks) -> None:
    ext, plain, _ = notebooks
    (err,) = [o for o in ext.cells[6].outputs if o.output_type == "error"]
    (plain_err,) = [o for o in plain.cells[6].outputs if o.output_type == "error"]
    assert (err.ename, CELL_FILE.sub("<cell>", err.evalue)) == (plain_err.ename, CELL_FILE.sub("<cell>", plain_err.evalue))
    assert err.ename == "Unsupported"


def _shown(cell: Any) -> list[Any]:
    return [o for o in cell.outputs if _ours(o)]


def test_inline_answer_under_the_recorded_cell(notebooks) -> None:
    ext, _, _ = notebooks
    (shown,) = _shown(ext.cells[2])
    text = shown["data"]["text/plain"]
    html = shown["data"]["text/html"]
    # The break is in f, defined in cell [2] (execution count 2), at its line 5.
    assert "graph break at cell [2], line 5 ×2: `if`/`while` on a tensor's value" in text
    assert "if x.sum() > 0:" in text
    # f's def line, past its @torch.compile (line 3), as every face gives a def in a file
    assert "recompiled f (cell [2], line 4): 2 compiles — tensor 'x' size mismatch at index 0. expected 4, actual 5" in text
    assert "fix: torch._dynamo.mark_dynamic(x, 0)" in text
    assert "<details>" in html and "cell [2], line 5" in html and "mark_dynamic(x, 0)" in html
    # The user stack starts at the cell that called f, not in the kernel's event loop.
    assert "user stack: cell [3], line 2 → cell [2], line 5" in html


def test_nothing_shown_where_nothing_compiled(notebooks) -> None:
    ext, _, _ = notebooks
    assert _shown(ext.cells[4]) == []  # not recorded
    assert _shown(ext.cells[5]) == []  # recorded, compiled nothing


def test_a_failing_cell_shows_its_compile_failure(notebooks) -> None:
    ext, _, _ = notebooks
    (shown,) = _shown(ext.cells[6])
    assert "compile failure at cell [7], line 4: Data-dependent branching" in shown["data"]["text/plain"]


def _runs(cwd: Path) -> list[Path]:
    return sorted(p for p in (cwd / ".dyn-inspect" / "runs").iterdir() if p.is_dir() and not p.is_symlink())


def test_each_recorded_cell_is_a_run_that_matches_torch(notebooks) -> None:
    ext, _, cwd = notebooks
    runs = _runs(cwd)
    assert len(runs) == 2  # cells 3 and 7; cell 6 compiled nothing and left no run
    counters = json.loads(next(o.text for o in ext.cells[3].outputs if o.output_type == "stream"))
    torch_log = "".join(o.text for o in ext.cells[2].outputs if o.output_type == "stream" and o.name == "stderr")
    torch_breaks = re.findall(r"\] Graph break (?:\(user stack suppressed due to duplicate graph break\) )?in user code at (\S+):(\d+)$", torch_log, re.M)
    torch_recompiles = re.findall(r"\] Recompiling function (\S+) in ", torch_log)
    p = subprocess.run([str(DYN_INSPECT), "summary", "--json", str(runs[0])], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["graph_breaks"]["total"] == len(torch_breaks) == 2
    assert {int(line) for _, line in torch_breaks} == {b["user_loc"]["line"] for b in s["breaks"]} == {5}
    assert s["graphs"] == counters["unique_graphs"]
    assert s["recompiles"] == len(torch_recompiles) == 2  # f and its resume function, each on the new size
    assert s["command"][1:] == ["cell [3]"] and s["status"] == "finished"
    text = subprocess.run([str(DYN_INSPECT), "summary", str(runs[0])], capture_output=True, text=True, timeout=120, cwd=cwd).stdout
    assert "cell [2], line 5" in text
    # every CLI listing names cells the same way, never the kernel's temporary file
    for command in ("breaks", "kernels", "shapes"):
        listed = subprocess.run([str(DYN_INSPECT), command, str(runs[0])], capture_output=True, text=True, timeout=120, cwd=cwd)
        assert listed.returncode == 0 and "ipykernel" not in listed.stdout, (command, listed.stdout)
    broke = subprocess.run([str(DYN_INSPECT), "breaks", str(runs[0])], capture_output=True, text=True, timeout=120, cwd=cwd).stdout
    assert "cell [2], line 5" in broke, broke
    failed = subprocess.run([str(DYN_INSPECT), "check", str(runs[1])], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert failed.returncode != 0, failed.stdout


def test_screenshot_of_the_inline_output(notebooks, tmp_path: Path) -> None:
    """The README's picture: the HTML under cell 3 as Chromium draws it."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (tests/run.sh installs it as root)")
    ext, _, _ = notebooks
    (shown,) = _shown(ext.cells[2])
    page = tmp_path / "cell.html"
    page.write_text("<html><body style='background:#fff'>" + shown["data"]["text/html"].replace("<details>", "<details open>") + "</body></html>")
    png = tmp_path / "notebook-cell.png"
    p = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
         f"--screenshot={png}", "--window-size=1100,330", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0 and png.stat().st_size > 5000, p.stderr[-2000:]
    keep = os.environ.get("DYN_INSPECT_SCREENSHOTS")
    if keep:
        shutil.copy(png, Path(keep) / png.name)
    assert sys.executable  # the kernel ran with this interpreter's packages


client = lsp_client_fixture()


async def _open_notebook(client: LanguageClient, folder: Path, options: dict[str, str], cells: list[str] | None = None) -> tuple[str, list[str]]:
    """Start the server on ``folder`` with VS Code's own capabilities (pytest-lsp's copy
    predates its notebook support) and ``options``, and open ``folder/train.ipynb`` holding
    ``cells`` (this module's, by default), as VS Code's notebook editor does: the notebook's
    URI and its cells'."""
    capabilities = client_capabilities("visual-studio-code")
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(dynamic_registration=True, execution_summary_support=True)
    )
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=folder.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)],
            initialization_options={"dynInspect": options},
        )
    )
    assert result.capabilities.notebook_document_sync is not None
    nb_uri = (folder / "train.ipynb").as_uri()
    cells = _cells(True) if cells is None else cells
    uris = [f"vscode-notebook-cell:{(folder / 'train.ipynb').as_posix()}#cell{i}" for i in range(len(cells))]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=nb_uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=u) for u in uris],
            ),
            cell_text_documents=[types.TextDocumentItem(uri=u, language_id="python", version=1, text=t) for u, t in zip(uris, cells, strict=True)],
        )
    )
    return nb_uri, uris


async def test_squiggle_on_the_notebook_cells_line(client: LanguageClient, notebooks) -> None:
    """LSP 3.17 notebook documents, as VS Code's notebook editor sends them: the language
    server puts cell [3]'s run's graph break on cell [2]'s line 5 (the `if` on a tensor),
    hovers there, and moves it with the cell's text when the cell is edited."""
    _, _, cwd = notebooks
    run = _runs(cwd)[0]
    nb_uri, uris = await _open_notebook(client, cwd, {"runsDir": str(run.parent), "run": str(run)})
    # the break on `if x.sum() > 0:` (line 5) and the recompile of f on its `def` (line 4)
    found = await diagnostics(client, uris[1], 2)
    assert [d.range.start.line for d in found] == [3, 4], [(d.range.start.line, d.message) for d in found]
    assert "x.sum() > 0" in DEFINE.splitlines()[4] and "recompile" in found[0].message.lower()
    # the break's user stack from the first cell on, not the kernel's event loop (runpy,
    # asyncio, ipykernel, IPython: eighteen frames before the cells), as under the cell; each
    # frame at its open cell, not at the file IPython compiled the cell under (never written)
    stack = [r.location.uri for r in found[1].related_information or []]
    assert stack == [uris[2], uris[1]], stack
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uris[1]), types.Position(4, 8)))
    assert hover is not None and "graph break" in str(hover.contents).lower()
    assert ours(client, uris[0]) == [] and ours(client, uris[4]) == []
    # the cell edited as a file is: a line added above moves both findings down one line
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri=nb_uri),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=uris[1], version=2),
                            changes=[types.TextDocumentContentChangeWholeDocument(text="# a note\n" + DEFINE)],
                        )
                    ]
                )
            ),
        )
    )
    await wait_for(lambda: sorted(d.range.start.line for d in ours(client, uris[1])) == [4, 5], client, what="the findings one line down")


async def test_the_tui_shows_a_cells_recorded_source(notebooks) -> None:
    """A cell's file (``/tmp/ipykernel_<pid>/<hash>.py``) is never on disk: the TUI's break
    pane shows the line from the source the run recorded, under "cell [2]", where it said
    "source not available here"."""
    from dyn_inspect.inspector.run import Run
    from dyn_inspect.tui.app import InspectorApp
    from tui_support import SIZE, settle, static_text

    _, _, cwd = notebooks
    run = Run(_runs(cwd)[0])
    (file,) = {f for f in run.model.cells if CELL_FILE.fullmatch(f)} & {g.first.loc.file for g in run.model.break_groups()}
    assert not Path(file).exists()
    app = InspectorApp(run.path, run=run, clock=lambda: 0.0, initial_view="breaks", cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        source = static_text(app, "#break-detail")
    assert "cell [2]" in source.splitlines()[0], source
    assert "source not available here" not in source
    marked = next(line for line in source.splitlines() if "❱" in line)
    assert "if x.sum() > 0:" in marked and " 5 " in marked, source


def test_a_recorded_cell_never_stands_in_for_a_real_file(notebooks, tmp_path: Path) -> None:
    """A crafted run whose ``notebook_cell`` names a file that exists (in the form of a cell's
    name) cannot put its text in place of the file's: readers keep reading the file."""
    from dyn_inspect.inspector.run import Run
    from dyn_inspect.inspector.source_files import allow_root, read_source

    _, _, cwd = notebooks
    real_dir = tmp_path / "ipykernel_1"
    real_dir.mkdir()
    real = real_dir / "123.py"
    real.write_text("the real file\n")
    allow_root(str(tmp_path))
    copy = tmp_path / "run"
    shutil.copytree(_runs(cwd)[0], copy, symlinks=True)
    for log in copy.glob("*.jsonl"):
        events = [json.loads(line) for line in log.read_text().splitlines()]
        for e in events:
            if e.get("kind") == "notebook_cell" and e.get("cell") == 2:
                e["file"] = str(real)
        log.write_text("".join(json.dumps(e) + "\n" for e in events))
    run = Run(copy)
    assert str(real) in run.model.cells  # the crafted cell is read ...
    assert read_source(str(real)) == "the real file\n"  # ... and never answers for the file


def test_every_listing_writes_a_cell_one_way(notebooks) -> None:
    """``cell [N], line L`` everywhere (issue 31): ``recompiles``, ``causes`` and the others
    wrote ``cell [2]:4`` where ``summary`` wrote ``cell [2], line 4``."""
    _, _, cwd = notebooks
    run = _runs(cwd)[0]
    said = {}
    for command in ("recompiles", "causes", "summary", "breaks", "check", "graph"):
        p = subprocess.run([str(DYN_INSPECT), command, str(run)], capture_output=True, text=True, timeout=120, cwd=cwd)
        assert "Traceback" not in p.stderr, p.stderr
        said[command] = p.stdout
        assert not re.search(r"cell \[\d+\]:\d", p.stdout), (command, p.stdout)
    # f is defined on cell 2's line 4 (DEFINE), its resume function starts at line 5
    assert "f  cell [2], line 4  (2 compiles" in said["recompiles"], said["recompiles"]
    assert "in f (cell [2], line 4)" in said["causes"], said["causes"]


async def test_an_open_notebook_chooses_its_run_over_a_newer_script_run(client: LanguageClient, notebooks, breaks_run, tmp_path: Path) -> None:
    """The run shown is the newest that compiled code in an open file; a recorded cell's file
    (``/tmp/ipykernel_<pid>/<hash>.py``) is never open, so with a notebook open and a newer
    run of a script beside its runs, the server showed the script's run and the notebook got
    nothing (found by the real-VS-Code e2e). An open cell holding a recorded cell's text now
    counts as that cell's file being open."""
    _, _, cwd = notebooks
    runs = tmp_path / ".dyn-inspect" / "runs"
    runs.mkdir(parents=True)
    first = _runs(cwd)[0]  # cell [3]'s run: it compiled f, defined in cell [2]
    shutil.copytree(first, runs / first.name, symlinks=True)
    newer = runs / "29991231-235959-script"  # run names start with their start time: the newest
    shutil.copytree(breaks_run.path, newer, symlinks=True)
    assert sorted(p.name for p in runs.iterdir())[-1] == newer.name and breaks_run.model.compiles
    _, uris = await _open_notebook(client, tmp_path, {"runsDir": str(runs)})  # no run pinned: the server chooses
    found = await diagnostics(client, uris[1], 2)  # the break on `if x.sum() > 0:` and the recompile of f
    assert sorted(d.range.start.line for d in found) == [3, 4], [(d.range.start.line, d.message) for d in found]


def _virtual_document(cells: list[str]) -> str:
    """The document jupyterlab-lsp 5 opens for a notebook of ``cells``: the code cells joined
    by two blank lines, a line magic as ``get_ipython().run_line_magic(name, args)`` and a
    cell magic's body as a string argument of ``run_cell_magic`` starting on the magic's
    line (its overrides.ts; tests/lsp/test_lsp_virtual_notebooks.py holds a document the
    real client sent, vscode-extension/e2e drives the real client)."""
    out = []
    for cell in cells:
        if cell.startswith("%%"):
            head, body = cell.split("\n", 1)
            name, _, args = head[2:].partition(" ")
            out.append(f'get_ipython().run_cell_magic("{name}", "{args}", """{body}""")')
            continue
        lines = []
        for line in cell.splitlines():
            if line.startswith("%"):
                name, _, args = line[1:].partition(" ")
                line = f'get_ipython().run_line_magic("{name}", " {args}")'
            lines.append(line)
        out.append("\n".join(lines))
    return "\n\n\n".join(out) + "\n"


async def _open_virtual(client: LanguageClient, folder: Path, options: dict[str, str]) -> tuple[str, list[str]]:
    """Start the server as jupyterlab-lsp does (the root: ``folder/.virtual_documents``, no
    workspace folders, no notebook capabilities) and open this module's notebook as its
    virtual document: the document's URI and lines."""
    virtual = folder / ".virtual_documents"
    await client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=virtual.as_uri(), initialization_options={"dynInspect": options})
    )
    uri = (virtual / "train.ipynb").as_uri()
    text = _virtual_document(_cells(True))
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=0, text=text)))
    return uri, text.splitlines()


async def test_squiggles_in_jupyterlab_lsps_virtual_document(client: LanguageClient, notebooks) -> None:
    """jupyterlab-lsp sends the whole notebook as one document: cell [3]'s run's findings are
    published in it at the lines of cell [2]'s block (the break on `if x.sum() > 0:`, the
    recompile on `def f`), the break's stack points into the block of the cell that called f
    (a ``%%dyn_inspect`` cell: its body's first line is the block's second line, as
    jupyterlab-lsp maps it back), a hover there answers, and both follow an edit."""
    _, _, cwd = notebooks
    run = _runs(cwd)[0]
    uri, lines = await _open_virtual(client, cwd, {"run": str(run)})
    found = await diagnostics(client, uri, 2)
    define = lines.index("import json, torch")  # cell [2]'s first line
    assert [d.range.start.line for d in found] == [define + 3, define + 4], [(d.range.start.line, d.message) for d in found]
    assert "recompile" in found[0].message.lower() and "def f(x):" in lines[define + 3]
    brk = found[1]
    assert lines[brk.range.start.line][brk.range.start.character : brk.range.end.character] == "x.sum() > 0"
    calling = next(i for i, line in enumerate(lines) if line.startswith('get_ipython().run_cell_magic("dyn_inspect", "", """print(f('))
    assert [(r.location.uri, r.location.range.start.line) for r in brk.related_information or []] == [(uri, calling + 1), (uri, define + 4)]
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(define + 4, 8)))
    assert hover is not None and "graph break" in str(hover.contents).lower() and hover.range is not None and hover.range.start.line == define + 4
    away = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(define - 1, 0)))
    assert away is None
    # an edit in the cell (a line above the `if`): its findings move with its lines, as in
    # an open VS Code cell, though the cell is no longer the one recorded
    edited = "\n".join(lines).replace("def f(x):\n", "def f(x):\n    # a note\n") + "\n"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=1), [types.TextDocumentContentChangeWholeDocument(text=edited)]
        )
    )
    await wait_for(lambda: sorted(d.range.start.line for d in ours(client, uri)) == [define + 3, define + 5], client, what="the break one line down")
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(define + 5, 8)))
    assert hover is not None and "graph break" in str(hover.contents).lower()


async def test_a_virtual_document_chooses_its_notebooks_run(client: LanguageClient, notebooks, breaks_run, tmp_path: Path) -> None:
    """Unpinned, with the runs in the folder above ``.virtual_documents`` (the root
    jupyterlab-lsp gives) and a newer script run beside the notebook's: the newest run that
    compiled code in a cell the document holds is shown — cell [7]'s, whose fullgraph
    failure is on g's `if` in its ``%%dyn_inspect`` cell."""
    _, _, cwd = notebooks
    runs = tmp_path / ".dyn-inspect" / "runs"
    runs.mkdir(parents=True)
    for run in _runs(cwd):
        shutil.copytree(run, runs / run.name, symlinks=True)
    shutil.copytree(breaks_run.path, runs / "29991231-235959-script", symlinks=True)
    uri, lines = await _open_virtual(client, tmp_path, {})
    await wait_for(lambda: any(d.severity == types.DiagnosticSeverity.Error for d in ours(client, uri)), client, what="g's failure")
    (failure,) = [d for d in ours(client, uri) if d.severity == types.DiagnosticSeverity.Error]
    magic = next(i for i, line in enumerate(lines) if line.startswith('get_ipython().run_cell_magic("dyn_inspect", "", """@torch.compile(fullgraph'))
    # the cell's line n is sent on the block's line n - 1: `if` is the cell's 4th line
    assert _cells(True)[6].splitlines()[failure.range.start.line - magic].strip() == "if x.sum() > 0:", failure


# A print in a compiled function: the break whose preferred fix keeps the output.
PRINTS = """import torch


@torch.compile
def step(x):
    print("step")
    return x + 1"""
PRINTING_CELLS = ["%load_ext dyn_inspect", "%dyn_inspect on", PRINTS, "print(step(torch.ones(3)))"]


async def test_a_quick_fix_on_a_cell_edits_that_cell_and_run_again_it_keeps_its_word(client: LanguageClient, tmp_path: Path) -> None:
    """The quick fix offered on a cell's break (VS Code's notebook editor) edits that cell
    and nothing else; the notebook run again with the edited cell, in a new kernel, has no
    break and prints what it printed (the fix says "output kept"). Verify, which re-runs a
    script, is not offered on a notebook's run."""
    from dyn_inspect.inspector.run import Run
    from dyn_inspect.lsp.verify import VERIFY
    from lsp_support import apply_edit

    before_dir, after_dir = tmp_path / "before", tmp_path / "after"
    before_dir.mkdir()
    after_dir.mkdir()
    before = _execute(PRINTING_CELLS, before_dir)
    (run,) = _runs(before_dir)
    assert len(Run(run).model.break_groups()) == 1
    _, uris = await _open_notebook(client, before_dir, {"run": str(run)}, PRINTING_CELLS)
    (brk,) = await diagnostics(client, uris[2], 1)
    assert PRINTS.splitlines()[brk.range.start.line].strip() == 'print("step")'
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uris[2]), brk.range, types.CodeActionContext(diagnostics=[brk]))
    )
    assert actions
    assert not [a for a in actions if isinstance(a, types.Command) and a.command == VERIFY]
    (fix,) = [a for a in actions if isinstance(a, types.CodeAction) and a.is_preferred]
    assert "output kept" in fix.title and fix.edit is not None
    touched = {c.text_document.uri for c in fix.edit.document_changes or [] if isinstance(c, types.TextDocumentEdit)} | set(fix.edit.changes or {})
    assert touched == {uris[2]}, touched
    fixed = apply_edit(PRINTS, fix.edit, uris[2])
    assert fixed != PRINTS
    after = _execute([*PRINTING_CELLS[:2], fixed, PRINTING_CELLS[3]], after_dir)
    (rerun,) = _runs(after_dir)
    assert Run(rerun).model.break_groups() == [] and Run(rerun).model.compiles
    # (the same text per stream: how a stream is cut into outputs depends on timing)
    assert _by_stream(_theirs(after.cells[3])) == _by_stream(_theirs(before.cells[3]))
    assert _by_stream(_theirs(after.cells[3]))[0]["stdout"].startswith("step\n")
