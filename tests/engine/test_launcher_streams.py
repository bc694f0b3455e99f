"""`dyn-inspect --no-tui` gives the program python's own stdin, stdout and stderr: the order
of its stdout and stderr lines is plain python's byte for byte, a background process that
outlives it keeps a working stderr, a closed stderr stays closed (sys.stderr is None), and a
user's sitecustomize runs in it with python's own behaviour. The LSP's verify re-run gets
no stdin of the server's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"


def env_without_runs(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DYN_INSPECT_RUNS_DIR"}
    env.update(extra)
    return env


def launcher(tmp_path: Path, *args: str) -> list[str]:
    return [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(tmp_path / "runs"), *args]


def test_stdout_and_stderr_keep_python_s_order(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(
        "import sys\nfor i in range(2000):\n    print(f'out {i}', flush=True)\n    print(f'err {i}', file=sys.stderr, flush=True)\n"
    )
    with open(tmp_path / "plain.txt", "wb") as f:
        subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, stdout=f, stderr=subprocess.STDOUT, check=True)
    with open(tmp_path / "ours.txt", "wb") as f:
        subprocess.run(launcher(tmp_path, "prog.py"), cwd=tmp_path, env=env_without_runs(), stdout=f, stderr=subprocess.STDOUT, check=True)
    plain = (tmp_path / "plain.txt").read_bytes()
    ours = (tmp_path / "ours.txt").read_bytes()
    assert ours[: len(plain)] == plain
    assert ours[len(plain) :].startswith(b"dyn-inspect: finished")  # then only our summary


def test_a_background_child_that_outlives_the_program_keeps_its_stderr(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', '''\n"
        "import os, sys, time\n"
        "while not os.path.exists('go'): time.sleep(0.02)\n"
        "try:\n"
        "    sys.stderr.write('late line\\\\n'); sys.stderr.flush(); status = 'ok'\n"
        "except OSError as exc:\n"
        "    status = repr(exc)\n"
        "open('status.tmp', 'w').write(status)\n"
        "os.replace('status.tmp', 'status')  # whole: the test polls for the name\n"
        "'''], start_new_session=True)\n"
    )
    with open(tmp_path / "err.txt", "wb") as err:
        p = subprocess.run(launcher(tmp_path, "prog.py"), cwd=tmp_path, env=env_without_runs(), stderr=err, stdin=subprocess.DEVNULL)
    assert p.returncode == 0
    (tmp_path / "go").touch()  # the launcher has exited: now the child writes to its stderr
    deadline = time.monotonic() + 120
    while not (tmp_path / "status").exists():
        assert time.monotonic() < deadline, "the background child never wrote"
        time.sleep(0.02)
    assert (tmp_path / "status").read_text() == "ok"
    assert (tmp_path / "err.txt").read_bytes().endswith(b"late line\n")


def test_a_closed_stderr_stays_closed_and_our_log_stays_ours(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(
        "import os, sys\n"
        "print('stderr is', sys.stderr)\n"
        "try:\n    os.write(2, b'to fd 2\\n'); print('fd 2 open')\n"
        "except OSError as exc:\n    print('fd 2:', exc.strerror)\n"
    )
    plain = subprocess.run(f"{sys.executable} prog.py 2>&-", shell=True, cwd=tmp_path, capture_output=True, check=True)
    ours = subprocess.run(
        f"{DYN_INSPECT} --no-tui --runs-dir runs prog.py 2>&-", shell=True, cwd=tmp_path, env=env_without_runs(), capture_output=True
    )
    assert plain.stdout == b"stderr is None\nfd 2: Bad file descriptor\n"
    assert ours.returncode == 0
    assert ours.stdout == plain.stdout  # and no summary of ours printed to stdout instead
    run = next(d for d in (tmp_path / "runs").iterdir() if d.is_dir() and not d.is_symlink())
    lines = (run / "launcher.jsonl").read_bytes().splitlines()
    assert [json.loads(line)["kind"] for line in lines[1:]] == ["run_start", "run_end"]


@pytest.mark.parametrize(
    "body, error",
    [("raise RuntimeError('boom')", "RuntimeError: boom"), ("import no_such_module_xyz", "ModuleNotFoundError: No module named 'no_such_module_xyz'")],
)
def test_a_failing_user_sitecustomize_reports_as_python_does(tmp_path: Path, body: str, error: str) -> None:
    site = tmp_path / "site"
    site.mkdir()
    # Fails in the program only (the launcher, a python process too, runs it as well).
    (site / "sitecustomize.py").write_text(f"import sys\nif sys.argv[0].endswith('prog.py'):\n    {body}\n")
    (tmp_path / "prog.py").write_text("import sys\nprint('program ran', file=sys.stderr)\n")
    env = env_without_runs(PYTHONPATH=str(site))
    plain = subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
    ours = subprocess.run(launcher(tmp_path, "prog.py"), cwd=tmp_path, env=env, capture_output=True, text=True)
    assert plain.stderr == f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{error}\nprogram ran\n"
    assert ours.returncode == 0
    assert ours.stderr.startswith(plain.stderr)
    assert ours.stderr[len(plain.stderr) :].startswith("dyn-inspect: finished")


def test_a_user_sitecustomize_runs_once_in_the_program(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nif sys.argv[0].endswith('prog.py'):\n    print('user site', file=sys.stderr)\n")
    (tmp_path / "prog.py").write_text("import sitecustomize, sys\nprint(sitecustomize.__file__, file=sys.stderr)\n")
    env = env_without_runs(PYTHONPATH=str(site))
    ours = subprocess.run(launcher(tmp_path, "prog.py"), cwd=tmp_path, env=env, capture_output=True, text=True)
    assert ours.stderr.startswith(f"user site\n{site / 'sitecustomize.py'}\ndyn-inspect: finished")


def test_lsp_verify_runs_without_the_server_s_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The verify re-run started with our stdin a pipe holding an 'editor request'. A
    stand-in for the interpreter (verify's logic is not what is tested: which stdin its
    process gets is) reads all of its stdin, as a program calling input() would."""
    from dyn_inspect.lsp import verify

    stand_in = tmp_path / "python"
    stand_in.write_text(f"#!/bin/sh\ncat > {tmp_path / 'eaten'}\necho stand-in >&2\nexit 1\n")
    stand_in.chmod(0o755)
    monkeypatch.setattr(verify.sys, "executable", str(stand_in))
    read, write = os.pipe()
    os.write(write, b"Content-Length: 2\r\n\r\n{}")
    os.close(write)
    saved = os.dup(0)
    os.dup2(read, 0)
    try:
        with pytest.raises(RuntimeError, match="stand-in"):
            verify.run_verify(str(tmp_path / "run"), timeout_s=60)
        left = os.read(0, 100)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read)
    assert (tmp_path / "eaten").read_bytes() == b""
    assert left == b"Content-Length: 2\r\n\r\n{}"  # the server still has its request
