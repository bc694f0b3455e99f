"""Recording the test corpus: each program once per test session, in parallel.

Programs mark the lines tests expect with comments (`# BREAK:branch`); tests look the
line numbers up with ``marker_line`` instead of hard-coding them.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inductor_pool import harvest, seed

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
EXAMPLES = ROOT / "examples"
DYN_INSPECT = Path(sys.executable).parent / "dyn-inspect"

# name -> (working directory, argv after `dyn-inspect --no-tui`)
PROGRAMS: dict[str, tuple[Path, list[str]]] = {
    "breaks": (CORPUS, ["breaks.py"]),
    "recompiles": (CORPUS, ["recompiles.py"]),
    "limit": (CORPUS, ["limit.py"]),
    "raises": (CORPUS, ["raises.py"]),
    "killed": (CORPUS, ["killed.py"]),
    "example": (EXAMPLES, ["train.py", "--steps", "4"]),
    "eager": (EXAMPLES, ["--disable-compile", "train.py", "--steps", "2"]),
    "shadow": (CORPUS / "shadow", ["train.py"]),
    # helper T's (issue 12 items 1, 9, 11): breaks past line 200, a fullgraph=True failure,
    # recompiles whose right advice is specific
    "faces_long": (CORPUS, ["faces_long.py"]),
    "faces_failure": (CORPUS, ["faces_failure.py"]),
    "faces_recompiles": (CORPUS, ["faces_recompiles.py"]),
    # torchrun with gloo on CPU, 2 ranks (rank 1 breaks the graph and recompiles; rank 0 not)
    "ranks": (CORPUS / "ranks", [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "train.py"]),
    # torch.compile(DDP(model)) on 2 gloo ranks: DDPOptimizer's bucket splits (issue 34)
    "ddp": (CORPUS / "ddp", [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "train.py"]),
    # FSDP2 (fully_shard) + per-block torch.compile on 2 gloo ranks (issue 34)
    "fsdp": (CORPUS / "fsdp", [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "train.py"]),
    # The differential corpus (issue 12, tests/inspector/test_differential.py): realistic programs
    # whose every count is compared with torch's own account of a plain run.
    "long_file": (CORPUS, ["long_file.py"]),
    "pkg": (CORPUS, ["-m", "pkg.train"]),
    "hf_gpt2": (CORPUS, ["hf_gpt2.py"]),
    "hf_bert": (CORPUS, ["hf_bert.py"]),
    "optim_lr": (CORPUS, ["optim_lr.py"]),
    "reset": (CORPUS, ["reset.py"]),
    "fullgraph_fail": (CORPUS, ["fullgraph_fail.py"]),
    "exit3": (CORPUS, ["exit3.py"]),
    "first_forward_fail": (CORPUS, ["first_forward_fail.py"]),
    # issue 28 #1: a fullgraph train step whose failure message says "marked as skipped"
    "train_step_fail": (CORPUS, ["train_step_fail.py"]),
    "warm_cache": (CORPUS / "warm", ["train.py"]),
    "loop_break": (CORPUS, ["loop_break.py"]),
    # issue 15: dynamic shapes (symbols, a specialization, shape guards, automatic dynamic)
    "shapes": (CORPUS, ["shapes.py"]),
    # issue 15: a warm run with an FX/AOT cache hit, an AOTAutograd bypass and a miss
    "cache_warm": (CORPUS / "cache", ["train.py"]),
    # issue 28 #7: a break whose actual error (a TypeError) is only in torch's debug context
    "error_break": (CORPUS, ["error_break.py"]),
    # issue 28 #12: frames compiled, no graph captured
    "no_graph": (CORPUS, ["no_graph.py"]),
    # issue 28: torch.cond on a data-dependent predicate, and nonzero's unbacked sizes
    "control_flow": (CORPUS, ["control_flow.py"]),
    # issue 28: the situations of PyTorch's graph-break and recompilation docs pages, in one file
    "docs_pages": (CORPUS, ["docs_pages.py"]),
    # issue 28: Inductor itself fails on a captured graph (torch 2.13, CPU); the program goes on
    "backend_crash": (CORPUS, ["backend_crash.py"]),
    # issue 56: a backend (Inductor) refuses one graph: a GB0219 break, the frame runs eagerly
    "backend_break": (CORPUS, ["backend_break.py"]),
    # issue 32: a break between two heavy compiled regions, profiled; and the fixed program
    "step_cost": (CORPUS, ["--profile=10", "step_cost.py"]),
    "step_cost_fixed": (CORPUS, ["--profile=10", "step_cost.py", "--without-bookkeeping"]),
    "ranks_profiled": (
        CORPUS / "ranks",
        [
            "--profile=3",
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "2",
            "train.py",
            "--steps",
            "10",
        ],
    ),
    "step_cost_eager": (CORPUS, ["--disable-compile", "--profile=10", "step_cost.py", "--without-bookkeeping"]),
    # issue 57: compiling gives nothing (three extern matmuls): compiled and eager steps in turn
    "ab_same": (CORPUS, ["--profile=10", "ab_same.py", "--threads", "1"]),
}

# The programs the differential harness compares with torch (tests/inspector/test_differential.py).
DIFFERENTIAL: list[str] = [
    "long_file",
    "pkg",
    "hf_gpt2",
    "hf_bert",
    "optim_lr",
    "reset",
    "fullgraph_fail",
    "exit3",
    "first_forward_fail",
    "train_step_fail",
    "warm_cache",
    "loop_break",
    "breaks",
    "recompiles",
    "limit",
    "no_graph",  # torch too counts 0 graphs (the no-graph headline rests on that)
    "control_flow",  # torch.cond recompiling on a length; unbacked symbols from nonzero
    "docs_pages",  # the docs pages' cells: same-named functions, set_logs, a reset, the limit
    "backend_crash",  # a compile failure raised by Inductor (not Dynamo), caught by the program
    "backend_break",  # GB0219: the backend raised on a graph, torch warns, breaks and runs it eagerly
    "shapes",  # dynamic=True, a specialized dim, automatic dynamic: the sizes each compile accepts
]

# Extra environment per program. Hugging Face must never reach for the hub: the models
# are built from a config with random weights.
PROGRAM_ENV: dict[str, dict[str, str]] = {
    "hf_gpt2": {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
    "hf_bert": {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
}

# Programs recorded twice with one Inductor cache, the first time from a copy of their
# folder in another directory; the second recording is the one tests read.
WARM_FROM_COPY: set[str] = {"warm_cache", "cache_warm"}

# The exit status each program is meant to end with (anything else: the recording broke).
EXPECTED_EXIT: dict[str, int] = {"fullgraph_fail": 1, "exit3": 3, "first_forward_fail": 1, "raises": 1, "train_step_fail": 1}

GROUND_TRUTH = ROOT / "tests" / "differential" / "ground_truth.py"

# Torch's own account of each differential program's plain run, kept: what torch said about
# an unchanged program under the same torch is what it says again, so a session reads the
# kept account instead of compiling the program a second time. A kept account is used only
# while its key holds (the program's own files, the harness, argv, environment, python,
# machine and the torch/transformers versions: `truth_key`); otherwise the plain run is
# live, as it is for every program with DYN_INSPECT_TRUTH=live. DYN_INSPECT_TRUTH=keep runs
# them live and writes the accounts here (review the diff: it is torch's log). Each session
# also runs one program live and compares (tests/inspector/test_differential.py).
KEPT_TRUTH = ROOT / "tests" / "differential" / "kept"
LIVE_CHECK = "breaks"  # the program whose plain run is also made live each session
TRUTH_ENV = "DYN_INSPECT_TRUTH"
# Paths in a kept account are written relative to these (most specific first), so a kept
# account holds in any checkout and any virtual environment.
_PLACES = (
    ("@PURELIB@", sysconfig.get_paths()["purelib"]),
    ("@STDLIB@", sysconfig.get_paths()["stdlib"]),
    ("@ROOT@", str(ROOT)),
)


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def truth_key(name: str, sources: list[str]) -> dict[str, object]:
    """What torch's account of program ``name`` depends on; ``sources`` are the program's
    files (relative to its working directory) that its plain run imported."""
    cwd, argv = PROGRAMS[name]
    return {
        "argv": argv,
        "env": PROGRAM_ENV.get(name, {}),
        "warmed_from_copy": name in WARM_FROM_COPY,
        "python": "{}.{}".format(*sys.version_info[:2]),
        "machine": platform.machine(),
        "packages": {p: _version(p) for p in ("torch", "transformers")},
        "harness": _sha(GROUND_TRUTH),
        "sources": {s: _sha(cwd / s) for s in sources},
    }


def _to_kept(text: str, out: Path) -> str:
    for mark, place in (("@OUT@", str(out)), *_PLACES):
        text = text.replace(place, mark)
    return text


def _from_kept(text: str, out: Path) -> str:
    for mark, place in (("@OUT@", str(out)), *_PLACES):
        text = text.replace(mark, place)
    return text


def load_kept_truth(name: str, out: Path) -> Recording | None:
    """The kept account of ``name``'s plain run as a finished recording in ``out`` (its
    ``truth.json`` written there), or None when there is none or its key no longer holds."""
    if os.environ.get(TRUTH_ENV) in ("live", "keep"):
        return None
    try:
        kept = json.loads((KEPT_TRUTH / f"{name}.json").read_text())
    except (OSError, ValueError):
        return None
    if kept.get("key") != truth_key(name, list(kept.get("key", {}).get("sources", {}))):
        return None
    out.mkdir(parents=True, exist_ok=True)
    (out / "truth.json").write_text(_from_kept(json.dumps(kept["truth"]), out))
    rec = Recording(f"{name}@plain", out, None, returncode=kept["returncode"])
    rec.stdout = _from_kept("".join(kept["stdout"]), out)
    rec.stderr = _from_kept("".join(kept["stderr"]), out)
    return rec


def keep_truth(name: str, rec: Recording) -> None:
    """Writes the live plain run ``rec`` of ``name`` as its kept account."""
    truth = json.loads((rec.runs_dir / "truth.json").read_text())
    # an account without its sources would be keyed on no file: it would hold after any edit
    assert truth.get("sources"), f"{name}: truth.json names no sources (a plain run from an older harness? clear {CACHE_ENV})"
    kept = {
        "key": truth_key(name, truth.get("sources", [])),
        "returncode": rec.returncode,
        "truth": json.loads(_to_kept(json.dumps(truth), rec.runs_dir)),
        "stdout": _to_kept(rec.stdout, rec.runs_dir).splitlines(keepends=True),
        "stderr": _to_kept(rec.stderr, rec.runs_dir).splitlines(keepends=True),
    }
    KEPT_TRUTH.mkdir(exist_ok=True)
    (KEPT_TRUTH / f"{name}.json").write_text(json.dumps(kept, indent=1) + "\n")


def records(fixture: Callable[..., object]) -> Callable[..., object]:
    """Marks a fixture function (put it under ``@pytest.fixture``) that records real
    ``torch.compile`` runs: every test that uses it, directly or through other fixtures, gets
    the ``corpus`` marker (tests/conftest.py), so ``-m "not corpus"`` skips it."""
    fixture.records_real_runs = True  # type: ignore[attr-defined]
    return fixture


def _program_env(name: str) -> dict[str, str]:
    env = dict(os.environ)
    for var in ("DYN_INSPECT_RUNS_DIR", "TORCH_LOGS", "TORCH_TRACE", "TORCHINDUCTOR_CACHE_DIR"):
        env.pop(var, None)
    env.update(PROGRAM_ENV.get(name, {}))
    return env


def _dyn_inspect_cmd(runs_dir: Path, argv: list[str]) -> list[str]:
    cmd = [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(runs_dir), *argv]
    if argv and argv[0].startswith("--"):
        cmd = [str(DYN_INSPECT), "--no-tui", argv[0], "--runs-dir", str(runs_dir), *argv[1:]]
    return cmd


def marker_line(path: Path, marker: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.rstrip().endswith(f"# {marker}") or f"# {marker} " in line or line.rstrip().endswith(marker):
            return number
    raise LookupError(f"{marker} not in {path}")


# Development only: with DYN_INSPECT_CORPUS_CACHE=DIR, recordings are kept in DIR and
# reused by later sessions (delete DIR after changing the recorder). CI never sets it.
# `tests/run.sh --quick` sets it to a folder named by ``fingerprint()``, so a change to the
# recorder or to a recorded program records again instead of reading a stale recording.
CACHE_ENV = "DYN_INSPECT_CORPUS_CACHE"

# What a kept recording depends on (paths relative to the checkout): the recorder, the CLI
# command that launches it, the programs recorded (the corpus, the example; the tests' own
# inline programs are kept under keys of their text), and how they are recorded and plainly
# run (this module, the C++ pool, the differential's harness).
FINGERPRINTED = (
    "engine",
    "cli/commands/run.py",
    "tests/corpus",
    "examples",
    "tests/corpus_support.py",
    "tests/inductor_pool.py",
    "tests/differential/ground_truth.py",
)


def fingerprint(root: Path = ROOT, paths: tuple[str, ...] = FINGERPRINTED) -> str:
    """A short hash of every file under ``paths`` (names and contents; caches and dot-folders
    left out), the Python and the torch/transformers versions: the name of the folder whose
    recordings ``tests/run.sh --quick`` reuses. Any change to one of them names another folder."""
    h = hashlib.sha256()
    for extra in ("python {}.{}.{}".format(*sys.version_info[:3]), platform.machine(), *(f"{p} {_version(p)}" for p in ("torch", "transformers"))):
        h.update(extra.encode() + b"\0")
    for rel in paths:
        top = root / rel
        files = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
        for f in files:
            parts = f.relative_to(root).parts
            if not f.is_file() or any(part == "__pycache__" or part.startswith(".") for part in parts):
                continue
            h.update("/".join(parts).encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()[:16]


@dataclass
class Recording:
    name: str
    runs_dir: Path
    process: subprocess.Popen[str] | None
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    # the thread that starts the process when a job slot is free (see _start_later)
    starter: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wait(self, timeout: float | None = 900) -> Recording:
        if self.starter is not None and self.starter is not threading.current_thread():
            # queued behind other programs: no limit here (pytest-timeout bounds a test)
            self.starter.join()
        with self._lock:
            if self.returncode is None and self.process is not None:
                self.stdout, self.stderr = self.process.communicate(timeout=timeout)
                self.returncode = self.process.returncode
                # what the other processes of this session (or, with DYN_INSPECT_CORPUS_CACHE,
                # later sessions) read instead of recording the program again
                result = {"returncode": self.returncode, "stdout": self.stdout, "stderr": self.stderr}
                (self.runs_dir / "result.json").write_text(json.dumps(result))
        return self

    def load_cached(self) -> bool:
        """Takes the result a finished recording left in ``runs_dir``; False when none."""
        result = self.runs_dir / "result.json"
        if not result.is_file():
            return False
        data = json.loads(result.read_text())
        self.returncode, self.stdout, self.stderr = data["returncode"], data["stdout"], data["stderr"]
        return True

    @property
    def run_dir(self) -> Path:
        self.wait()
        runs = sorted(p for p in self.runs_dir.iterdir() if p.is_dir() and not p.is_symlink())
        assert len(runs) == 1, f"{self.name}: expected one run, found {runs}\n{self.stderr[-3000:]}"
        return runs[0]


# How many corpus programs run at once. They spend most of their time in the C++ compiler,
# so a few overlap well on two cores; each also holds a torch process and Inductor's
# compile workers (~1 GB), so starting every program at once only risks memory.
JOBS_ENV = "DYN_INSPECT_CORPUS_JOBS"
# Under pytest-xdist each worker gets its share of the default.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
_JOBS = int(os.environ.get(JOBS_ENV) or max(1, 6 // _WORKERS))
_SLOTS = threading.Semaphore(_JOBS)


# With DYN_INSPECT_CORPUS_TIMES=FILE, each recording appends one JSON line to FILE: its
# name, the seconds it waited for a job slot and the seconds it ran (docs/testing.md,
# "Where the time goes"). Measurement only; tests never read it.
TIMES_ENV = "DYN_INSPECT_CORPUS_TIMES"


def _log_time(name: str, queued: float, started: float, ended: float) -> None:
    path = os.environ.get(TIMES_ENV)
    if not path:
        return
    line = {"name": name, "queued_s": round(started - queued, 1), "wall_s": round(ended - started, 1), "jobs": _JOBS, "workers": _WORKERS}
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


def _start_later(
    rec: Recording, popen: Callable[[], subprocess.Popen[str]], after: Recording | None = None, built: Path | None = None
) -> None:
    """Run ``popen()`` in a job slot (after ``after`` ended, if given) and wait for it; then
    the C++ it built in the Inductor cache ``built`` joins the session's pool.

    Of the processes sharing a corpus root (pytest-xdist's workers) one records each
    program: it holds the program's lock file beside ``rec.runs_dir`` while it records, and
    the others wait on that lock and read the result it left. The lock is tried only once a
    slot is free, and a process that finds it taken gives its slot back while it waits: a
    worker never holds programs it is not yet recording (the other's slots would idle)."""

    def record_here(queued: float) -> None:
        if rec.runs_dir.exists():
            shutil.rmtree(rec.runs_dir)  # what a recording that died half-way left
        rec.runs_dir.mkdir(parents=True)
        started = time.monotonic()
        rec.process = popen()
        rec.wait(timeout=None)
        _log_time(rec.name, queued, started, time.monotonic())

    def run() -> None:
        queued = time.monotonic()
        try:
            if after is not None:
                after.wait(timeout=None)
            rec.runs_dir.parent.mkdir(parents=True, exist_ok=True)
            with open(rec.runs_dir.parent / f"{rec.name}.lock", "a") as claim:  # unlocked when closed
                with _SLOTS:
                    try:
                        fcntl.flock(claim, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        ours = True
                    except BlockingIOError:
                        ours = False  # another process records it now
                    if ours:
                        if rec.load_cached():
                            return  # recorded already (by the other process, or kept by CACHE_ENV)
                        record_here(queued)
                if not ours:
                    fcntl.flock(claim, fcntl.LOCK_EX)  # until the other one is done
                    if rec.load_cached():
                        return
                    with _SLOTS:  # it stopped without a result: record it here
                        record_here(queued)
                if built is not None:
                    harvest(built)
        except Exception as exc:  # the test that reads this run reports it
            rec.stderr += f"\ncould not run {rec.name}: {exc!r}"

    rec.starter = threading.Thread(target=run, name=f"corpus-{rec.name}", daemon=True)
    rec.starter.start()


class Corpus:
    """Starts programs on demand; ``prestart`` queues several, run a few at a time
    (``DYN_INSPECT_CORPUS_JOBS``, default 6) in the order asked."""

    def __init__(self, root: Path) -> None:
        cache = os.environ.get(CACHE_ENV)
        self.root = Path(cache) if cache else root
        self.recordings: dict[str, Recording] = {}

    def prestart(self, names: list[str]) -> None:
        for name in names:
            self._start(name)

    def _start(self, name: str) -> Recording:
        if name in self.recordings:
            return self.recordings[name]
        runs_dir = self.root / name
        rec = self.recordings[name] = Recording(name, runs_dir, None)
        _start_later(rec, lambda: self._popen_recording(name, runs_dir), built=self._inductor_cache(name))
        return rec

    def _inductor_cache(self, name: str) -> Path:
        return self.root / f"inductor-cache-{name}"

    def _popen_recording(self, name: str, runs_dir: Path) -> subprocess.Popen[str]:
        root = self.root
        env = _program_env(name)
        env["DYN_INSPECT_NO_TUI"] = "1"
        # A fresh Inductor cache for each program: every session sees first-run behaviour (all
        # graph stages are logged; an FX-cache hit would skip pre/post-grad graphs), and the
        # differential's cache hits and misses do not depend on which other program compiled
        # the same graph first. Each is seeded with the session's built C++ only
        # (tests/inductor_pool.py: no FX-graph or AOT cache entry).
        cache = self._inductor_cache(name)
        if cache.exists():
            shutil.rmtree(cache)
        env["TORCHINDUCTOR_CACHE_DIR"] = seed(cache, harvest_when_test_ends=False)
        cwd, argv = PROGRAMS[name]
        cmd = _dyn_inspect_cmd(runs_dir, argv)
        if name in WARM_FROM_COPY:
            # First the same program from a copy elsewhere (another checkout), same cache.
            other = root / f"{name}-other-checkout" / cwd.name
            if other.exists():
                shutil.rmtree(other)
            shutil.copytree(cwd, other)
            first = _dyn_inspect_cmd(root / f"{name}-other-runs", argv)
            script = f"cd {shlex.quote(str(other))} && {shlex.join(first)} >{shlex.quote(str(other.parent / 'log.txt'))} 2>&1; cd {shlex.quote(str(cwd))} && exec {shlex.join(cmd)}"
            cmd = ["bash", "-c", script]
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def plain(self, name: str) -> Recording:
        """The program run without dyn-inspect, under tests/differential/ground_truth.py with
        ``TORCH_LOGS=graph_breaks,recompiles,guards``: torch's own account (``truth.json`` in the
        returned recording's ``runs_dir``, torch's log in its ``stderr``). Started on first
        use; ``prestart_plain`` starts several. A kept account that still holds is read
        instead (``load_kept_truth``); with DYN_INSPECT_TRUTH=keep the live one is kept."""
        rec = self._start_plain(name).wait()
        if os.environ.get(TRUTH_ENV) == "keep" and rec.returncode is not None and (rec.runs_dir / "truth.json").is_file():
            keep_truth(name, rec)
        return rec

    def prestart_plain(self, names: list[str]) -> None:
        for name in names:
            self._start_plain(name)

    def plain_live(self, name: str) -> Recording:
        """The plain run of ``name`` run now, even when a kept account of it holds."""
        return self._start_plain(name, live=True).wait()

    def prestart_plain_live(self, name: str) -> None:
        self._start_plain(name, live=True)

    def _start_plain(self, name: str, live: bool = False) -> Recording:
        key = f"{name}@plain" + ("-live" if live else "")
        if key in self.recordings:
            return self.recordings[key]
        out = self.root / key
        if not live and (kept := load_kept_truth(name, out)) is not None:
            self.recordings[key] = kept
            return kept
        recording = self._start(name)
        rec = self.recordings[key] = Recording(key, out, None)
        # After the recording: its Inductor cache, less the FX-graph and AOT caches, seeds
        # this run's, so compiled C++ kernels are not built twice (the counts compared —
        # FX-cache hits and misses, graphs, kernel names — do not change).
        _start_later(rec, lambda: self._popen_plain(name, out, self._inductor_cache(name)), after=recording)
        return rec

    def _popen_plain(self, name: str, out: Path, recorded: Path) -> subprocess.Popen[str]:
        cache = out / "inductor-cache"
        if recorded.is_dir():
            shutil.copytree(
                recorded,
                cache,
                copy_function=os.link,
                ignore=lambda d, names: [n for n in names if d == str(recorded) and n in ("fxgraph", "aotautograd")],
            )
        env = _program_env(name)
        env["TORCH_LOGS"] = "graph_breaks,recompiles,guards"
        env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
        cwd, argv = PROGRAMS[name]
        cmd = [sys.executable, str(GROUND_TRUTH), str(out / "truth.json"), *argv]
        if name in WARM_FROM_COPY:
            other = out / "other-checkout" / cwd.name
            shutil.copytree(cwd, other)
            first = [sys.executable, str(GROUND_TRUTH), str(out / "truth-first.json"), *argv]
            script = f"cd {shlex.quote(str(other))} && {shlex.join(first)} >{shlex.quote(str(out / 'first-log.txt'))} 2>&1; cd {shlex.quote(str(cwd))} && exec {shlex.join(cmd)}"
            cmd = ["bash", "-c", script]
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def __getitem__(self, name: str) -> Recording:
        return self._start(name).wait()


def markdown_html(text: str) -> str:
    """Markdown as a renderer makes it (CommonMark with tables, as VS Code's hover and
    GitHub do): what a crafted string could turn into links or images."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(text)


def markdown_text(text: str) -> str:
    """What a reader sees of Markdown: the rendered page's text (escapes undone)."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", markdown_html(text)))


if __name__ == "__main__":
    # `python tests/corpus_support.py fingerprint` (tests/run.sh --quick)
    if sys.argv[1:] != ["fingerprint"]:
        sys.exit("usage: python tests/corpus_support.py fingerprint")
    print(fingerprint())
