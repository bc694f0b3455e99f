"""inspector/locations.py, the one home of location questions: a table per question, and
the faces (`kernels --at`, `export --at`, the TUI's kernel filter) agreeing on each case."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyn_inspect.engine.schema import Blob, Kernel, Loc
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import (
    is_library,
    nearest_user_frame,
    package_path,
    parse_file_line,
    same_file,
    short_path,
    split_file_line,
)
from dyn_inspect.inspector.model import CompileInfo, KernelInfo
from dyn_inspect.tui.views.kernels import kernel_matches

SITE = "/venv/lib/python3.12/site-packages"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """proj/train.py, proj/examples/train.py, other/train.py; this process in proj/sub."""
    for rel in ("proj/train.py", "proj/examples/train.py", "other/train.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    (tmp_path / "proj" / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "proj" / "sub")
    return tmp_path


# (recorded path under the tree, what the user typed, run cwd under the tree, same file?)
SAME_FILE = [
    ("proj/train.py", "{root}/proj/train.py", "proj", True),  # absolute
    ("proj/train.py", "train.py", "proj", True),  # a suffix
    ("proj/train.py", "./train.py", "proj", True),  # relative to the run's cwd
    ("proj/train.py", "../train.py", "proj", True),  # relative to this process's directory
    ("other/train.py", "../train.py", "proj", False),  # `..` names one file, never a suffix
    ("other/train.py", "./train.py", "proj", True),  # not here nor in the run's cwd: as a suffix, like train.py
    ("proj/examples/train.py", "examples/train.py", "proj", True),
    ("proj/examples/train.py", "les/train.py", "proj", False),  # suffixes end at a path component
    ("proj/train.py", "rain.py", "proj", False),
    ("proj/train.py", "{root}/other/train.py", "proj", False),  # another file of the same name
    ("proj/train.py", "", "proj", False),
]


@pytest.mark.parametrize(("recorded", "typed", "cwd", "expected"), SAME_FILE)
def test_same_file(tree: Path, recorded: str, typed: str, cwd: str, expected: bool) -> None:
    assert same_file(str(tree / recorded), typed.format(root=tree), str(tree / cwd)) is expected


def test_same_file_in_another_checkout(tree: Path) -> None:
    """A run recorded in /home/ci/proj names its files there; an absolute path in this
    checkout (we are in proj/sub) names the file at the same place below the run's cwd."""
    recorded = "/home/ci/proj/sub/train.py"
    assert same_file(recorded, str(tree / "proj" / "sub" / "train.py"), "/home/ci/proj/sub")
    assert not same_file(recorded, str(tree / "proj" / "sub" / "eval.py"), "/home/ci/proj/sub")
    assert same_file(recorded, "sub/train.py", "/home/ci/proj")  # and as a suffix


def test_same_file_library_paths() -> None:
    recorded = f"{SITE}/torch/nn/functional.py"
    assert same_file(recorded, "torch/nn/functional.py", "/work")
    assert same_file(recorded, "functional.py", "/work")
    assert not same_file(recorded, "nn/modules/functional.py", "/work")


@pytest.mark.parametrize(
    ("text", "split", "parsed"),
    [
        ("train.py:27", ("train.py", 27), ("train.py", 27)),
        ("./train.py:27", ("./train.py", 27), ("./train.py", 27)),
        ("C:/work/train.py:3", ("C:/work/train.py", 3), ("C:/work/train.py", 3)),
        (" train.py:27 ", ("train.py", 27), ("train.py", 27)),
        (":27", ("", 27), None),  # any file: a filter, not a command-line location
        ("train.py", None, None),
        ("train.py:0", None, None),  # lines are 1-based
        ("train.py:x", None, None),
        ("", None, None),
    ],
)
def test_file_line(text: str, split: tuple[str, int] | None, parsed: tuple[str, int] | None) -> None:
    assert split_file_line(text) == split
    if parsed is not None:
        assert parse_file_line(text) == parsed
    else:
        with pytest.raises(InspectorError, match=r"^--at wants FILE:LINE .*got "):
            parse_file_line(text)


@pytest.mark.parametrize(
    ("path", "library", "package"),
    [
        (f"{SITE}/torch/nn/functional.py", True, "torch/nn/functional.py"),
        ("/usr/lib/python3/dist-packages/numpy/core.py", True, "numpy/core.py"),
        ("/usr/lib/python3.12/json/__init__.py", True, None),  # the standard library
        ("<frozen importlib._bootstrap>", True, None),
        ("<string>", True, None),
        (f"{SITE}/pkg/site-packages/inner/mod.py", True, "inner/mod.py"),  # the innermost
        ("C:\\venv\\Lib\\site-packages\\torch\\x.py", True, "torch/x.py"),
        ("/home/me/proj/train.py", False, None),
        ("train.py", False, None),
    ],
)
def test_library_paths(path: str, library: bool, package: str | None) -> None:
    assert is_library(path) is library
    assert package_path(path) == package


