"""A run directory is untrusted input (issue 19, items 6-12, and the grouped missing blobs).

A recorded corpus run is copied and damaged the way a hostile or unlucky run directory
would be: digests that are paths, symlinks leaving the run, FIFOs and devices named like
logs, a 200k-deep JSON line, a directory named ``p2.jsonl``, a symlink loop, terminal
escapes in a break's text, random bytes instead of logs, a non-integer schema, a run
without its blobs; and a gzip bomb for ``import``. Every command must answer in bounded
time with one warning or one error line, never a traceback, and show what is intact.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from corpus_support import markdown_text
from dyn_inspect.engine.eventlog import LATEST, EventLog
from dyn_inspect.inspector.export import export_run
from dyn_inspect.inspector.run import Run

CLI = [sys.executable, "-m", "dyn_inspect.cli"]
REPORTS = ["summary", "breaks", "recompiles", "kernels", "check"]
pytestmark = pytest.mark.corpus


def cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYN_INSPECT_")}
    env["NO_COLOR"] = "1"
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL)


def copy_run(run: Run, dest: Path) -> Path:
    out = dest / run.path.name
    shutil.copytree(run.path, out, symlinks=True)
    return out


def process_log(run_dir: Path) -> Path:
    """The recorded process's log (a regular file, not one of the damaged names)."""
    return next(p for p in sorted(run_dir.glob("p*.jsonl")) if p.is_file() and not p.is_symlink() and p.stem[1:].isdigit() and p.stat().st_size > 1000)


def first_graph(run: Run):
    c = next(c for c in run.model.compiles_in_order() if c.graph("dynamo") is not None)
    return c, c.graph("dynamo")


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr[-3000:]


# -- 6. a blob digest is a path --------------------------------------------------------


def test_digest_that_is_a_path_is_never_read(breaks_run: Run, tmp_path: Path) -> None:
    secret = tmp_path / "SECRET.txt"
    secret.write_text("TOP-SECRET-CONTENT\n")
    run_dir = copy_run(breaks_run, tmp_path)
    c, graph = first_graph(breaks_run)
    kernel = next(k for k in breaks_run.model.kernels)
    log = run_dir / c.log
    text = log.read_text()
    assert graph.code.digest in text and kernel.event.source.digest in text
    text = text.replace(graph.code.digest, str(secret)).replace(kernel.event.source.digest, "/dev/zero")
    log.write_text(text)
    run = Run(run_dir)
    c2 = run.model.compiles[(c.log, c.cid)]
    assert c2.graph("dynamo").code.digest == str(secret)
    assert run.blob_text(c2.graph("dynamo").code) == ""
    assert not run.blob_exists(c2.graph("dynamo").code)
    k2 = next(k for k in run.model.kernels if k.event.source.digest == "/dev/zero")
    assert run.blob_text(k2.event.source) == ""  # returns at once, reads nothing
    done = cli("graph", str(run_dir), c.cid, timeout=60)
    no_traceback(done)
    assert done.returncode == 2 and "missing" in done.stderr and "0 nodes" not in done.stdout
    assert "TOP-SECRET" not in done.stdout + done.stderr
    for command in REPORTS:
        done = cli(command, str(run_dir), timeout=60)
        no_traceback(done)
        assert "TOP-SECRET" not in done.stdout + done.stderr
    result = export_run(run, tmp_path / "b.zip")
    with zipfile.ZipFile(result.path) as z:
        assert all(b"TOP-SECRET" not in z.read(n) for n in z.namelist())


# -- 7, 8, 9. files that are no logs: symlinks out, FIFOs, devices, deep JSON, dirs, loops --


