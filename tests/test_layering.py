"""The packages' layering, read from every module's imports (an ast walk: top-level,
function-level and ``TYPE_CHECKING`` imports alike, relative ones resolved):

- engine imports no other dyn_inspect package (it runs inside the user's program);
- inspector imports only engine and itself (it never imports a face);
- lsp and tui import only inspector and themselves, plus ``dyn_inspect.engine.user_cache``
  (this user's cache: the standard library only, the recorder writes it too) and (tui only,
  where it starts runs) ``dyn_inspect.engine.launcher``; lsp never imports tui, tui never lsp;
- mcp (the MCP server, ``mcp_server/``) imports only inspector and itself;
- cli, the composition root, may import everything, and nothing imports cli;
- the notebook face (``notebook/``: the ``dyn_inspect`` package's own modules, the IPython
  extension) imports only engine and inspector, and nothing imports it;
- a view (``tui/views/*.py``) never imports another view: shared code lives in
  ``tui/views/base.py``, ``tui/views/table.py`` or ``tui/display.py``.

A failure names each offending module, line and import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
TOP = "dyn_inspect"

# package -> the dyn_inspect packages (or single modules) it may import besides itself
ALLOWED: dict[str, tuple[str, ...]] = {
    "engine": (),
    "inspector": ("engine",),
    "lsp": ("inspector", "engine.user_cache"),
    "tui": ("inspector", "engine.launcher", "engine.user_cache"),
    "mcp": ("inspector",),
    "cli": ("engine", "inspector", "lsp", "tui", "mcp"),
    "notebook": ("engine", "inspector"),
}
# The modules of notebook/ are dyn_inspect's own (dyn_inspect.magics): every other name
# under dyn_inspect is one of the packages above.
NOTEBOOK = "notebook"
VIEWS = f"{TOP}.tui.views"
VIEW_SHARED = {f"{VIEWS}.base", f"{VIEWS}.table", VIEWS}


def _modules() -> Iterator[tuple[str, Path, bool]]:
    """(module name, file, is a package's __init__) for every module of the five folders."""
    mapping: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for name, folder in mapping.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            yield ".".join([name, *parts]), path, path.name == "__init__.py"


def _imports(module: str, path: Path, is_package: bool) -> Iterator[tuple[int, str]]:
    """(line, imported module) for each import in the file; ``from X import y`` yields
    ``X.y`` too, since ``y`` may be a module (``from dyn_inspect.engine import launcher``).
    A constant ``importlib.import_module("...")`` counts as an import."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for alias in node.names:
                yield node.lineno, f"{source}.{alias.name}" if alias.name != "*" else source
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.lineno, node.args[0].value


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED and parts[1] != NOTEBOOK else NOTEBOOK


def _violation(module: str, imported: str) -> str | None:
    """Why ``module`` may not import ``imported``; None when it may."""
    if not _within(imported, TOP) or imported == TOP:
        return None
    own = _package(module)
    target = _package(imported)
    if target == own:
        if module != VIEWS and _within(module, VIEWS) and _within(imported, VIEWS):
            other = ".".join(imported.split(".")[:4])
            if other not in (module, *VIEW_SHARED):
                return "a view imports another view (shared code goes to tui/views/base.py, tui/views/table.py or tui/display.py)"
        return None
    allowed = ALLOWED.get(own)
    if allowed is None:
        return f"{own} is not a known package (add it to ALLOWED)"
    if any(_within(imported, f"{TOP}.{a}") for a in allowed):
        return None
    return f"{own} may import only {', '.join(allowed) or 'itself'}"


def _violations() -> list[str]:
    out = []
    for module, path, is_package in _modules():
        for line, imported in _imports(module, path, is_package):
            why = _violation(module, imported)
            if why is None:
                continue
            out.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {imported}: {why}")
    return out


def test_the_packages_import_only_downwards() -> None:
    problems = _violations()
    assert not problems, "layering violations:\n" + "\n".join(problems)


def test_the_walk_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The checker itself: relative, function-level, TYPE_CHECKING and import_module
    imports are all seen, and each rule fires."""
    src = tmp_path / "m.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from dyn_inspect.tui.app import InspectorApp\n"
        "def f():\n"
        "    import dyn_inspect.lsp.server\n"
        "    from ..views import kernels\n"
        "    importlib.import_module('dyn_inspect.cli')\n"
    )
    found = {imported for _, imported in _imports(f"{TOP}.tui.views.breaks", src, False)}
    assert {"dyn_inspect.tui.app.InspectorApp", "dyn_inspect.lsp.server", "dyn_inspect.tui.views.kernels", "dyn_inspect.cli"} <= found
    assert _violation(f"{TOP}.tui.views.breaks", "dyn_inspect.tui.views.kernels") is not None
    assert _violation(f"{TOP}.tui.views.breaks", "dyn_inspect.tui.views.base") is None
    assert _violation(f"{TOP}.tui.views.breaks", "dyn_inspect.tui.display") is None
    assert _violation(f"{TOP}.tui.app", "dyn_inspect.lsp.server") is not None
    assert _violation(f"{TOP}.lsp.server", "dyn_inspect.tui.app") is not None
    assert _violation(f"{TOP}.lsp.server", "dyn_inspect.engine.launcher") is not None
    assert _violation(f"{TOP}.tui.app", "dyn_inspect.engine.launcher") is None
    assert _violation(f"{TOP}.tui.app", "dyn_inspect.engine.launcher.LaunchSpec") is None
    assert _violation(f"{TOP}.tui.app", "dyn_inspect.engine.schema") is not None
    assert _violation(f"{TOP}.tui.app", "dyn_inspect.engine") is not None  # `from dyn_inspect import engine`
    assert _violation(f"{TOP}.inspector.run", "dyn_inspect.engine.schema") is None
    assert _violation(f"{TOP}.inspector.run", "dyn_inspect.cli") is not None
    assert _violation(f"{TOP}.engine.recorder", "dyn_inspect.inspector.model") is not None
    assert _violation(f"{TOP}.cli.commands.open", "dyn_inspect.tui.app") is None


