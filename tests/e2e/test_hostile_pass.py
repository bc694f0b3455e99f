"""Issue 29's fresh adversarial pass: what it found that no earlier test covered.

- ``verify`` re-ran a command without ``--yes`` when a crafted ``launcher.jsonl`` called it
  a script or a module: ``python -- sh -c ...`` or ``python /bin/sh -c ...`` with mode
  ``script`` became ``dyn-inspect run -- sh -c ...`` (and the editor's one click did the same).
- ``import`` of a TORCH_TRACE naming ``/proc/self/environ``, ``/dev/stdin`` or a FIFO as the
  program's file prints none of it and returns (item 2 names ``import``; the other faces
  are in tests/inspector/test_hostile_sources.py).
- ``rm -rf .dyn-inspect`` while a program records: ``rm`` succeeds, nothing is re-created,
  the program's output and exit code are its own, and one line says recording stopped.

The scenario table of the pass is in the issue's note; tests/inspector/test_hostile.py,
tests/inspector/test_hostile_input.py and tests/inspector/test_hostile_sources.py hold the others.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from crafted_runs import crafted_run
from dyn_inspect.engine.schema import RunStart
from dyn_inspect.inspector.run import Run
from dyn_inspect.lsp.verify import run_verify
from process_support import finished

CLI = [sys.executable, "-m", "dyn_inspect.cli"]
DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"
SECRET = "xyz29-pass-not-for-printing"
FIXTURES = Path(__file__).parents[1] / "fixtures"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYN_INSPECT_") or k == "DYN_INSPECT_KEY_DIR"}
    env.update(NO_COLOR="1", **extra)
    return env


def cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    # stdin: a pipe nobody writes to (a reader of /dev/stdin would wait on it until the timeout)
    proc = subprocess.Popen(
        [*CLI, *args],
        cwd=cwd,
        env=_env(DYN_SECRET_TOKEN=SECRET),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",  # (a run path that is not UTF-8 is printed as its bytes)
    )
    return finished(proc, timeout, f"dyn-inspect {' '.join(args)} did not return")


# -- verify: a "script" or "module" that is a command ----------------------------------------


DISGUISED = {
    "script --": ("script", [sys.executable, "--", "sh", "-c", "touch {marker}"]),
    "script /bin/sh": ("script", [sys.executable, "/bin/sh", "-c", "touch {marker}"]),
    "script sh on PATH": ("script", [sys.executable, "sh", "-c", "touch {marker}"]),
    "script option": ("script", [sys.executable, "--kernel-ir", "--", "sh", "-c", "touch {marker}"]),
    "module --": ("module", [sys.executable, "-m", "--", "sh", "-c", "touch {marker}"]),
}


@pytest.mark.parametrize("variant", list(DISGUISED))
def test_verify_never_runs_a_command_disguised_as_a_script_or_module(variant: str, tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    mode, command = DISGUISED[variant]
    run = crafted_run(tmp_path, mode, [c.format(marker=marker) for c in command])
    done = cli("verify", str(run), cwd=tmp_path)
    assert not marker.exists(), done.stderr
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1 and "would start something else" in done.stderr, done.stderr
    with pytest.raises(RuntimeError, match="would start something else"):  # the editor's "verify the fix"
        run_verify(str(run), timeout_s=60)
    assert not marker.exists()


def test_a_real_script_or_module_run_is_still_re_run(tmp_path: Path) -> None:
    """The check refuses only what would not run as the recorded script/module."""
    from dyn_inspect.inspector.reports.verify import plan_rerun

    (tmp_path / "prog.py").write_text("")
    (tmp_path / "tool").write_text("")  # a script without .py, not executable: run calls it a script
    (tmp_path / "tool").chmod(0o644)

    def start(mode: str, command: list[str]) -> RunStart:
        return RunStart(t=time.time(), command=command, cwd=str(tmp_path), mode=mode, tool_version="0")  # type: ignore[arg-type]

    for mode, command in (
        ("script", ["python", "prog.py", "--lr", "1"]),
        ("script", ["python", str(tmp_path / "prog.py")]),
        ("script", ["python", "tool"]),
        ("module", ["python", "-m", "pkg.train", "--", "x"]),
    ):
        assert plan_rerun(start(mode, command), str(tmp_path)).command == command


# -- import: a trace whose program file is no source --------------------------------------

TORCH_FILE = "/data/users/xmfan/a/pytorch/test/dynamo/test_misc.py"  # comp_failure.log's failing frame (line 10755)


@pytest.mark.parametrize("kind", ["secret", "secret_py", "environ", "stdin", "fifo"])
def test_import_of_a_trace_naming_hostile_files_prints_none_of_them(kind: str, tmp_path: Path) -> None:
    """tlparse's comp_failure.log, its failing frame's file renamed: a file outside every
    root (as .txt and .py, long enough to have the failing line), the environment, stdin, a
    FIFO. The import and the faces after it name the file and print none of it."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    secret = "".join(f"{SECRET} line {i}\n" for i in range(1, 12200))
    target = {
        "secret": str(outside / "notes.txt"),
        "secret_py": str(outside / "keys.py"),
        "environ": "/proc/self/environ",
        "stdin": "/dev/stdin",
        "fifo": str(outside / "evil.py"),
    }[kind]
    if kind.startswith("secret"):
        Path(target).write_text(secret)
    if kind == "fifo":
        os.mkfifo(target)
    text = (FIXTURES / "comp_failure.log").read_text(encoding="utf-8")
    assert TORCH_FILE in text
    (work / "trace.log").write_text(text.replace(TORCH_FILE, target), encoding="utf-8")
    done = cli("import", "trace.log", "--runs-dir", "runs", cwd=work)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert f"{target}:10755" in done.stdout  # the failure names the file, and shows none of it
    for args in (["summary"], ["summary", "--json"], ["check", "--json"], ["export", "-o", "b.zip"]):
        after = cli(*args, "runs/latest", cwd=work)
        assert SECRET not in done.stdout + done.stderr + after.stdout + after.stderr, args
    with zipfile.ZipFile(work / "b.zip") as z:
        assert all(SECRET.encode() not in z.read(n) for n in z.namelist())