def _damaged(breaks_run: Run, tmp_path: Path) -> Path:
    run_dir = copy_run(breaks_run, tmp_path)
    log = process_log(run_dir)  # before the damage (names with a leading 0 are never a pid's)
    outside = tmp_path / "outside"
    outside.mkdir()
    # A real event log outside the run (with a distinctive payload) and a symlink to it.
    foreign = EventLog(outside, "p0999.jsonl", strict=True)
    foreign.close()
    with open(outside / "p0999.jsonl", "a") as f:
        f.write(json.dumps({"kind": "raw", "torch_kind": "FOREIGN-EVENT-FROM-OUTSIDE"}) + "\n")
    os.symlink(outside / "p0999.jsonl", run_dir / "p0999.jsonl")
    os.mkfifo(run_dir / "p03.jsonl")  # hangs a reader that opens it blocking
    os.symlink("/dev/zero", run_dir / "p04.jsonl")  # endless
    (run_dir / "p02.jsonl").mkdir()
    os.symlink("p05.jsonl", run_dir / "p05.jsonl")  # a loop
    # A 200k-deep line in the middle of a real log.
    lines = log.read_bytes().splitlines(keepends=True)
    deep = b'{"kind":"raw","torch_kind":"x","t":' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"
    log.write_bytes(b"".join(lines[:3]) + deep + b"".join(lines[3:]))
    return run_dir


def test_files_that_are_no_logs_are_ignored_and_reported(breaks_run: Run, tmp_path: Path) -> None:
    run_dir = _damaged(breaks_run, tmp_path)
    run = Run(run_dir)
    assert len(run.model.compiles) == len(breaks_run.model.compiles)  # the rest is all there
    why = {p.file: p.message for p in run.problems}
    assert "leaves the run directory" in why["p0999.jsonl"]
    assert "FIFO" in why["p03.jsonl"]
    assert "p04.jsonl" in why  # /dev/zero: a symlink out of the run
    assert "directory" in why["p02.jsonl"]
    assert "loop" in why["p05.jsonl"]
    assert any("nested too deeply" in p.message for p in run.problems)
    assert all(not e.__class__.__name__ == "Raw" or e.torch_kind != "FOREIGN-EVENT-FROM-OUTSIDE" for _, e in run.events())
    for command in REPORTS:
        done = cli(command, str(run_dir), timeout=60)
        no_traceback(done)
        assert done.returncode in (0, 1), (command, done.stderr)  # check may fail on breaks: its job
        assert "FOREIGN-EVENT" not in done.stdout
    c, _ = first_graph(run)
    done = cli("graph", str(run_dir), c.cid, timeout=60)
    no_traceback(done)
    assert done.returncode == 0 and " nodes" in done.stdout
    result = export_run(run, tmp_path / "b.zip")
    with zipfile.ZipFile(result.path) as z:
        names = z.namelist()
        assert not any("p0999" in n or "p03." in n or "p04." in n for n in names), names
        assert all(b"FOREIGN-EVENT" not in z.read(n) for n in names)
        manifest = json.loads(z.read("manifest.json"))
    skipped = json.dumps(manifest["skipped"])
    assert "p0999.jsonl" in skipped and "p03.jsonl" in skipped


def test_blob_that_is_a_fifo_or_a_device_is_not_read(breaks_run: Run, tmp_path: Path) -> None:
    run_dir = copy_run(breaks_run, tmp_path)
    run = Run(run_dir)
    c, graph = first_graph(run)
    path = run_dir / "blobs" / graph.code.digest[:2] / graph.code.digest
    path.unlink()
    os.mkfifo(path)
    assert run.blob_text(graph.code) == ""
    path.unlink()
    os.symlink("/dev/zero", path)
    assert run.blob_text(graph.code) == ""
    done = cli("graph", str(run_dir), c.cid, timeout=60)
    no_traceback(done)
    assert done.returncode == 2 and "missing" in done.stderr


# -- 10. import: a gzip bomb -----------------------------------------------------------


def test_import_of_a_gzip_bomb_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.log.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as f:
        f.write(b'V1130 02:38:28.010000 580 torch/_dynamo/utils.py:1] {"dynamo_start": "')
        chunk = b"a" * (1 << 20)
        for _ in range(80):  # 80 MiB without a newline (the was 2 GiB)
            f.write(chunk)
    assert bomb.stat().st_size < 1 << 20
    runs = tmp_path / "runs"
    runs.mkdir()
    old = runs / "20260101-000000-abcdef"
    old.mkdir()
    EventLog(old, "launcher.jsonl", strict=True).close()
    os.symlink(old.name, runs / LATEST)
    done = cli("import", str(bomb), "--runs-dir", str(runs), timeout=120)
    no_traceback(done)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "longer than 64 MiB" in lines[0] and "--max-line-mb" in lines[0], done.stderr
    assert sorted(os.listdir(runs)) == [old.name, LATEST]  # no partial run
    assert os.readlink(runs / LATEST) == old.name
    # -o: the directory it would have created is gone too.
    done = cli("import", str(bomb), "-o", str(tmp_path / "out"), timeout=120)
    assert done.returncode == 2 and not (tmp_path / "out").exists()


