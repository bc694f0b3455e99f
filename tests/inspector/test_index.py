"""The run index (inspector/index.py) on real recordings: a run opened from its index has
the model it has when read from its logs; an index that no longer describes the logs, or
that is not ours, is not used; a face that skips kinds gets the same findings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from dyn_inspect.inspector import index
from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.reports import summary_dict
from dyn_inspect.inspector.reports.findings import build_index, signature
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace

DYN = [sys.executable, "-m", "dyn_inspect.cli"]


def _enc(value: Any) -> Any:
    return msgspec.to_builtins(value) if value is not None else None


def model_digest(run: Run) -> str:
    """Everything the model holds, as JSON (events by value): equal digests, equal models."""
    m: RunModel = run.model
    compiles = [
        {
            "key": [c.log, c.cid],
            "start": _enc(c.start),
            "capture": _enc(c.capture),
            "backward": _enc(c.backward),
            "graphs": _enc(c.graphs),
            "output_codes": _enc(c.output_codes),
            "kernels": [[_enc(k.event), _enc(k.lines), _enc(k.profile)] for k in c.kernels],
            "guards": _enc(c.guards),
            "breaks": _enc(c.breaks),
            "recompile": _enc(c.recompile),
            "symbols": _enc(c.symbols),
            "specializations": _enc(c.specializations),
            "shape_guards": _enc(c.shape_guards),
            "bytecode": _enc(c.bytecode),
            "caches": _enc(c.caches),
            "artifacts": _enc(c.artifacts),
            "unfinished": c.unfinished,
        }
        for c in m.compiles.values()
    ]
    data = {
        "compiles": compiles,
        "frames": [[list(k), f.filename, f.firstlineno, f.name, [c.cid for c in f.compiles], _enc(f.recompile_limit)] for k, f in m.frames.items()],
        "breaks": [[g.key, _enc(g.first), [[log, _enc(e)] for log, e in g.hits]] for g in m.breaks.values()],
        "recompiles": [[r.log, r.compile.cid, _enc(r.event)] for r in m.recompiles],
        "limits": [[log, _enc(e)] for log, e in m.recompile_limits],
        "kernels": [[k.compile.log, k.compile.cid, k.name] for k in m.kernels],
        "profiles": [[log, _enc(e)] for log, e in m.kernel_profiles],
        "aliases": m.path_aliases,
        "launchers": {k: [_enc(v.start), _enc(v.end)] for k, v in m.launchers.items()},
        "processes": {k: [_enc(p.header), _enc(p.start), _enc(p.end)] for k, p in m.processes.items()},
        "run": [_enc(m.run_start), _enc(m.run_end), m.status],
        "counts": [dict(m.kinds), m.event_count, m.last_event_time],
        "unknown": [_enc(u) for u in run.unknown],
        "problems": [str(p) for p in run.problems],
        "logs": {name: [log.offset, log.line_no, log.rejected] for name, log in run.logs.items()},
    }
    return json.dumps(data, sort_keys=True, default=str)


def _copy(run: Run, tmp_path: Path) -> Path:
    """A copy of a recorded run without its index (tests change their copy)."""
    dest = tmp_path / run.path.name
    shutil.copytree(run.path, dest, ignore=shutil.ignore_patterns(index.INDEX_FILE), symlinks=True)
    return dest


def _built(path: Path) -> Path:
    """Where a reader's index of ``path`` is: the user cache, never the run."""
    return index.locations(path)[1]


def _first_process_log(path: Path) -> Path:
    return next(p for p in sorted(path.glob("p*.jsonl")) if p.stat().st_size > 1000)


RECORDED = ["example_run", "recompiles_run", "ranks_run", "reset_run", "killed_run", "shapes_run", "faces_recompiles_run"]