# -- rm -rf of the runs directory while a program records ---------------------------------

RECORDING = """
import os, sys, time
import torch

open("ready", "w").close()
i = 0
deadline = time.monotonic() + 120
while not os.path.exists("stop") and time.monotonic() < deadline:
    f = torch.compile(lambda x, i=i: (x * i).sin(), backend="eager")  # a new frame: a new compile and its blobs
    f(torch.randn(3 + i % 5))
    i += 1
print("compiled", i > 0)
"""


def test_rm_rf_while_recording_is_not_undone_and_said_once(tmp_path: Path) -> None:
    """The blob store's ``mkdir -p`` re-created the deleted run ("Directory not empty" for
    ``rm`` 9 times in 10) and nothing said recording stopped."""
    (tmp_path / "prog.py").write_text(RECORDING)
    root = tmp_path / ".dyn-inspect"
    proc = subprocess.Popen(
        [str(DYN_INSPECT), "--no-tui", "prog.py"],
        cwd=tmp_path,
        env=_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "ready").exists() or not any(root.glob("runs/*/p*.jsonl")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        time.sleep(1.0)  # compiling: blobs are being written
        shutil.rmtree(root)  # failed "Directory not empty" when a blob re-created the run meanwhile
        for _ in range(10):  # it goes on compiling: nothing comes back
            time.sleep(0.2)
            assert not root.exists(), sorted(str(p) for p in root.rglob("*"))
        (tmp_path / "stop").touch()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and out == "compiled True\n", err[-2000:]
    assert not root.exists()  # nothing re-created it, the end of the run included
    stopped = [line for line in err.splitlines() if "recording stopped" in line]
    assert len(stopped) == 1 and "deleted" in stopped[0], err[-2000:]
    assert "Traceback" not in err


# -- names and payloads of the run: text, never terminal control ---------------------------

CONTROL_BYTES = ("\x1b", "\x07", "\x0e", "\x9b")


def _copy(run: Run, dest: Path) -> Path:
    out = dest / run.path.name
    shutil.copytree(run.path, out, symlinks=True, ignore=shutil.ignore_patterns("index.dyn"))
    return out


def test_log_file_names_with_terminal_escapes_are_shown_as_text(breaks_run: Run, tmp_path: Path) -> None:
    """A FIFO named ``p8\\x1bc.jsonl`` (ESC c: a full terminal reset) and a real log named with
    an OSC title and a screen clear: the read warning of every command and export's list of
    what it skipped printed those names as they were."""
    run_dir = _copy(breaks_run, tmp_path)
    log = next(p for p in sorted(run_dir.glob("p*.jsonl")) if p.stat().st_size > 1000)
    shutil.copy(log, run_dir / "p9\x1b]0;PWNED\x07\x1b[2J.jsonl")
    os.mkfifo(run_dir / "p8\x1bc.jsonl")
    for args in (
        ["breaks", str(run_dir)],
        ["kernels", str(run_dir)],
        ["summary", str(run_dir)],
        ["export", str(run_dir), "-o", str(tmp_path / "b.zip")],
    ):
        done = cli(*args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr[-2000:])
        out = done.stdout + done.stderr
        assert not any(c in out for c in CONTROL_BYTES), (args, out[-2000:])
        assert "p8\\x1bc.jsonl" in out, (args, out[-2000:])  # named, as text
    with zipfile.ZipFile(tmp_path / "b.zip") as z:
        assert all(not any(c.encode() in z.read(n) for c in ("\x1b", "\x07")) for n in z.namelist())


def test_a_run_s_output_log_drives_no_terminal_in_the_tui(breaks_run: Run, tmp_path: Path) -> None:
    """``dyn-inspect open`` shows a run's output.log in the Output view: Text.from_ansi kept
    ``ESC c``, an 8-bit CSI and SO/SI in the text and made a terminal link of a javascript:
    url, and Textual wrote them to the terminal (seen through tmux's pipe-pane)."""
    from dyn_inspect.tui.views.output import from_terminal

    t = from_terminal(
        "\x1b[31mred\x1b[0m reset:\x1bc c1:\x9b2J so:\x0e si:\x0f "
        "\x1b]8;;javascript:alert(1)\x1b\\js\x1b]8;;\x1b\\ \x1b]8;;https://pytorch.org/\x1b\\ok\x1b]8;;\x1b\\"
    )
    assert t.plain == "red reset:\\x1bc c1:\\x9b2J so:\\x0e si:\\x0f js ok"
    assert [str(s.style) for s in t.spans if "color" in str(s.style)] == ["color(1)"]  # colours stay
    links = [s.style.link for s in t.spans if getattr(s.style, "link", None)]  # type: ignore[union-attr]
    assert links == ["https://pytorch.org/"]
    # The view itself, on a copy of a real run whose output.log says so.
    run_dir = _copy(breaks_run, tmp_path)
    run_dir = run_dir.rename(run_dir.with_name("r\x1bc"))  # the header shows the run's folder name: ESC c reset the terminal
    (run_dir / "output.log").write_bytes(b"hello\nreset:\x1bc:end\nc1:\xc2\x9b2J:end\nlink:\x1b]8;;javascript:x\x1b\\a\x1b]8;;\x1b\\\n")
    done = subprocess.run(
        [sys.executable, "-c", OUTPUT_PILOT, str(run_dir), str(Path(__file__).parents[1])],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    shown = json.loads(done.stdout.splitlines()[-1])
    assert "reset:\\x1bc:end" in shown["lines"] and "c1:\\x9b2J:end" in shown["lines"]
    assert not any(c in "".join(shown["segments"]) for c in CONTROL_BYTES) and shown["links"] == []
    assert shown["header"][1] == "run r\\x1bc", shown["header"]
    assert not any(c in "".join(shown["header"]) for c in CONTROL_BYTES)


OUTPUT_PILOT = """
import asyncio, json, sys
sys.path.insert(0, sys.argv[2])
from textual.widgets import RichLog
from dyn_inspect.inspector.run import Run
from tui_support import opened, settle

async def drive():
    async with opened(Run(sys.argv[1], use_index=False)) as (app, pilot):
        await pilot.press("6")
        for _ in range(100):
            await settle(pilot)
            log = app.query_one("#output-log", RichLog)
            if len(log.lines) >= 4:
                break
        segments = [seg for strip in log.lines for seg in strip]
        header = [str(app.query_one(f"#header-{part}").render()) for part in ("command", "run")]
        print(json.dumps({"lines": app.view("output").plain_lines(), "segments": [s.text for s in segments], "header": header,
                          "links": [s.style.link for s in segments if s.style is not None and s.style.link]}))
        await pilot.press("q")

asyncio.run(drive())
"""


def test_a_payload_dense_with_control_characters_is_escaped_in_bounded_memory(breaks_run: Run, tmp_path: Path) -> None:
    """A graph payload grown with NUL bytes (a crafted 1 GiB one is the largest read): the
    escape of every control character cost 80 bytes of memory each, so `graph` on 1 GiB
    grew past 24 GB until the OOM killer ended it. 16 MiB here: 1.3 GB before, ~0.2 GB now."""
    run_dir = _copy(breaks_run, tmp_path)
    c = next(c for c in breaks_run.model.compiles_in_order() if c.graph("dynamo") is not None)
    digest = c.graph("dynamo").code.digest
    with open(run_dir / "blobs" / digest[:2] / digest, "ab") as f:
        f.write(b"\x00" * (16 << 20))
    measure = (
        "import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, *CLI, "graph", str(run_dir), c.cid], capture_output=True, text=True, timeout=300, env=_env()
    )
    rc, kib = map(int, done.stdout.split())
    assert rc == 0, done.stderr[-2000:]
    assert kib < 700_000, f"graph peaked at {kib // 1024} MiB on a 16 MiB payload"


# -- runs --prune through a repository's symlinked runs folder ------------------------------


def test_prune_deletes_only_dyn_inspect_runs(tmp_path: Path) -> None:
    """A repository can carry ``.dyn-inspect/runs`` as a symlink (here to the user's data):
    ``runs --prune`` deleted every folder there holding a ``*.jsonl`` or a ``blobs/``,
    though ``runs`` itself lists each as "not a dyn-inspect run"."""
    data = tmp_path / "data"
    for name in ("alpha", "beta", "gamma", "delta", "eps", "zeta", "eta"):
        (data / name).mkdir(parents=True)
        (data / name / "records.jsonl").write_text('{"mine": 1}\n')
    (data / "models" / "blobs").mkdir(parents=True)
    repo = tmp_path / "repo"
    (repo / ".dyn-inspect").mkdir(parents=True)
    (repo / ".dyn-inspect" / "runs").symlink_to(data)
    done = cli("runs", "--prune", "--keep", "1", cwd=repo)
    assert "Traceback" not in done.stderr, done.stderr
    assert sorted(p.name for p in data.iterdir()) == ["alpha", "beta", "delta", "eps", "eta", "gamma", "models", "zeta"]


def test_a_log_named_with_bytes_that_are_not_utf8_breaks_no_face(breaks_run: Run, tmp_path: Path) -> None:
    """Issue 29 item 5's other half (integers >= 2**64: tests/inspector/test_hostile_input.py): a
    ``*.jsonl`` whose name is not UTF-8 crashed the index writer, so every command, ``runs``
    for the whole folder and the language server's listing failed. Here the run directory's
    name is not UTF-8 either; a good run sits beside it."""
    root = tmp_path / "runs"
    root.mkdir()
    good = _copy(breaks_run, root)
    bad = os.fsencode(root) + b"/20261204-000000-\xff\xfe"
    shutil.copytree(good, os.fsdecode(bad), symlinks=True)
    log = next(p for p in sorted(Path(os.fsdecode(bad)).glob("p*.jsonl")) if p.stat().st_size > 1000)
    os.rename(os.fsencode(log), bad + b"/p7\xff\xfe.jsonl")
    for args in (
        ["summary", os.fsdecode(bad)],
        ["breaks", os.fsdecode(bad)],
        ["summary", os.fsdecode(bad), "--json"],
        ["runs", "--runs-dir", str(root)],
        ["runs", "--runs-dir", str(root), "--json"],
    ):
        for _ in range(2):  # the second opens what the first indexed
            done = cli(*args)
            assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr[-2000:])
    listed = json.loads(done.stdout)["runs"]
    assert len(listed) == 2 and all(r["status"] == "finished" for r in listed), listed
    assert Run(os.fsdecode(bad)).model.break_groups() and Run(good).model.break_groups()
    # export too (the adversarial pass's 5h: index.md quoted the name, and zipfile refused it)
    bundle = tmp_path / "bad.zip"
    done = cli("export", os.fsdecode(bad), "-o", str(bundle), "--no-pictures")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    with zipfile.ZipFile(bundle) as zf:
        assert "p7\\udcff\\udcfe.jsonl" in zf.read("index.md").decode("utf-8")


def test_thousands_of_junk_logs_are_counted_not_listed(breaks_run: Run, tmp_path: Path) -> None:
    """A run with 3,000 junk ``*.jsonl`` files: ``summary`` printed one "skipped:" line each
    (two each: 60,000 for 30,000 files) and export one more per file; now five, then how many more."""
    run_dir = _copy(breaks_run, tmp_path)
    for i in range(3000):
        (run_dir / f"p{100000 + i}.jsonl").write_text("not json\n")
    summary = cli("summary", str(run_dir))
    assert summary.returncode == 0, summary.stderr[-2000:]
    lines = [line for line in summary.stdout.splitlines() if "skipped" in line]
    assert len(lines) == 6 and "5995 more" in lines[-1], lines[:8]  # two problems a file
    export = cli("export", str(run_dir), "-o", str(tmp_path / "b.zip"), "--no-pictures")
    assert export.returncode == 0, export.stderr[-2000:]
    assert sum("skipped" in line for line in export.stdout.splitlines()) <= 6, export.stdout[-2000:]


def test_a_run_folder_named_with_escapes_is_named_as_text_in_read_warnings(breaks_run: Run, tmp_path: Path) -> None:
    """The read warning names the run folder: a folder ``r<ESC>c`` reset the terminal."""
    run_dir = _copy(breaks_run, tmp_path)
    evil = run_dir.with_name("r\x1bc" + run_dir.name)
    run_dir.rename(evil)
    (evil / "p99.jsonl").write_text('{"kind": "a_kind_from_the_future", "t": 1}\n')
    done = cli("summary", str(evil))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "\x1b" not in done.stdout + done.stderr, (done.stdout + done.stderr)[-2000:]
