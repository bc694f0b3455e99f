"""Every Python package folder of the five trees is listed in pyproject's packages, under
its dyn_inspect.* name: a missing one (dyn_inspect.tui.views was) is absent from a
non-editable install while the editable install the tests use still imports it."""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_folder_is_listed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping: dict[str, str] = config["package-dir"]
    found = set()
    for name, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *rel.parts]) if rel.parts else name)
    assert found == set(config["packages"])


def _data_files() -> dict[str, list[str]]:
    """Non-Python files inside the package folders, per package (paths relative to it)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    out: dict[str, list[str]] = {}
    for name, folder in config["package-dir"].items():
        for path in (ROOT / folder).rglob("*"):
            if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
                continue
            # the deepest package folder above the file owns it
            owner = next(p for p in path.parents if (p / "__init__.py").is_file())
            rel = owner.relative_to(ROOT / folder)
            package = ".".join([name, *rel.parts]) if rel.parts else name
            out.setdefault(package, []).append(path.relative_to(owner).as_posix())
    return out


def test_every_data_file_is_package_data() -> None:
    """A file the code reads (report.html's template) is in no wheel unless package-data
    lists it; the editable install would still find it."""
    globs: dict[str, list[str]] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"].get("package-data", {})
    for package, files in _data_files().items():
        for f in files:
            assert any(fnmatch.fnmatch(f, g) for g in globs.get(package, [])), f"{package}: {f} is not in package-data"


def test_a_built_wheel_carries_the_templates(tmp_path: Path) -> None:
    """The non-editable install: build the wheel (no network, no isolation) from a copy of
    the sources (a build writes build/ and egg-info beside them) and look inside."""
    src = tmp_path / "src"
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for folder in config["package-dir"].values():
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(src)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    (wheel,) = tmp_path.glob("dyn_inspect-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for package, files in _data_files().items():
        for f in files:
            assert f"{package.replace('.', '/')}/{f}" in names
    assert "dyn_inspect/inspector/export/templates/report.html.j2" in names


def test_every_module_imports() -> None:
    """Each module imports on its own, in a fresh interpreter: a name one branch moved and
    another still imports from its old home breaks the whole CLI (its commands load at
    start), and only a real import notices."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    names = []
    for name, folder in config["package-dir"].items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts or path.name == "__main__.py":
                continue
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            names.append(".".join([name, *parts]))
    code = "import importlib, sys\nbad = []\nfor n in sys.argv[1:]:\n    try:\n        importlib.import_module(n)\n    except Exception as e:\n        bad.append(f'{n}: {type(e).__name__}: {e}')\nprint('\\n'.join(bad))\nsys.exit(1 if bad else 0)\n"
    out = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