@pytest.mark.parametrize("fixture", RECORDED)
def test_a_run_opened_from_its_index_is_the_run_read_from_its_logs(fixture: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    recorded: Run = request.getfixturevalue(fixture)
    path = _copy(recorded, tmp_path)
    from_logs = Run(path, use_index=False)
    assert not _built(path).exists()  # use_index=False writes none either
    first = Run(path)  # reads the logs, and writes the index (the run is over)
    assert not first.from_index and _built(path).is_file()
    assert not (path / index.INDEX_FILE).exists()  # a reader writes nothing inside the run
    again = Run(path)
    assert again.from_index
    assert model_digest(again) == model_digest(from_logs) == model_digest(first)
    assert json.dumps(summary_dict(again), sort_keys=True, default=str) == json.dumps(summary_dict(from_logs), sort_keys=True, default=str)
    # Following on from the index reads nothing more when nothing was appended.
    assert again.refresh() == 0


def test_the_recorder_writes_its_index_into_the_run_and_readers_use_it(example_run: Run, tmp_path: Path) -> None:
    path = _copy(example_run, tmp_path)
    recorded = Run(path, recorder=True)  # the launcher's end-of-run summary
    assert not recorded.from_index and (path / index.INDEX_FILE).is_file() and not _built(path).exists()
    reader = Run(path)
    assert reader.from_index and not _built(path).exists()  # nothing to build: it read the run's
    assert index.current_file(path) == path / index.INDEX_FILE


@pytest.mark.parametrize("fixture", ["faces_recompiles_run", "breaks_run", "shapes_run", "recompiles_run"])
def test_the_lsp_gets_the_same_findings_from_the_kinds_it_reads(fixture: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    recorded: Run = request.getfixturevalue(fixture)
    path = _copy(recorded, tmp_path)
    full = Run(path, use_index=False)
    Run(path)  # writes the index
    partial = Run(path, skip=index.NOT_FOR_FINDINGS)
    assert partial.from_index and not partial.kept.complete
    assert not any(c.graphs or c.artifacts for c in partial.model.compiles.values())  # skipped indeed
    assert any(c.graphs for c in full.model.compiles.values())
    roots = [Path(__file__).parents[2]]
    a = build_index(full, Workspace.for_run(roots, full))
    b = build_index(partial, Workspace.for_run(roots, partial))
    assert a.files, "the recording has findings in the workspace"
    assert {p: signature(ff) for p, ff in a.files.items()} == {p: signature(ff) for p, ff in b.files.items()}
    assert (a.status, a.unique_breaks, a.recompiles, a.event_count) == (b.status, b.unique_breaks, b.recompiles, b.event_count)
    # A model built from part of the index is never saved as the index.
    before = _built(path).read_bytes()
    assert partial.write_index() is None
    assert _built(path).read_bytes() == before


def test_a_grown_log_is_read_on_from_where_the_index_stopped(recompiles_run: Run, tmp_path: Path) -> None:
    path = _copy(recompiles_run, tmp_path)
    Run(path)
    log = _first_process_log(path)
    lines = log.read_bytes().splitlines(keepends=True)
    # Appended: a graph break seen again (a real line of this run), a kind this version does
    # not know (a newer writer), and a damaged line.
    again = next(line for line in lines if b'"kind":"recompile"' in line)
    with open(log, "ab") as f:
        f.write(again)
        f.write(b'{"kind":"from_the_future","t":1.0,"cid":"0/0","x":1}\n')
        f.write(b'{"kind":"graph_br\n')
    grown = Run(path)
    assert grown.from_index
    from_logs = Run(path, use_index=False)
    assert model_digest(grown) == model_digest(from_logs)
    assert len(grown.model.recompiles) == len(recompiles_run.model.recompiles) + 1
    assert [u.kind for u in grown.unknown] == ["from_the_future"]
    assert any("corrupted line" in str(p) for p in grown.problems)
    # The run was read on from the index: the index is written again, and describes it.
    assert Run(path).from_index and model_digest(Run(path)) == model_digest(from_logs)


def _assert_not_used(path: Path, expected: str) -> None:
    reopened = Run(path)
    assert not reopened.from_index
    assert model_digest(reopened) == expected
    assert Run(path).from_index  # rebuilt: valid again


def test_a_shorter_or_replaced_log_makes_the_index_stale(example_run: Run, tmp_path: Path) -> None:
    path = _copy(example_run, tmp_path)
    Run(path)
    log = _first_process_log(path)
    data = log.read_bytes()
    log.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1])  # one line shorter
    _assert_not_used(path, model_digest(Run(path, use_index=False)))
    # Same length or longer, other first bytes (another run's log under this name).
    data = log.read_bytes()
    log.write_bytes(data.replace(b'"pid":', b'"pid": ', 1) + b"\n")
    _assert_not_used(path, model_digest(Run(path, use_index=False)))
    # A log the index named is gone.
    Run(path)
    os.unlink(log)
    _assert_not_used(path, model_digest(Run(path, use_index=False)))


