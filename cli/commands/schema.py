"""``dyn-inspect schema``: print the event-log JSON Schema (from engine/schema.py), or with
``--outputs`` that of the typed outputs (inspector/outputs.py)."""

from __future__ import annotations

import argparse
import json

from dyn_inspect.engine.schema import SCHEMA_VERSION, json_schema
from dyn_inspect.inspector import outputs

HELP = "print the JSON Schema of the event log"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--outputs", action="store_true", help="the typed outputs (environment, ...) instead of the event log")


def run(args: argparse.Namespace) -> int:
    if args.outputs:
        schema = outputs.json_schema()
        schema["$comment"] = "dyn-inspect typed outputs (--json reports, the bundle manifest)"
        print(json.dumps(schema, indent=2))
        return 0
    schema = json_schema()
    schema["$comment"] = f"dyn-inspect event log, schema version {SCHEMA_VERSION}"
    print(json.dumps(schema, indent=2))
    return 0