# -- what the faces take from the analyses (issue 30) ---------------------------------------

# A face renders the report layer's Structs (inspector/reports/ builds them, inspector/outputs/
# types them): a count, headline, location or fix is computed once, there. The bundle's pages
# (inspector/export/report.py) are a face too. No face takes anything from inspector.analysis
# (the last 21 names, the CLI's, moved in session 21).
FACES = ("cli", "tui", "lsp", "mcp", "notebook", "inspector.export.report")
ANALYSIS = f"{TOP}.inspector.analysis"


def _face(module: str) -> str | None:
    if _within(module, f"{TOP}.inspector.export.report"):
        return "inspector.export.report"
    package = _package(module)
    return package if package in FACES else None


def _analysis_taken() -> dict[str, dict[str, list[str]]]:
    """face -> what it takes from inspector.analysis (``module.name``, or ``module`` for a
    whole module) -> the lines that take it."""
    out: dict[str, dict[str, list[str]]] = {f: {} for f in FACES}
    for module, path, is_package in _modules():
        face = _face(module)
        if face is None:
            continue
        for line, imported in _imports(module, path, is_package):
            if _within(imported, ANALYSIS) and imported != ANALYSIS:
                name = imported[len(ANALYSIS) + 1 :]
                out[face].setdefault(name, []).append(f"{path.relative_to(ROOT)}:{line}")
    return out


def test_faces_take_nothing_from_the_analyses() -> None:
    taken = _analysis_taken()
    found = [f"{where}: {face} takes inspector.analysis.{name}" for face in FACES for name, places in sorted(taken[face].items()) for where in places]
    assert not found, "faces render the report layer's Structs (inspector/reports/); build the answer there:\n" + "\n".join(found)
