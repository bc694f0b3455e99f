"""The dyn-inspect MCP server: coding agents as users. Over stdio, on the official MCP
Python SDK (``pip install 'dyn-inspect[mcp]'``), it offers the CLI's answers as tools —
``record``, ``runs``, ``summary``, ``breaks``, ``recompiles``, ``causes``, ``failures``,
``shapes``, ``kernels``, ``kernel``, ``cost``, ``graph``, ``code`` — each returning the
Struct the CLI's ``--json`` prints, plus ``fix_plans`` (a cause's fix as a unified diff)
and ``verify`` (the program re-run, before → after). ``docs/agents.md`` shows a client's
configuration and a session.

Start it with ``dyn-inspect mcp`` or ``python -m dyn_inspect.mcp``. A face: it imports
only the inspector's report layer (tests/test_layering.py).
"""

from __future__ import annotations

import argparse
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="a workspace root when the client declares none (repeatable; default: the current directory)",
    )


def serve(args: argparse.Namespace) -> int:
    """Serve one client over stdin/stdout until it disconnects."""
    try:
        import anyio

        from dyn_inspect.mcp.server import serve_stdio
    except ImportError as e:
        print(f"dyn-inspect: the MCP server needs the mcp package ({e}): pip install 'dyn-inspect[mcp]'", file=sys.stderr)
        return 2
    folders = [os.path.abspath(r) for r in args.root] or [os.getcwd()]
    missing = [f for f in folders if not os.path.isdir(f)]
    if missing:
        print(f"dyn-inspect: --root {missing[0]}: no such directory", file=sys.stderr)
        return 2
    try:
        anyio.run(serve_stdio, folders)
    except KeyboardInterrupt:
        return 130
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dyn_inspect.mcp", description="the dyn-inspect MCP server (stdio)")
    add_arguments(parser)
    return serve(parser.parse_args(argv))
