"""``dyn-inspect lsp [--tcp HOST:PORT]``: the language server for editors (stdio by default)."""

from __future__ import annotations

import argparse

HELP = "start the language server (stdio, or --tcp HOST:PORT) for editors"


def prepare_parser(parser: argparse.ArgumentParser) -> None:
    # Imported here: the parser is built for every command, and the server's own modules
    # (pygls, lsprotocol) load only when this one runs.
    from dyn_inspect.lsp import add_arguments

    add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from dyn_inspect.lsp import serve

    return serve(args)
