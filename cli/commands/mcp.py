"""``dyn-inspect mcp [--root DIR]``: the MCP server for coding agents (stdio; docs/agents.md)."""

from __future__ import annotations

import argparse

HELP = "start the MCP server (stdio) that gives coding agents the reports, fix plans and verify"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    # Imported here, as `lsp` does: the server's own modules (the MCP SDK) load only when it runs.
    from dyn_inspect.mcp import add_arguments

    add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from dyn_inspect.mcp import serve

    return serve(args)
