"""The subcommands, one module each (``prepare_parser`` + ``run`` + ``HELP``).

Adding a subcommand is one module plus one line here. Modules are imported when the
parser is built; faces (tui, lsp) are imported only inside their command's ``run``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

COMMAND_MODULES: dict[str, str] = {
    "run": "run",
    "summary": "summary",
    "breaks": "breaks",
    "recompiles": "recompiles",
    "causes": "causes",
    "kernels": "kernels",
    "kernel": "kernel",
    "graph": "graph",
    "runs": "runs",
    "check": "check",
    "diff": "diff",
    "open": "open",
    "lsp": "lsp",
    "mcp": "mcp",
    "export": "export",
    "import": "import_trace",
    "merge": "merge",
    "schema": "schema",
    "trace": "trace",
    "shapes": "shapes",
    "cost": "cost",
    "cache": "cache",
    "code": "code",
    "verify": "verify",
}


def load(names: list[str] | None = None) -> dict[str, ModuleType]:
    """The command modules (``names``: only those — one command's run imports only its
    own module, not networkx and Jinja2 for ``summary``)."""
    out: dict[str, ModuleType] = {}
    for name, module in COMMAND_MODULES.items():
        if names is not None and name not in names:
            continue
        try:
            out[name] = importlib.import_module(f"dyn_inspect.cli.commands.{module}")
        except ModuleNotFoundError as exc:
            # Only a command module that does not exist (yet) is skipped; a missing
            # dependency inside one is a real error. tests/cli/test_cli.py checks all load.
            if exc.name != f"dyn_inspect.cli.commands.{module}":
                raise
    return out
