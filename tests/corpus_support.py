"""Recording the test corpus: each program once per test session, in parallel.

Programs mark the lines tests expect with comments (`# BREAK:branch`); tests look the
line numbers up with ``marker_line`` instead of hard-coding them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
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
}


def marker_line(path: Path, marker: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.rstrip().endswith(f"# {marker}") or f"# {marker} " in line or line.rstrip().endswith(marker):
            return number
    raise LookupError(f"{marker} not in {path}")


@dataclass
class Recording:
    name: str
    runs_dir: Path
    process: subprocess.Popen[str]
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""

    def wait(self, timeout: float = 900) -> Recording:
        if self.returncode is None:
            self.stdout, self.stderr = self.process.communicate(timeout=timeout)
            self.returncode = self.process.returncode
        return self

    @property
    def run_dir(self) -> Path:
        self.wait()
        runs = sorted(p for p in self.runs_dir.iterdir() if p.is_dir() and not p.is_symlink())
        assert len(runs) == 1, f"{self.name}: expected one run, found {runs}\n{self.stderr[-3000:]}"
        return runs[0]


class Corpus:
    """Starts every program at once (they spend most time in the C++ compiler)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.recordings: dict[str, Recording] = {}
        env = dict(os.environ)
        env["DYN_INSPECT_NO_TUI"] = "1"
        env.pop("DYN_INSPECT_RUNS_DIR", None)
        # A fresh Inductor cache: every session sees first-run behaviour (all graph stages
        # are logged; an FX-cache hit would skip pre/post-grad graphs).
        env["TORCHINDUCTOR_CACHE_DIR"] = str(root / "inductor-cache")
        for name, (cwd, argv) in PROGRAMS.items():
            runs_dir = root / name
            cmd = [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(runs_dir), *argv]
            if argv and argv[0].startswith("--"):
                cmd = [str(DYN_INSPECT), "--no-tui", argv[0], "--runs-dir", str(runs_dir), *argv[1:]]
            process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.recordings[name] = Recording(name, runs_dir, process)
        self.started = time.time()

    def __getitem__(self, name: str) -> Recording:
        return self.recordings[name].wait()
