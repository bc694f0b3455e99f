"""A run whose locations name files that are not source (issue 29, items 2-4).

Real recordings (the README's example: a graph break and resume functions; a caught
``fullgraph=True`` failure) are copied and their logs rewritten so that every location
of the program's file names ``/proc/self/environ``, ``/etc/passwd``, a FIFO, ``/dev/zero``,
``/dev/stdin`` or a symlink to the environment. Every reader must return promptly, print
none of those files' contents (this process's environment carries a secret), and exit as
usual; the language server keeps answering; the TUI's code view opens and ``q`` quits.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from corpus_support import EXAMPLES
from dyn_inspect.engine.source_files import MAX_SOURCE_BYTES, read_source, source_line
from dyn_inspect.inspector.run import Run
from lsp_support import lsp_client_fixture, open_doc, start
from process_support import finished

pytestmark = pytest.mark.corpus

CLI = [sys.executable, "-m", "dyn_inspect.cli"]
SECRET = "xyz123-not-for-printing"
TIMEOUT_S = 120  # a hang fails the test instead of hanging the suite (a normal read takes seconds)
KINDS = ["environ", "passwd", "fifo", "zero", "stdin", "symlink"]


def _target(kind: str, work: Path) -> str:
    if kind == "environ":
        return "/proc/self/environ"
    if kind == "passwd":
        return "/etc/passwd"
    if kind == "zero":
        return "/dev/zero"
    if kind == "stdin":
        return "/dev/stdin"
    if kind == "fifo":
        fifo = work / "evil.py"  # a Python name under the run's own directory: only the file type refuses it
        os.mkfifo(fifo)
        return str(fifo)
    link = work / "link.py"
    link.symlink_to("/proc/self/environ")
    return str(link)


def hostile_copy(run: Run, program: Path, kind: str, dest: Path) -> Path:
    """A copy of ``run`` whose every location in ``program`` names the hostile file, and
    whose recorded directory is ``dest/work`` (where the FIFO and the symlink are), the
    copy kept under it as a run is where it was recorded (so that directory is a root)."""
    work = dest / "work"
    work.mkdir(parents=True)
    target = _target(kind, work)
    out = work / ".dyn-inspect" / "runs" / run.path.name
    out.parent.mkdir(parents=True)
    shutil.copytree(run.path / "blobs", out / "blobs")
    old = json.dumps(str(program))
    for log in run.path.glob("*.jsonl"):
        text = log.read_text(encoding="utf-8").replace(old, json.dumps(target))
        text = text.replace(json.dumps(str(program.parent)), json.dumps(str(work)))
        (out / log.name).write_text(text, encoding="utf-8")
    assert json.dumps(target) in "".join(p.read_text() for p in out.glob("p*.jsonl"))
    return out


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYN_INSPECT_")}
    env.update(NO_COLOR="1", DYN_SECRET_TOKEN=SECRET)
    return env


def child(argv: list[str], cwd: Path, hung: str) -> subprocess.CompletedProcess[str]:
    """``argv`` run to its end in ``cwd`` (``hung`` fails the test after TIMEOUT_S). Its stdin
    is a pipe nobody writes to: a reader of /dev/stdin would wait forever on it."""
    proc = subprocess.Popen(argv, cwd=cwd, env=child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return finished(proc, TIMEOUT_S, hung)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return child([*CLI, *args], cwd, f"dyn-inspect {' '.join(args)} did not return")


def assert_nothing_leaked(text: str) -> None:
    assert SECRET not in text
    assert "root:x:0:0" not in text and "root:*:0:0" not in text
    assert "\x00\x00\x00\x00" not in text


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


def _resume_cid(run: Run) -> str:
    return next(c.cid for c in run.model.compiles_in_order() if c.capture and c.capture.co_name and "resume_in" in c.capture.co_name)


@pytest.mark.parametrize("which", ["example", "failure"])
def test_cli_readers_refuse_hostile_sources(which: str, kind: str, example_run: Run, faces_failure_run: Run, tmp_path: Path) -> None:
    run, program = (example_run, EXAMPLES / "train.py") if which == "example" else (faces_failure_run, Path(__file__).parents[1] / "corpus" / "faces_failure.py")
    copy = hostile_copy(run, program, kind, tmp_path)
    at = str(copy)
    commands = [["summary", at], ["check", at, "--json"], ["recompiles", at], ["causes", at], ["breaks", at]]
    if which == "example":
        commands.append(["code", _resume_cid(run), at])
    bundle = tmp_path / "bundle.zip"
    commands.append(["export", at, "-o", str(bundle)])
    for args in commands:
        done = cli(*args, cwd=tmp_path)
        assert "Traceback" not in done.stderr, (args, done.stderr[-2000:])
        assert done.returncode in (0, 1), (args, done.returncode, done.stderr[-2000:])  # check exits 1 on findings
        assert_nothing_leaked(done.stdout + done.stderr)
    with zipfile.ZipFile(bundle) as zf:
        for name in zf.namelist():
            assert_nothing_leaked(zf.read(name).decode("utf-8", "replace"))


# -- the one reader ----------------------------------------------------------------------


def test_read_source_refuses_what_is_not_a_regular_python_file_under_a_root(tmp_path: Path) -> None:
    good = tmp_path / "ok.py"
    good.write_text("x = 1\ny = 2\n")
    roots = [str(tmp_path)]
    assert read_source(str(good), roots) == "x = 1\ny = 2\n"
    assert source_line(str(good), 2, roots) == "y = 2\n"
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "env.py").symlink_to("/proc/self/environ")
    (tmp_path / "notes.txt").write_text("secret")
    big = tmp_path / "big.py"
    with open(big, "wb") as f:
        f.truncate(MAX_SOURCE_BYTES + 1)
    for refused in ("fifo.py", "env.py", "notes.txt", "big.py"):
        assert read_source(str(tmp_path / refused), roots) is None, refused
    for path in ("/proc/self/environ", "/dev/zero", "/dev/stdin", "/etc/passwd", "/dev/null"):
        assert read_source(path, roots) is None, path
    assert read_source(str(good), ["/"]) is None or str(tmp_path).startswith(os.getcwd())  # "/" is no root
    assert read_source(str(good)) is None or str(tmp_path).startswith(os.getcwd())


def _moved_copy(run: Run, cwd: Path, dest: Path) -> Path:
    """A copy of ``run`` at ``dest`` whose recorded directories say ``cwd``."""
    dest.parent.mkdir(parents=True)
    shutil.copytree(run.path / "blobs", dest / "blobs")
    old = json.dumps(str(EXAMPLES))
    for log in run.path.glob("*.jsonl"):
        (dest / log.name).write_text(log.read_text(encoding="utf-8").replace(old, json.dumps(str(cwd))), encoding="utf-8")
    assert Run(dest).model.run_start.cwd == str(cwd)
    return dest


def test_a_recorded_directory_is_a_root_only_for_a_run_under_it(example_run: Run, tmp_path: Path) -> None:
    """A run kept in a repository that says it was recorded in the user's home cannot make
    the home's Python files readable; the same run kept where it says it was recorded reads
    them (the files a run shows are in the directory it was recorded in)."""
    home = tmp_path / "home"
    home.mkdir()
    secret = home / "settings.py"
    secret.write_text(f"TOKEN = {SECRET!r}\n")
    assert example_run.model.run_start.cwd == str(EXAMPLES)
    far = Run(_moved_copy(example_run, home, tmp_path / "repo" / ".dyn-inspect" / "runs" / example_run.path.name))
    assert far.model.processes and read_source(str(secret)) is None
    # nor one kept in a repository under the home that says it was recorded in the home
    # (an ancestor of where it is kept: the adversarial pass's 9c)
    inner = Run(_moved_copy(example_run, home, home / "src" / "repo" / ".dyn-inspect" / "runs" / example_run.path.name))
    assert inner.model.processes and read_source(str(secret)) is None
    near = Run(_moved_copy(example_run, home, home / ".dyn-inspect" / "runs" / example_run.path.name))
    assert near.model.processes and read_source(str(secret)) == secret.read_text()


def test_a_run_kept_in_a_moved_project_reads_the_project_s_files(example_run: Run, tmp_path: Path) -> None:
    """A project copied elsewhere with its runs (a clone, a container's path, a folder that
    moved): the run's recorded paths are read from the project holding it, not from where
    it was recorded (not a root: the run is not kept there), so its root-cause fix is still
    found, in the project's own text, and the recorded folder's other files stay unread."""
    from dyn_inspect.inspector.analysis.causes import recompile_causes
    from dyn_inspect.inspector.source_files import read_source as read_through_run

    recorded = tmp_path / "elsewhere" / "proj"
    recorded.mkdir(parents=True)
    (recorded / "train.py").write_text("# another program that happens to be here\n")
    (recorded / "settings.py").write_text(f"TOKEN = {SECRET!r}\n")
    project = tmp_path / "copy"
    project.mkdir()
    for f in EXAMPLES.glob("*.py"):
        shutil.copy(f, project / f.name)
    dest = project / ".dyn-inspect" / "runs" / example_run.path.name
    dest.mkdir(parents=True)
    shutil.copytree(example_run.path / "blobs", dest / "blobs")
    for log in example_run.path.glob("*.jsonl"):
        (dest / log.name).write_text(log.read_text(encoding="utf-8").replace(str(EXAMPLES), str(recorded)), encoding="utf-8")
    moved = Run(dest)
    assert moved.model.run_start.cwd == str(recorded)
    (cause,) = recompile_causes(moved.model)
    assert cause.fix is not None and cause.fix.code == "torch._dynamo.mark_dynamic(x, 0)"
    assert cause.fix.file == str(recorded / "train.py")  # shown as recorded; faces map it
    assert read_through_run(str(recorded / "train.py")) == (project / "train.py").read_text()
    assert read_through_run(str(recorded / "settings.py")) is None
    assert read_source(str(recorded / "train.py")) is None  # the recorded folder is no root


# -- the language server -----------------------------------------------------------------

client = lsp_client_fixture()


@pytest.mark.parametrize("lsp_kind", ["stdin", "fifo", "zero", "environ"])
async def test_lsp_answers_with_a_hostile_run(client: LanguageClient, lsp_kind: str, example_run: Run, tmp_path: Path) -> None:
    copy = hostile_copy(example_run, EXAMPLES / "train.py", lsp_kind, tmp_path)
    root = tmp_path / "work"
    await start(client, root, {"dynInspect": {"runsDir": str(copy.parent)}})
    doc = root / "train.py"
    doc.write_text((EXAMPLES / "train.py").read_text())
    u = open_doc(client, doc)
    ident = types.TextDocumentIdentifier(uri=u)
    # Every request is answered (a server reading /dev/stdin swallowed its own requests).
    for line in range(30):
        hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(text_document=ident, position=types.Position(line=line, character=0))), timeout=30)
        assert hover is None or isinstance(hover, types.Hover)
        if hover is not None:
            assert_nothing_leaked(str(hover.contents))
    lenses = await asyncio.wait_for(client.text_document_code_lens_async(types.CodeLensParams(text_document=ident)), timeout=30)
    assert lenses is not None
    for lens in lenses:
        assert_nothing_leaked(repr(lens))
    for diags in client.diagnostics.values():
        assert_nothing_leaked(repr(diags))


# -- the TUI -----------------------------------------------------------------------------


PILOT = """
import asyncio, sys
sys.path.insert(0, sys.argv[2])
from dyn_inspect.inspector.run import Run
from tui_support import opened, press

