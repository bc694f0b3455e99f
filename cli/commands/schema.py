"""``dyn-inspect schema``: print the event-log JSON Schema (from engine/schema.py), or with
``--outputs`` that of the typed outputs (inspector/outputs/)."""

from __future__ import annotations

import argparse
import json

from dyn_inspect.engine.schema import SCHEMA_VERSION, json_schema
from dyn_inspect.inspector import outputs
from dyn_inspect.inspector.outputs.lsp import contracts

HELP = "print the JSON Schema of the event log"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--outputs",
        action="store_true",
        help="the typed outputs (--json reports, manifest.json, LSP command results) instead of the event log",
    )


def outputs_schema_text() -> str:
    """What ``schema --outputs`` prints: the JSON Schema of every typed output (the file
    vscode-extension/schema/outputs.schema.json holds, the extension's types come from)."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": "dyn-inspect typed outputs: --json reports, manifest.json, compile.json, the environment, LSP command results "
        "(inspector/outputs/; `dyn-inspect schema --outputs`); contracts: the language server's command ids, diagnostic codes "
        "and settings (inspector/outputs/lsp.py)",
        **outputs.json_schema(),
        "contracts": contracts(),
    }
    return json.dumps(schema, indent=2) + "\n"


def run(args: argparse.Namespace) -> int:
    if args.outputs:
        print(outputs_schema_text(), end="")
        return 0
    schema = json_schema()
    schema["$comment"] = f"dyn-inspect event log, schema version {SCHEMA_VERSION}"
    print(json.dumps(schema, indent=2))
    return 0
