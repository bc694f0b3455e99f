"""``dyn-inspect export`` on two realistic recorded programs: prints figures, asserts nothing.

    python bench/bench_export.py [--runs-dir DIR] [--tries 3] [--json FILE]

Programs: a tiny nanoGPT (``bench/workloads/nanogpt.py``: 2 layers, width 32, forward and
backward compiled) and a tiny HF Llama (``tests/corpus/fixes/hf_llama_mask.py``: one layer,
width 32, a recompile on the second sequence length). Each is recorded once under
``--runs-dir`` (default ``/tmp/dyn-inspect-bench-export``) and reused on later calls.

Timed: the whole command as a user runs it (``dyn-inspect export RUN -o FILE --force``,
interpreter start and imports included), with default settings and with
``--no-pictures``; the median of ``--tries``. Then one ``-v`` export per program prints the
time of each part (graphs, kernels, pictures, report.html, zip). Target (issue 27): ≤ 10 s
each on the 2-core CI machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = {
    "nanogpt": ROOT / "bench" / "workloads" / "nanogpt.py",
    "llama": ROOT / "tests" / "corpus" / "fixes" / "hf_llama_mask.py",
}
DYN = [sys.executable, "-m", "dyn_inspect.cli"]


@dataclass
class Figure:
    program: str
    mode: str  # "default" or "--no-pictures"
    median_s: float
    tries_s: list[float]
    size_bytes: int
    svgs: int
    skipped_pictures: int


def recorded(runs_dir: Path, name: str) -> Path:
    """The program's recorded run under ``runs_dir/name``, recording it first if absent."""
    base = runs_dir / name
    runs = sorted(p for p in base.glob("2*") if p.is_dir()) if base.is_dir() else []
    if runs:
        return runs[-1]
    print(f"recording {name} ({PROGRAMS[name].relative_to(ROOT)}) …", flush=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # A fresh Inductor cache: the run holds the kernels a first compile produces.
    with tempfile.TemporaryDirectory(prefix="dyn-inspect-bench-ic-") as cache:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache
        done = subprocess.run(
            [*DYN, "run", "--no-tui", "--runs-dir", str(base), str(PROGRAMS[name])], cwd=ROOT, env=env, capture_output=True, text=True
        )
    if done.returncode != 0:
        sys.exit(f"recording {name} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    runs = sorted(p for p in base.glob("2*") if p.is_dir())
    if not runs:
        sys.exit(f"recording {name} left no run under {base}")
    return runs[-1]


def _bundle_facts(path: Path) -> tuple[int, int, int]:
    import zipfile

    with zipfile.ZipFile(path) as z:
        svgs = sum(n.endswith(".svg") for n in z.namelist())
        manifest = json.loads(z.read("manifest.json"))
    skipped = sum(s["what"].startswith("SVG of ") for s in manifest["skipped"])
    return path.stat().st_size, svgs, skipped


def export_once(run: Path, out: Path, extra: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([*DYN, "export", str(run), "-o", str(out), "--force", *extra], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"export of {run} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return seconds, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs-dir", type=Path, default=Path(tempfile.gettempdir()) / "dyn-inspect-bench-export")
    parser.add_argument("--tries", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if shutil.which("dot") is None:
        print("note: Graphviz `dot` is not installed: the default export draws no pictures either")
    figures: list[Figure] = []
    parts: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="dyn-inspect-bench-export-") as tmp:
        for name in PROGRAMS:
            run = recorded(args.runs_dir, name)
            for mode, extra in (("default", []), ("--no-pictures", ["--no-pictures"])):
                out = Path(tmp) / f"{name}.zip"
                tries = [export_once(run, out, extra)[0] for _ in range(args.tries)]
                size, svgs, skipped = _bundle_facts(out)
                figures.append(Figure(name, mode, round(statistics.median(tries), 2), [round(t, 2) for t in tries], size, svgs, skipped))
            _, stderr = export_once(run, Path(tmp) / f"{name}-v.zip", ["-v"])
            parts[name] = "\n".join(line for line in stderr.splitlines() if line.startswith("dyn-inspect: ") and "s  " in line)
    print(f"\n{'program':<9} {'mode':<14} {'median':>7}  {'tries':<22} {'size':>9} {'SVGs':>5} {'not drawn':>9}")
    for f in figures:
        tries = ", ".join(f"{t:.2f}" for t in f.tries_s)
        print(
            f"{f.program:<9} {f.mode:<14} {f.median_s:>6.2f}s  {tries:<22} {f.size_bytes / 1024:>7.0f}KB {f.svgs:>5} {f.skipped_pictures:>9}"
        )
    for name, text in parts.items():
        print(f"\n{name}, export -v (default settings):\n{text}")
    if args.json is not None:
        args.json.write_text(json.dumps({"cpus": os.cpu_count(), "figures": [asdict(f) for f in figures], "parts": parts}, indent=2) + "\n")


if __name__ == "__main__":
    main()
