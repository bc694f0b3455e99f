"""One pool of compiled C++ per test session; every Inductor cache a test starts is seeded from it.

A fresh ``TORCHINDUCTOR_CACHE_DIR`` makes Inductor build six instruction-set probes with the
C++ compiler before the first kernel (measured: 23 s of CPU for a one-kernel program with a
fresh cache, 7.5 s with the probes already built), then every kernel again. ``seed(dir)``
fills a test's new cache with hard links to the C++ that this session already built (each
``*.so`` and its source), so that work is done once per session.

What a run observes does not change: the FX-graph and AOTAutograd caches (whose hits and
misses torch logs, our recorder reports and the differential compares) are never seeded, so
every graph still misses, is traced, lowered and logged as in a first run; only the C++
compiler finds its output already built (``CppCodeCache`` reuses an existing ``.so``), as the
differential's plain runs have done since issue 27. Tests *about* warm caches warm their own.

Built C++ enters the pool only from a cache whose users are done: a test's caches when the
test ends (tests/conftest.py), a corpus recording's when it exits; a ``.so`` whose build was
cut short (its ``<name>_CxxBuild`` folder is left beside it) or is not an ELF file is skipped.

Under pytest-xdist the workers share one pool (its path is in ``DYN_INSPECT_TEST_CPP_POOL``,
which the controller sets when it imports this module and the workers inherit), and the
probes are built by whichever process takes the pool's lock first.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

POOL_ENV = "DYN_INSPECT_TEST_CPP_POOL"
POOL = Path(os.environ.get(POOL_ENV) or tempfile.mkdtemp(prefix="dyn-inspect-cpp-pool-"))
os.environ[POOL_ENV] = str(POOL)  # inherited by pytest-xdist's workers: one pool for all
_PROBES_DONE = POOL / ".probes-built"
_NEVER_SEEDED = frozenset({"fxgraph", "aotautograd", "locks", "precompiled_headers"})
_lock = threading.Lock()
_pending: list[Path] = []  # caches seeded for the running test: harvested when it ends
_probes: threading.Thread | None = None

# A first compile with nothing cached: it builds the instruction-set probes every fresh cache
# would build (and one kernel).
_PROBE_PROGRAM = "import torch\ntorch.compile(lambda x: (x.sin() + 1).relu())(torch.randn(8))\n"


def _built(root: Path) -> Iterator[Path]:
    """The complete C++ builds under an Inductor cache (paths relative to it)."""
    try:
        folders = [d for d in root.iterdir() if d.is_dir() and d.name not in _NEVER_SEEDED]
    except OSError:
        return
    for folder in folders:
        try:
            names = set(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if not name.endswith(".so") or f"{name[:-3]}_CxxBuild" in names:
                continue
            try:
                with open(folder / name, "rb") as f:
                    if f.read(4) != b"\x7fELF":
                        continue
            except OSError:
                continue
            stem = name[:-3]
            for other in names:
                # the .so and what it was built from (Inductor checks the source exists too)
                if other == name or (other.startswith(stem + ".") and other.endswith((".cpp", ".h"))):
                    yield Path(folder.name) / other


def _link_all(source: Path, dest: Path, files: list[Path]) -> None:
    for rel in files:
        target = dest / rel
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source / rel, target)
        except FileExistsError:
            pass
        except OSError:
            continue


def harvest(cache: Path) -> None:
    """Adds what a finished run built in ``cache`` to the pool."""
    with _lock:
        _link_all(cache, POOL, list(_built(cache)))


def start_probes() -> None:
    """Builds the probes into the pool in the background (once per session, across the
    session's processes: the others wait for the first)."""
    global _probes
    if _probes is not None:
        return

    def build() -> None:
        with open(POOL / ".probes.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not _PROBES_DONE.exists():
                build_here()
                _PROBES_DONE.touch()

    def build_here() -> None:
        cache = Path(tempfile.mkdtemp(prefix="dyn-inspect-cpp-probes-"))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DYN_INSPECT_", "TORCH_TRACE", "TORCH_LOGS"))}
        env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
        try:
            subprocess.run([sys.executable, "-c", _PROBE_PROGRAM], env=env, capture_output=True, timeout=600)
        except (OSError, subprocess.SubprocessError):
            return  # every cache then builds its own probes, as without the pool
        harvest(cache)

    _probes = threading.Thread(target=build, name="inductor-pool-probes", daemon=True)
    _probes.start()


def seed(cache: Path, *, harvest_when_test_ends: bool = True) -> str:
    """Creates ``cache`` (a fresh Inductor cache dir) holding this session's built C++;
    returns it as a string for ``TORCHINDUCTOR_CACHE_DIR``."""
    start_probes()
    assert _probes is not None
    _probes.join()
    cache.mkdir(parents=True, exist_ok=True)
    with _lock:
        _link_all(POOL, cache, list(_built(POOL)))
        if harvest_when_test_ends:
            _pending.append(cache)
    return str(cache)


def harvest_test_caches() -> None:
    """At the end of a test: its seeded caches' new C++ joins the pool."""
    with _lock:
        caches = list(_pending)
        _pending.clear()
    for cache in caches:
        harvest(cache)
