"""A finished run's findings computed when its index is written (lsp/precompute.py), and
the open files' findings built on their own first (``build_index(..., only=...)``), on
real recordings: a fresh server's first publish after a recorded run comes from what the
CLI precomputed and equals what it builds itself; the precomputed findings serve only the
roots they hold for; a restricted build's findings of a file are the whole build's."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from corpus_support import DYN_INSPECT
from dyn_inspect.inspector import index
from dyn_inspect.inspector.locations import run_cwd
from dyn_inspect.inspector.reports.findings import build_index
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace, norm_path
from dyn_inspect.lsp import findings_cache, precompute
from lsp_support import SERVER, corpus_options, ours, start, uri, wait_for

pytestmark = pytest.mark.corpus

ROOT = Path(__file__).parents[2]
LOGS = Path(tempfile.mkdtemp(prefix="dyn-inspect-lsp-log-"))
SERVER_LOG, SECOND_LOG = LOGS / "server.log", LOGS / "second.log"


def _config(log: Path) -> ClientServerConfig:
    return ClientServerConfig(server_command=[*SERVER, "-v", "--log-file", str(log)], server_env={**os.environ, "PYTHONUNBUFFERED": "1"})


async def _serve(lsp_client: LanguageClient):
    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params: None) -> None:
        pass

    yield
    try:
        await lsp_client.shutdown_session()
    except Exception:
        pass


# Two servers for one test: the first starts from the precomputed findings, the second
# (started once the first has exited) from none.
client = pytest_lsp.fixture(config=_config(SERVER_LOG))(_serve)
second_client = pytest_lsp.fixture(config=_config(SECOND_LOG))(_serve)


def _entry(key: bytes) -> Path:
    """Where saved findings under ``key`` are."""
    return index.cache_dir() / "findings" / f"{key.hex()}.msgpack"


def _general_entry(run_dir: Path) -> Path:
    """Where the precompute saves ``run_dir``'s findings (the key without roots)."""
    mac = index.identity(run_dir)
    assert mac is not None, "the run's index covers it"
    return _entry(findings_cache._key_of(run_dir, mac, None))


@pytest.fixture
def recorded(faces_recompiles_run: Run, tmp_path: Path) -> Path:
    """A copy of a recorded run without its index, under ``runs/`` (as a finished recording
    is before anything opened it)."""
    dest = tmp_path / "runs" / faces_recompiles_run.path.name
    shutil.copytree(faces_recompiles_run.path, dest, ignore=shutil.ignore_patterns(index.INDEX_FILE))
    return dest


def _opened(path: Path, roots: list[Path]) -> tuple[Run, Workspace]:
    run = Run(path, skip=index.NOT_FOR_FINDINGS)
    return run, Workspace.for_run(roots, run)


async def _first_diagnostics(client: LanguageClient, run_dir: Path, folder: Path, file: Path) -> list[types.Diagnostic]:
    await start(client, folder, corpus_options(Run(run_dir)))
    u = uri(file)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=u, language_id="python", version=1, text=file.read_text()))
    )
    await wait_for(lambda: bool(ours(client, u)), client, what=f"diagnostics on {file.name}")
    return ours(client, u)


