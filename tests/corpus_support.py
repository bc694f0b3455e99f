"""Recording the test corpus: each program once per test session, in parallel.

Programs mark the lines tests expect with comments (`# BREAK:branch`); tests look the
line numbers up with ``marker_line`` instead of hard-coding them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

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
}


def marker_line(path: Path, marker: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.rstrip().endswith(f"# {marker}") or f"# {marker} " in line or line.rstrip().endswith(marker):
            return number
    raise LookupError(f"{marker} not in {path}")


# Development only: with DYN_INSPECT_CORPUS_CACHE=DIR, recordings are kept in DIR and
# reused by later sessions (delete DIR after changing the recorder). CI never sets it.
CACHE_ENV = "DYN_INSPECT_CORPUS_CACHE"


@dataclass
class Recording:
    name: str
    runs_dir: Path
    process: subprocess.Popen[str] | None
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""

    def wait(self, timeout: float = 900) -> Recording:
        if self.returncode is None and self.process is not None:
            self.stdout, self.stderr = self.process.communicate(timeout=timeout)
            self.returncode = self.process.returncode
            if os.environ.get(CACHE_ENV):
                result = {"returncode": self.returncode, "stdout": self.stdout, "stderr": self.stderr}
                (self.runs_dir / "result.json").write_text(json.dumps(result))
        return self

    @classmethod
    def cached(cls, name: str, runs_dir: Path) -> Recording | None:
        result = runs_dir / "result.json"
        if not result.is_file():
            return None
        data = json.loads(result.read_text())
        return cls(name, runs_dir, None, data["returncode"], data["stdout"], data["stderr"])

    @property
    def run_dir(self) -> Path:
        self.wait()
        runs = sorted(p for p in self.runs_dir.iterdir() if p.is_dir() and not p.is_symlink())
        assert len(runs) == 1, f"{self.name}: expected one run, found {runs}\n{self.stderr[-3000:]}"
        return runs[0]


class Corpus:
    """Starts programs on demand; ``prestart`` starts several at once (they spend most of
    their time in the C++ compiler, so two cores overlap them well)."""

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
        cached = Recording.cached(name, runs_dir)
        if cached is not None:
            self.recordings[name] = cached
            return cached
        if runs_dir.exists():
            import shutil

            shutil.rmtree(runs_dir)
        root = self.root
        env = dict(os.environ)
        env["DYN_INSPECT_NO_TUI"] = "1"
        env.pop("DYN_INSPECT_RUNS_DIR", None)
        # A fresh Inductor cache: every session sees first-run behaviour (all graph stages
        # are logged; an FX-cache hit would skip pre/post-grad graphs).
        env["TORCHINDUCTOR_CACHE_DIR"] = str(root / "inductor-cache")
        cwd, argv = PROGRAMS[name]
        cmd = [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(runs_dir), *argv]
        if argv and argv[0].startswith("--"):
            cmd = [str(DYN_INSPECT), "--no-tui", argv[0], "--runs-dir", str(runs_dir), *argv[1:]]
        process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        rec = self.recordings[name] = Recording(name, runs_dir, process)
        return rec

    def __getitem__(self, name: str) -> Recording:
        return self._start(name).wait()
