"""The dyn-inspect language server: graph breaks, recompiles and compile failures from the
recorded runs of a workspace, shown in any LSP editor (diagnostics, hover, code lenses,
code actions), following a live run as its log grows.

Start it with ``dyn-inspect lsp`` or ``python -m dyn_inspect.lsp`` (stdio; ``--tcp
HOST:PORT`` to listen on a socket). ``docs/editors.md`` shows the editor set-ups.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (or just ``PORT``) → (host, port); ValueError with a readable message."""
    host, _, port = text.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"--tcp wants HOST:PORT, got {text!r}") from None
    if not 0 < number < 65536:
        raise ValueError(f"--tcp port out of range: {number}")
    return (host.strip("[]") or "127.0.0.1"), number


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead of stdio")
    parser.add_argument("--log-file", metavar="FILE", help="write the server's own log here (default: stderr, warnings only)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")


def serve(args: argparse.Namespace) -> int:
    """Run the server until the client disconnects. Returns the exit status."""
    level = logging.DEBUG if args.verbose else logging.WARNING
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    else:
        logging.basicConfig(stream=sys.stderr, level=level, format="dyn-inspect lsp: %(levelname)s %(message)s")
    address = None
    if args.tcp:
        try:
            address = parse_address(args.tcp)
        except ValueError as exc:
            print(f"dyn-inspect: {exc}", file=sys.stderr)
            return 2
    from dyn_inspect.lsp.server import create_server

    server = create_server()
    if address is not None:
        server.start_tcp(*address)
    else:
        server.start_io()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dyn_inspect.lsp", description="the dyn-inspect language server")
    add_arguments(parser)
    return serve(parser.parse_args(argv))