def test_import_size_bound_can_be_raised(tmp_path: Path) -> None:
    fixture = Path(__file__).parents[1] / "fixtures" / "h200_torch211_toy.log.gz"
    with gzip.open(fixture, "rb") as f:
        size = len(f.read())
    assert size > 1 << 20, "the fixture must be larger than the small bound used here"
    done = cli("import", str(fixture), "-o", str(tmp_path / "small"), "--max-size-mb", "1", timeout=120)
    no_traceback(done)
    assert done.returncode == 2 and "--max-size-mb" in done.stderr and not (tmp_path / "small").exists()
    done = cli("import", str(fixture), "-o", str(tmp_path / "big"), "--max-size-mb", "64", "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    assert Run(tmp_path / "big").model.compiles


# -- 11. terminal control characters in log text ------------------------------------------

ESCAPES = "\x1b[2J\x1b]0;PWNED_TITLE\x07\x9b31m"


def test_terminal_escapes_from_the_log_are_shown_not_sent(breaks_run: Run, tmp_path: Path) -> None:
    run_dir = copy_run(breaks_run, tmp_path)
    for log in run_dir.glob("p*.jsonl"):
        lines = []
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event.get("kind") == "graph_break":
                event["gb_type"] = f"hostile type {ESCAPES}"
                event["explanation"] = f"hostile explanation {ESCAPES}"
                if event.get("loc"):
                    event["loc"]["name"] = f"fn{ESCAPES}"
            lines.append(json.dumps(event))
        log.write_text("\n".join(lines) + "\n")
    for command in ["summary", "breaks", "check"]:
        for extra in ([], ["--json"]):
            done = cli(command, str(run_dir), *extra, timeout=60)
            no_traceback(done)
            out = done.stdout + done.stderr
            assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out, command
            if not extra and command == "breaks":
                assert "hostile type \\x1b[2J" in out  # visible, for what it is
    run = Run(run_dir)
    # What the TUI and the language server read: the model holds the text, made visible.
    for group in run.model.break_groups():
        b = group.first
        for text in (b.gb_type, b.explanation or "", b.loc.name or ""):
            assert "\x1b" not in text and "\x07" not in text, text
    assert any("hostile type \\x1b[2J" in g.first.gb_type for g in run.model.break_groups())
    result = export_run(run, tmp_path / "b.zip")
    with zipfile.ZipFile(result.path) as z:
        for name in ["summary.md", "report.html", "index.md"] + [n for n in z.namelist() if n.endswith(".txt")]:
            data = z.read(name).decode()
            assert "\x1b" not in data and "\x07" not in data and "\x9b" not in data, name
        assert "hostile type \\x1b[2J" in markdown_text(z.read("summary.md").decode())


def test_safe_text_keeps_newlines_and_tabs() -> None:
    from dyn_inspect.inspector.console import safe_text

    assert safe_text("a\tb\nc") == "a\tb\nc"
    assert safe_text("\x1b[2J\x07\r\x9b\u202e") == "\\x1b[2J\\x07\\x0d\\x9b\\u202e"


# -- 12. what is not a run, a bad schema, missing blobs -----------------------------------


def test_random_bytes_are_not_a_run_for_any_command(tmp_path: Path) -> None:
    run_dir = tmp_path / "20260101-000000-random"
    run_dir.mkdir()
    (run_dir / "blobs").mkdir()
    rnd = __import__("random").Random(19)
    for name in ("launcher.jsonl", "p1.jsonl", "p2.jsonl"):
        (run_dir / name).write_bytes(bytes(rnd.randrange(256) for _ in range(20000)) + b"\n")
    answers = set()
    for command in REPORTS + ["export"]:
        extra = ["-o", str(tmp_path / "x.zip")] if command == "export" else []
        done = cli(command, str(run_dir), *extra, timeout=60)
        no_traceback(done)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and "is not a dyn-inspect run" in lines[0], (command, done.stderr)
        answers.add(lines[0])
    done = cli("graph", str(run_dir), "0/0", timeout=60)
    assert done.returncode == 2 and done.stderr.splitlines() == [next(iter(answers))]
    assert len(answers) == 1  # the same answer from every command
    assert not (tmp_path / "x.zip").exists()


def test_non_integer_schema_is_refused(breaks_run: Run, tmp_path: Path) -> None:
    run_dir = copy_run(breaks_run, tmp_path)
    for log in run_dir.glob("*.jsonl"):
        lines = log.read_text().splitlines()
        header = json.loads(lines[0])
        assert header["kind"] == "log_header"
        header["schema"] = "1; DROP"
        log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    for command in ["summary", "breaks"]:
        done = cli(command, str(run_dir), timeout=60)
        no_traceback(done)
        assert done.returncode == 2 and "invalid log header" in done.stderr, done.stderr


def test_missing_blobs_warn_in_graph_and_are_grouped_in_export(breaks_run: Run, tmp_path: Path) -> None:
    run_dir = copy_run(breaks_run, tmp_path)
    shutil.rmtree(run_dir / "blobs")
    (run_dir / "blobs").mkdir()
    run = Run(run_dir)
    c, _ = first_graph(run)
    done = cli("graph", str(run_dir), c.cid, timeout=60)
    no_traceback(done)
    assert done.returncode == 2 and "missing from the run" in done.stderr and "0 nodes" not in done.stdout
    result = export_run(run, tmp_path / "b.zip")
    missing = [s for s in result.skipped if "missing" in s.why]
    assert len(missing) == 1 and missing[0].what.endswith(" payloads"), [str(s) for s in result.skipped][:5]
    count = int(missing[0].what.split()[0])
    assert count > 10
    with zipfile.ZipFile(result.path) as z:
        manifest = json.loads(z.read("manifest.json"))
        index = z.read("index.md").decode()
    assert sum("missing from the run directory" in item["why"] for item in manifest["skipped"]) >= count  # each, for tools
    assert sum("missing from the run directory" in line for line in index.splitlines()) == 1


# -- file modes: 0600 files, 0700 directories, whatever the umask ---------------------------


def test_everything_written_is_private_under_a_permissive_umask(tmp_path: Path) -> None:
    fixture = Path(__file__).parents[1] / "fixtures" / "h200_torch211_toy.log.gz"
    work = tmp_path / "work"
    work.mkdir()
    script = f"""
import os, subprocess, sys
os.umask(0)
cli = {CLI!r}
def run(*a):
    done = subprocess.run([*cli, *a], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (a, done.stderr)
    return done
run("import", {str(fixture)!r})
from dyn_inspect.inspector.run import open_run
r = open_run(None)
cid = next(c.cid for c in r.model.compiles_in_order() if c.graph("dynamo") is not None)
run("export", "-o", "bundle.zip")
run("graph", cid, "--dot", "graph.dot")
run("graph", cid, "--svg", "graph.svg")
subprocess.run([*cli, "lsp", "--log-file", "lsp.log"], stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYN_INSPECT_")}
    done = subprocess.run([sys.executable, "-c", script], cwd=work, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    modes = {}
    for path in [work / ".dyn-inspect", *sorted((work / ".dyn-inspect").rglob("*"))]:
        if not path.is_symlink():
            modes[str(path.relative_to(work))] = path.stat().st_mode & 0o777
    assert modes[".dyn-inspect"] == 0o700 and modes[".dyn-inspect/runs"] == 0o700
    wrong = {p: oct(m) for p, m in modes.items() if m != (0o700 if (work / p).is_dir() else 0o600)}
    assert wrong == {}
    outputs = [work / "bundle.zip", work / "graph.dot", work / "lsp.log"]
    outputs.append(work / "graph.svg" if (work / "graph.svg").exists() else work / "graph.dot")
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in outputs} == {p.name: "0o600" for p in outputs}
    with zipfile.ZipFile(work / "bundle.zip") as z:
        wrong_entries = {i.filename: oct(i.external_attr >> 16) for i in z.infolist() if (i.external_attr >> 16) & 0o777 != 0o600}
    assert wrong_entries == {}


# -- the language server on a run with a FIFO named like a log ------------------------------


def _lsp_message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def test_language_server_reads_a_run_with_a_fifo_and_exits_on_request(breaks_run: Run, tmp_path: Path) -> None:
    """A FIFO named p03.jsonl hung the server's reader, so it never answered shutdown."""
    workspace = tmp_path / "ws"
    runs = workspace / ".dyn-inspect" / "runs"
    runs.mkdir(parents=True)
    run_dir = copy_run(breaks_run, runs)
    os.mkfifo(run_dir / "p03.jsonl")  # alone: nothing before it in the listing fails first
    os.symlink(run_dir.name, runs / LATEST)
    uri = workspace.as_uri()
    source = Path(__file__).parents[1] / "corpus" / "breaks.py"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYN_INSPECT_")}
    proc = subprocess.Popen([*CLI, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=workspace, env=env)
    assert proc.stdin is not None
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": uri, "workspaceFolders": [{"uri": uri, "name": "ws"}], "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": source.as_uri(), "languageId": "python", "version": 1, "text": source.read_text()}}},
    ]
    import threading
    import time

    # stdout and stderr read as they come: the wait below is on the server having read the
    # run (it tells the client "showing run <dir>" once it has), not on a sleep
    got: dict[str, bytearray] = {"out": bytearray(), "err": bytearray()}

    def drain(name: str, fd: int) -> None:
        for chunk in iter(lambda: os.read(fd, 65536), b""):
            got[name] += chunk

    assert proc.stdout is not None and proc.stderr is not None
    readers = [threading.Thread(target=drain, args=(n, st.fileno()), daemon=True) for n, st in (("out", proc.stdout), ("err", proc.stderr))]
    for r in readers:
        r.start()
    try:
        for m in messages:
            proc.stdin.write(_lsp_message(m))
        proc.stdin.flush()
        deadline = time.monotonic() + 120
        while f"showing run {run_dir}".encode() not in got["out"]:
            assert proc.poll() is None, bytes(got["err"]).decode()[-2000:]
            assert time.monotonic() < deadline, "the server never said it shows the run: " + bytes(got["out"]).decode()[-2000:]
            time.sleep(0.05)
        proc.stdin.write(_lsp_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None}))
        proc.stdin.write(_lsp_message({"jsonrpc": "2.0", "method": "exit", "params": None}))
        proc.stdin.flush()
        proc.wait(timeout=60)
        for r in readers:
            r.join(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    out, err = bytes(got["out"]), bytes(got["err"])
    assert proc.returncode == 0, err.decode()[-2000:]
    assert b"Traceback" not in err
    assert b'"id": 2' in out or b'"id":2' in out  # shutdown was answered


def test_fifos_in_a_run_hang_neither_prune_nor_the_follower(tmp_path: Path) -> None:
    """`runs prune` reads each log's header for its writer's pid, and the TUI tails
    output.log: both opened the file plainly, and a FIFO there blocked them for good."""
    import threading

    from dyn_inspect.cli.commands.runs import _header_pids
    from dyn_inspect.tui.follow import OUTPUT_LOG, OutputBuffer, RunFollower

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "p01.jsonl").write_text(json.dumps({"kind": "log_header", "pid": 4242}) + "\n")
    os.mkfifo(run_dir / "p03.jsonl")
    os.mkfifo(run_dir / OUTPUT_LOG)
    assert _header_pids(run_dir) == [4242]  # the FIFO is passed over, the real header read
    output = OutputBuffer()
    follower = RunFollower(None, run_dir, threading.Lock(), output=output)  # type: ignore[arg-type]
    follower._tail_output()  # returns: nothing is read from a FIFO
    assert output.drain() == b""
