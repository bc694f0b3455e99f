"""The quick tier's machinery (`tests/run.sh --quick`, docs/testing.md "The quick tier"): the
kept recordings' folder is named by a fingerprint that changes with what they depend on, and
the tests it leaves out (``SLOW`` in tests/conftest.py) name tests that exist."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from conftest import SLOW, _slow

from corpus_support import FINGERPRINTED, ROOT, fingerprint


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "engine" / "normalizers").mkdir(parents=True)
    (root / "engine" / "recorder.py").write_text("RECORD = 1\n")
    (root / "engine" / "normalizers" / "graphs.py").write_text("G = 1\n")
    (root / "tests" / "corpus").mkdir(parents=True)
    (root / "tests" / "corpus" / "breaks.py").write_text("print('break')\n")
    (root / "inspector").mkdir()
    (root / "inspector" / "model.py").write_text("M = 1\n")
    return root


def test_the_fingerprint_changes_with_the_recorder_and_the_programs_only(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    paths = ("engine", "tests/corpus", "tests/corpus_support.py")
    first = fingerprint(root, paths)
    assert fingerprint(root, paths) == first  # stable
    # not what the recordings depend on: the same folder
    (root / "inspector" / "model.py").write_text("M = 2\n")
    (root / "engine" / "__pycache__").mkdir()
    (root / "engine" / "__pycache__" / "recorder.cpython-312.pyc").write_bytes(b"\0")
    (root / "tests" / "corpus" / ".dyn-inspect" / "runs").mkdir(parents=True)
    (root / "tests" / "corpus" / ".dyn-inspect" / "runs" / "x").write_text("a run")
    assert fingerprint(root, paths) == first
    # an edit to the recorder, to a program, a new program, a renamed file, a listed file
    seen = {first}
    for change in (
        lambda: (root / "engine" / "normalizers" / "graphs.py").write_text("G = 2\n"),
        lambda: (root / "tests" / "corpus" / "breaks.py").write_text("print('break!')\n"),
        lambda: (root / "tests" / "corpus" / "new.py").write_text(""),
        lambda: (root / "engine" / "recorder.py").rename(root / "engine" / "recorder2.py"),
        lambda: (root / "tests" / "corpus_support.py").write_text("# how they are recorded\n"),
    ):
        change()
        now = fingerprint(root, paths)
        assert now not in seen
        seen.add(now)


def test_the_fingerprint_covers_the_recorder_and_every_recorded_program() -> None:
    for rel in FINGERPRINTED:
        assert (ROOT / rel).exists(), rel
    assert {"engine", "tests/corpus", "examples"} <= set(FINGERPRINTED)
    # every program a corpus recording runs is under a fingerprinted folder
    from corpus_support import PROGRAMS

    for name, (cwd, _argv) in PROGRAMS.items():
        assert any(cwd == ROOT / rel or ROOT / rel in cwd.parents for rel in FINGERPRINTED), name


def test_every_slow_entry_names_a_test_that_exists() -> None:
    for entry in SLOW:
        path, _, name = entry.partition("::")
        assert (ROOT / path).exists(), entry
        if name:
            assert re.search(rf"^(async )?def {re.escape(name)}\(", (ROOT / path).read_text(), re.M), entry


def test_slow_entries_match_files_tests_and_their_parameters_only() -> None:
    file_entry = next(e for e in SLOW if "::" not in e and not e.endswith("/"))
    assert _slow(file_entry + "::test_x") and _slow(file_entry + "::test_x[a-b]")
    test_entry = next(e for e in SLOW if "::" in e)
    assert _slow(test_entry) and _slow(test_entry + "[p]")
    assert not _slow(test_entry + "_and_more") and not _slow(file_entry.replace(".py", "_other.py") + "::test_x")


def test_install_is_an_option_of_the_quick_tier_only(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    done = subprocess.run([bash, str(ROOT / "tests" / "run.sh"), "--install"], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)})
    assert done.returncode == 2 and "--install goes with --quick" in done.stdout
    assert not list(tmp_path.iterdir())  # it stopped before making its temp folder
