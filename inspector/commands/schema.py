"""``dyn-inspect schema``: print the event-log JSON Schema (from engine/schema.py)."""

from __future__ import annotations

import argparse
import json

from dyn_inspect.engine.schema import SCHEMA_VERSION, json_schema

HELP = "print the JSON Schema of the event log"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    schema = json_schema()
    schema["$comment"] = f"dyn-inspect event log, schema version {SCHEMA_VERSION}"
    print(json.dumps(schema, indent=2))
    return 0