async def drive():
    async with opened(Run(sys.argv[1], use_index=False)) as (app, pilot):
        for view in ("0", "down", "2", "down", "7", "1"):  # code, breaks and failures (the source panes)
            await press(pilot, view)
        await press(pilot, "q")
    assert not app.is_running
    print("quit")

asyncio.run(drive())
"""


@pytest.mark.parametrize("tui_kind", ["fifo", "stdin", "environ"])
def test_tui_code_view_on_a_hostile_location_returns_and_quits(tui_kind: str, example_run: Run, tmp_path: Path) -> None:
    # A Pilot in a child process: a read blocked on a FIFO cannot be interrupted in-process,
    # so only a process boundary turns the old hang into a failure.
    copy = hostile_copy(example_run, EXAMPLES / "train.py", tui_kind, tmp_path)
    done = cli_python(PILOT, str(copy), str(Path(__file__).parents[1]), cwd=tmp_path)
    assert done.returncode == 0 and "quit" in done.stdout, done.stderr[-3000:]
    assert_nothing_leaked(done.stdout + done.stderr)


def cli_python(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return child([sys.executable, "-c", script, *args], cwd, "the TUI did not quit")


def test_hostile_files_are_what_the_test_thinks(tmp_path: Path) -> None:
    """The FIFO and the symlink the copies name really are a FIFO and a link to the environment."""
    work = tmp_path
    assert stat.S_ISFIFO(os.stat(_target("fifo", work)).st_mode)
    assert os.readlink(_target("symlink", work)) == "/proc/self/environ"