@pytest.mark.parametrize(
    ("path", "cwd", "shown"),
    [
        ("/home/me/proj/train.py", "/home/me/proj", "train.py"),
        ("/home/me/proj/pkg/m.py", "/home/me/proj", "pkg/m.py"),
        ("/home/me/other/train.py", "/home/me/proj", "/home/me/other/train.py"),  # outside: absolute
        (f"{SITE}/torch/optim/optimizer.py", "/home/me/proj", "torch/optim/optimizer.py"),
        ("train.py", "/home/me/proj", "train.py"),  # recorded relative: as recorded
    ],
)
def test_short_path(path: str, cwd: str, shown: str) -> None:
    assert short_path(path, cwd) == shown


def test_short_path_defaults_to_this_directory(tree: Path) -> None:
    assert short_path(str(tree / "proj" / "sub" / "a.py")) == "a.py"


def test_nearest_user_frame(tmp_path: Path) -> None:
    user = Loc(str(tmp_path / "train.py"), 10)
    helper = Loc("/elsewhere/helper.py", 3)
    lib = Loc(f"{SITE}/transformers/modeling.py", 99)
    assert nearest_user_frame([user, helper, lib]) == helper  # innermost non-library frame
    assert nearest_user_frame([user, helper, lib], tmp_path) == user  # inside the workspace root
    assert nearest_user_frame([lib]) is None


def _kernel(*lines: Loc) -> KernelInfo:
    event = Kernel(name="cpp_fused_sin_0", backend="cpp", source=Blob("0" * 32, 0))
    return KernelInfo(event, CompileInfo("p1.jsonl", "0/0"), list(lines))


@pytest.mark.parametrize(("recorded", "typed", "cwd", "expected"), SAME_FILE)
def test_the_tui_filter_matches_like_kernels_at(tree: Path, recorded: str, typed: str, cwd: str, expected: bool) -> None:
    """The kernel view's `file:line` filter is `kernels --at`'s matching (it disagreed on
    `./train.py:27`)."""
    if not typed:
        return
    k = _kernel(Loc(str(tree / recorded), 27))
    assert kernel_matches(k, f"{typed.format(root=tree)}:27", str(tree / cwd)) is expected
    assert not kernel_matches(k, f"{typed.format(root=tree)}:28", str(tree / cwd))
    assert kernel_matches(k, ":27", str(tree / cwd))


def test_relative_spellings_resolve_from_this_directory_too(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree / "proj")
    assert same_file(str(tree / "proj" / "examples" / "train.py"), "./examples/train.py", "/somewhere/else")


def test_def_line_of_plain_decorated_and_edited_functions(tmp_path: Path) -> None:
    """co_firstlineno is the first decorator's line for a decorated function: the def line is
    found below it (multi-line decorators too); a plain def is its own line; an edit of the
    file is seen; a line that is neither stays as it is."""
    import os

    from dyn_inspect.inspector.locations import def_line
    from dyn_inspect.inspector.source_files import allow_root

    allow_root(tmp_path)  # source is read only under a root (a run's cwd opens one; here none is open)
    src = tmp_path / "m.py"
    src.write_text(
        "import functools\n"  # 1
        "\n"
        "def plain(x):\n"  # 3
        "    return x\n"
        "\n"
        "@functools.lru_cache(\n"  # 6
        "    maxsize=None,\n"
        ")\n"
        "@staticmethod\n"
        "async def decorated(x):\n"  # 10
        "    return x\n"
        "square = lambda x: x * x\n"  # 12
        "\x0c\n"  # 13: a form feed is no line break to Python
        "@functools.cache\n"  # 14
        "def after_form_feed(x):\n"  # 15
        "    return x\n"
    )
    assert def_line(str(src), 3) == 3
    assert def_line(str(src), 6) == 10
    assert def_line(str(src), 12) == 12
    assert def_line(str(src), 14) == 15
    assert def_line(str(tmp_path / "gone.py"), 7) == 7
    src.write_text("@functools.cache\ndef moved(x):\n    return x\n")
    os.utime(src, ns=(1, 1))  # another version even within the clock's resolution
    assert def_line(str(src), 1) == 2 and def_line(str(src), 3) == 3


# -- the recorder's own frames are never the user's (issue 28 #5) ---------------------------


def test_our_own_files_are_never_user_locations() -> None:
    import dyn_inspect.engine.tracehook as tracehook
    import dyn_inspect.inspector.reports as reports
    from dyn_inspect.engine.schema import Symbol
    from dyn_inspect.inspector.analysis.shapes import shapes_of
    from dyn_inspect.inspector.locations import is_ours, not_ours

    hook = Loc(file=str(Path(tracehook.__file__).resolve()), line=164, name="wrapper")
    user = Loc(file=str(Path(__file__).parents[1] / "corpus" / "shapes.py"), line=12, name="f")
    torch_frame = Loc(file=f"{SITE}/torch/_higher_order_ops/map.py", line=80)
    assert is_ours(hook.file) and is_ours(reports.__file__) and is_library(hook.file)
    # The checkout beside our packages (tests/, examples/) is user code.
    assert not is_ours(user.file) and not is_ours(str(Path(__file__).parents[2] / "examples" / "train.py"))
    assert nearest_user_frame([user, torch_frame, hook]) == user
    assert not_ours(hook) is None and not_ours(user) == user
    # A run recorded before the engine skipped our frames: its "created at" is dropped.
    c = CompileInfo(log="p1.jsonl", cid="0/0", symbols=[Symbol(symbol="u0", source="xs.size()[0]", loc=hook)])
    [sym] = shapes_of(c).symbols
    assert sym.loc is None