async def test_a_fresh_server_shows_the_findings_the_cli_precomputed_and_one_without_them_the_same(
    client: LanguageClient, second_client: LanguageClient, recorded: Path
) -> None:
    for log in (SERVER_LOG, SECOND_LOG):  # (the servers append: what earlier ones wrote goes)
        log.write_text("")
    cwd = Path(run_cwd(Run(recorded).model) or "")
    program = cwd / "faces_recompiles.py"
    assert program.is_file(), "recorded from the corpus folder"
    os.remove(index.locations(recorded)[1])  # (opening it above built one, in the user cache)
    env = {**os.environ, precompute.MIN_EVENTS_ENV: "0"}
    env.pop(precompute.OFF_ENV, None)
    # The first open of the finished run writes its index; that starts the precompute.
    done = subprocess.run([str(DYN_INSPECT), "summary", str(recorded)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    entry = _general_entry(recorded)
    deadline = time.monotonic() + 120
    while not entry.exists():
        assert time.monotonic() < deadline, "the detached precompute saved nothing"
        time.sleep(0.2)
    run, ws = _opened(recorded, [cwd])
    built = build_index(run, ws)
    peeked = findings_cache.peek(recorded, [cwd])
    assert peeked is not None
    assert dict(peeked[0].files.items()) == built.files and norm_path(str(program)) in built.files

    shown = await _first_diagnostics(client, recorded, cwd, program)
    assert "before reading it" in SERVER_LOG.read_text(), "the first publish came from the saved findings"
    # The same diagnostics from a server that builds them: a second fresh server, once the
    # first has exited, with the saved findings removed. (The first server may have saved
    # the findings it built for its workspace: none of this run's may be left, or the
    # second server starts from them too.)
    await client.shutdown_session()
    entry.unlink(missing_ok=True)
    saved_key = findings_cache._key(run, ws)
    assert saved_key is not None
    _entry(saved_key).unlink(missing_ok=True)
    _general_entry(recorded).unlink(missing_ok=True)
    assert findings_cache.peek(recorded, [cwd]) is None, "saved findings of the run are left"
    served = await _first_diagnostics(second_client, recorded, cwd, program)
    assert "before reading it" not in SECOND_LOG.read_text()
    by_place = lambda d: (d.range.start.line, d.range.start.character, d.message)  # noqa: E731
    assert sorted(served, key=by_place) == sorted(shown, key=by_place)


def test_precomputed_findings_serve_only_roots_they_hold_for(recorded: Path, tmp_path: Path) -> None:
    Run(recorded)  # the index
    assert precompute.precompute(recorded).startswith("saved")
    cwd = Path(run_cwd(Run(recorded).model) or "")
    assert precompute.precompute(recorded) == "already saved"
    # A folder holding the run's working directory: the same answers, so the same findings.
    for roots in ([cwd], [cwd.parent], [cwd, tmp_path]):
        peeked = findings_cache.peek(recorded, roots)
        assert peeked is not None, roots
        run, ws = _opened(recorded, roots)
        assert dict(peeked[0].files.items()) == build_index(run, ws).files, roots
    # Roots without the run's files, or inside its folder: built by the server instead.
    for roots in ([tmp_path], [cwd / "pkg"]):
        assert findings_cache.peek(recorded, roots) is None, roots
        assert findings_cache.load(*_opened(recorded, roots)) is None, roots
    # A described file edited since: not used.
    program = cwd / "faces_recompiles.py"
    st = os.stat(program)
    try:
        os.utime(program, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert findings_cache.peek(recorded, [cwd]) is None
    finally:
        os.utime(program, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_precompute_of_what_is_no_finished_indexed_run_saves_nothing(
    tmp_path: Path, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert precompute.main([str(tmp_path / "missing")]) == 0
    assert precompute.main([]) == 2
    # Grown since its index: the index does not cover it, nothing is read or saved.
    Run(recorded)
    log = next(p for p in sorted(recorded.glob("p*.jsonl")) if p.stat().st_size > 1000)
    with open(log, "ab") as f:
        f.write(log.read_bytes().splitlines(keepends=True)[-1])
    assert precompute.main([str(recorded)]) == 0
    err = capsys.readouterr().err
    assert "skipped" in err and "Traceback" not in err
    assert all(line.startswith(("dyn-inspect precompute:", "usage:")) for line in err.splitlines())


@pytest.mark.parametrize(
    "fixture", ["faces_recompiles_run", "faces_failure_run", "breaks_run", "recompiles_run", "shapes_run", "optim_lr_run"]
)
def test_the_findings_of_a_file_built_alone_are_the_whole_builds(fixture: str, request: pytest.FixtureRequest) -> None:
    recording: Run = request.getfixturevalue(fixture)
    run = Run(recording.path, skip=index.NOT_FOR_FINDINGS)
    whole = build_index(run, Workspace.for_run([ROOT], run))
    assert whole.files, "the recording has findings in this checkout"
    for path, findings in whole.files.items():
        alone = build_index(run, Workspace.for_run([ROOT], run), only={path})
        assert alone.files == {path: findings}, path
        assert alone.baselines == {p: lines for p, lines in whole.baselines.items() if p == path}
        assert (alone.unique_breaks, alone.recompiles, alone.inlined_logging) == (
            whole.unique_breaks,
            whole.recompiles,
            whole.inlined_logging,
        )
    none_open = build_index(run, Workspace.for_run([ROOT], run), only=set())
    assert none_open.files == {} and none_open.status == whole.status
