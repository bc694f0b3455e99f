"""A small program recorded once per test session for the inspector's analyses: a graph
break inside a library (a package under ``site-packages``), recompiles caused by Python
values (int, float, a global, a module attribute, a different function object), and one
vectorized plus one scalar C++ kernel. Tests look lines up by their ``# MARKER`` comments.

``record(tmp)`` writes the program and the library into ``tmp`` and records it with
``dyn-inspect --no-tui``; with ``DYN_INSPECT_CORPUS_CACHE`` set the recording is reused.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from corpus_support import records
from dyn_inspect.inspector.run import Run
from inductor_pool import seed

DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"

LIBRARY = '''"""A stand-in for a third-party library (it lives under site-packages)."""


def lib_helper(x):
    print("lib_helper sees", tuple(x.shape))  # BREAK:lib
    return x * 2
'''

PROGRAM = '''"""Inspector analyses: library break, Python-value recompiles, scalar vs vector kernels."""

import torch
import torch._inductor.config

from fakelib import lib_helper

SCALE = 1.0


@torch.compile(backend="eager")
def calls_lib(x):
    y = x + 1
    y = lib_helper(y)  # CALLS:lib
    return y * 2


@torch.compile(backend="eager")
def by_int(x, n):  # RECOMPILE:int
    return x * n  # USES:int


@torch.compile(backend="eager")
def by_float(x, s):  # RECOMPILE:float
    return x * s


@torch.compile(backend="eager")
def by_global(x):  # RECOMPILE:global
    return x * SCALE


class Scaler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 3

    def forward(self, x):  # RECOMPILE:attr
        return x * self.k


@torch.compile(backend="eager")
def by_fn(x, fn):  # RECOMPILE:obj_id
    return fn(x)


@torch.compile
def vectorized(x):
    return x.sin() + 1  # KERNEL:vec


@torch.compile
def scalar(x):
    return x.cos() * 3  # KERNEL:scalar


x = torch.randn(64)
calls_lib(x)
calls_lib(x)
for n in (2, 3):
    by_int(x, n)
for s in (0.5, 0.25):
    by_float(x, s)
by_global(x)
SCALE = 2.0
by_global(x)
module = Scaler()
compiled = torch.compile(module, backend="eager")
compiled(x)
module.k = 4
compiled(x)
by_fn(x, lambda t: t + 1)
by_fn(x, lambda t: t - 1)
vectorized(x)
with torch._inductor.config.patch({"cpp.simdlen": 1}):  # simdlen 1: no vector ISA
    scalar(x)
print("program done", flush=True)
'''


@dataclass
class Recorded:
    workdir: Path  # the program's directory (the workspace root)
    program: Path
    library: Path  # fakelib/__init__.py under site-packages
    runs_dir: Path
    run_dir: Path


def _paths(root: Path) -> tuple[Path, Path, Path]:
    work = root / "work"
    return work, work / "program.py", root / "site-packages" / "fakelib" / "__init__.py"


def record(root: Path, *, reuse: bool = False) -> Recorded:
    """Records the program under ``root``; with ``reuse``, a finished recording of the same
    program already there is read instead."""
    cache = os.environ.get("DYN_INSPECT_CORPUS_CACHE")
    if cache:
        root = Path(cache) / "inspector-program"
    work, program, library = _paths(root)
    runs = root / "runs"
    done = root / "done"
    if not ((cache or reuse) and done.is_file() and program.read_text() == PROGRAM):
        import shutil

        shutil.rmtree(root, ignore_errors=True)
        work.mkdir(parents=True)
        library.parent.mkdir(parents=True)
        program.write_text(PROGRAM)
        library.write_text(LIBRARY)
        env = dict(os.environ)
        env["PYTHONPATH"] = str(library.parent.parent)
        env["TORCHINDUCTOR_CACHE_DIR"] = seed(root / "inductor-cache")
        env.pop("DYN_INSPECT_RUNS_DIR", None)
        proc = subprocess.run(
            [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(runs), "program.py"],
            cwd=work, env=env, capture_output=True, text=True, timeout=900,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"recording failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
        done.write_text("ok")
    run_dir = next(p for p in sorted(runs.iterdir()) if p.is_dir() and not p.is_symlink())
    return Recorded(work, program, library, runs, run_dir)


if __name__ == "__main__":
    print(record(Path(sys.argv[1])))


_once: dict[str, Recorded] = {}


def record_once(tmp_root_factory) -> Recorded:  # type: ignore[no-untyped-def]
    """One recording per test session (tests in several modules share it). pytest-xdist's
    workers share it too, as they share the corpus (tests/conftest.py): the first to take
    the lock beside it records, the others wait and read what it recorded."""
    if "run" not in _once:
        if os.environ.get("PYTEST_XDIST_WORKER"):
            root = tmp_root_factory.getbasetemp().parent / "inspector-program"
            with open(root.parent / "inspector-program.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
                _once["run"] = record(root, reuse=True)
        else:
            _once["run"] = record(tmp_root_factory.mktemp("inspector-program"))
    return _once["run"]


# The recording as module fixtures, for the test modules that read it: each takes them by
# assigning them to its own names (``program = inspector_program.program``), so the
# recording is made once a session and read into one ``Run`` per module.


@pytest.fixture(scope="module")
@records
def program(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return record_once(tmp_path_factory)


@pytest.fixture(scope="module")
def program_run(program: Recorded) -> Run:
    return Run(program.run_dir)
