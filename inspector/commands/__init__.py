"""The subcommands, one module each; adding one means one module and one entry here."""

from __future__ import annotations

from types import ModuleType

from dyn_inspect.inspector.commands import run, schema, summary

COMMANDS: dict[str, ModuleType] = {
    "run": run,
    "summary": summary,
    "schema": schema,
}
