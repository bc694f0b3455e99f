"""docs/architecture.md against the code: every path it names exists, and each recipe names
every file that registers what the recipe adds — found from the code, not listed here: the
files that hold (nearly) every existing event kind, subcommand, view or fix kind by name
are that thing's registries, and a recipe that leaves one out fails."""

from __future__ import annotations

import re
import subprocess
import typing
from pathlib import Path

import pytest

from dyn_inspect.cli.commands import COMMAND_MODULES
from dyn_inspect.engine.schema import EVENT_TYPES
from dyn_inspect.inspector.analysis.fix_kinds import FixKind
from dyn_inspect.tui.view_list import VIEW_IDS

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
_PATH = re.compile(r"`((?:engine|inspector|cli|tui|lsp|notebook|vscode-extension|docs|tests)/[^`\s]*)`")


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / p for p in out if not p.startswith(("tests/", "bench/", "examples/")) and p.endswith((".py", ".ts", ".md"))]


def _recipe(title: str) -> set[str]:
    """The paths a recipe section names."""
    text = DOC.read_text()
    m = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^#|\Z)", text, re.S | re.M)
    assert m is not None, f"no recipe '{title}' in docs/architecture.md"
    return set(_PATH.findall(m[1]))


def _registries(names: list[str], *, quoted: bool) -> set[str]:
    """Files that name at least 90 % of ``names`` (as quoted strings, or as whole words)."""
    out = set()
    for f in _tracked():
        text = f.read_text(errors="replace")
        pattern = (r"[\"']{}[\"']" if quoted else r"(?<![\w-]){}(?![\w-])").format
        hits = sum(1 for n in names if re.search(pattern(re.escape(n)), text))
        if hits >= 0.9 * len(names):
            out.add(str(f.relative_to(ROOT)))
    return out


def test_every_path_named_exists() -> None:
    named = set(_PATH.findall(DOC.read_text()))
    assert len(named) > 30
    missing = []
    for p in sorted(named):
        p = p.split("#", 1)[0].rstrip(".,;:")
        if "<" in p:  # a placeholder (`cli/commands/<name>.py`): its folder exists
            p = p.split("<", 1)[0]
        if not (list(ROOT.glob(p)) if "*" in p else (ROOT / p).exists()):
            missing.append(p)
    assert missing == []


RECIPES = {
    "Add an event kind": [
        ([t.__name__ for t in EVENT_TYPES.values()], False),  # classes: the union, the model's handlers
        (list(EVENT_TYPES), False),  # tags: the schema, the format's table
    ],
    "Add a subcommand": [(list(COMMAND_MODULES), True)],
    "Add a TUI view": [(list(VIEW_IDS), True)],
    "Add a fix kind": [(list(typing.get_args(FixKind)), True)],
}


@pytest.mark.parametrize("title", sorted(RECIPES))
def test_each_recipe_names_every_registry(title: str) -> None:
    listed = _recipe(title)
    found: set[str] = set()
    for names, quoted in RECIPES[title]:
        assert len(names) >= 5, names
        found |= _registries(names, quoted=quoted)
    assert found, f"no registry found for '{title}'"
    assert found - listed == set(), f"'{title}' in docs/architecture.md leaves out {sorted(found - listed)}"


def test_the_check_finds_a_left_out_registry() -> None:
    """The registries found for the event kinds are the four files the recipe names: a
    recipe without inspector/model.py (the step an earlier guide forgot) would fail."""
    found = _registries([t.__name__ for t in EVENT_TYPES.values()], quoted=False) | _registries(list(EVENT_TYPES), quoted=False)
    assert {"engine/schema.py", "inspector/model.py", "docs/event-log.md"} <= found
