"""Every Python package folder of the four trees is listed in pyproject's packages, under
its dyn_inspect.* name: a missing one (dyn_inspect.tui.views was) is absent from a
non-editable install while the editable install the tests use still imports it."""

from __future__ import annotations

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