@pytest.mark.parametrize("where", ["header", "segment", "truncated", "magic"])
def test_a_damaged_index_is_ignored_and_rebuilt(where: str, example_run: Run, tmp_path: Path) -> None:
    path = _copy(example_run, tmp_path)
    expected = model_digest(Run(path, use_index=False))
    Run(path)
    target = _built(path)
    data = bytearray(target.read_bytes())
    if where == "header":
        data[len(index.MAGIC) + 8 + 20] ^= 0x01
    elif where == "segment":
        data[-10] ^= 0x01
    elif where == "truncated":
        data = data[: len(data) // 2]
    else:
        data[:4] = b"nope"
    target.write_bytes(bytes(data))
    _assert_not_used(path, expected)


def test_an_index_made_under_another_key_is_not_trusted(example_run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Somebody else's index (a run sent in a bug report) may carry what our reader made
    safe (terminal escapes): only an index made under this user's key is read."""
    path = _copy(example_run, tmp_path)
    expected = model_digest(Run(path, use_index=False))
    Run(path)
    assert Run(path).from_index
    monkeypatch.setenv(index.KEY_ENV, str(tmp_path / "another-user"))
    _assert_not_used(path, expected)
    assert (tmp_path / "another-user" / "index.key").stat().st_mode & 0o777 == 0o600


def test_an_index_symlinked_out_of_the_run_is_not_read(example_run: Run, tmp_path: Path) -> None:
    path = _copy(example_run, tmp_path)
    Run(path)
    outside = tmp_path / "elsewhere.dyn"
    _built(path).rename(outside)  # (made by this user: trusted but for the symlink)
    (path / index.INDEX_FILE).symlink_to(outside)
    assert not Run(path).from_index


def test_a_newer_index_format_is_rebuilt(example_run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _copy(example_run, tmp_path)
    expected = model_digest(Run(path, use_index=False))
    Run(path)
    monkeypatch.setattr(index, "INDEX_VERSION", index.INDEX_VERSION + 1)
    _assert_not_used(path, expected)


def test_a_running_run_writes_no_index_and_no_index_env_reads_logs(example_run: Run, tmp_path: Path) -> None:
    path = _copy(example_run, tmp_path)
    # Without its ends (launcher and process) the run is still running: no index yet.
    for log in path.glob("*.jsonl"):
        kept = [
            line
            for line in log.read_bytes().splitlines(keepends=True)
            if b'"kind":"run_end"' not in line and b'"kind":"process_end"' not in line
        ]
        log.write_bytes(b"".join(kept))
    live = Run(path)
    assert live.model.status == "running" and not _built(path).exists() and not (path / index.INDEX_FILE).exists()
    # DYN_INSPECT_NO_INDEX: the CLI reads the logs and writes nothing.
    env = {**os.environ, index.NO_INDEX_ENV: "1"}
    done = subprocess.run([*DYN, "summary", str(example_run.path), "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    with_index = subprocess.run([*DYN, "summary", str(example_run.path), "--json"], capture_output=True, text=True, timeout=120)
    assert with_index.returncode == 0, with_index.stderr
    assert json.loads(done.stdout) == json.loads(with_index.stdout)
