"""The dyn-inspect language server: graph breaks, recompiles and compile failures from the
recorded runs of a workspace, shown in any LSP editor (diagnostics, hover, code lenses,
code actions), following a live run as its log grows.

Start it with ``dyn-inspect lsp`` or ``python -m dyn_inspect.lsp`` (stdio; ``--tcp
HOST:PORT`` to listen on a socket). The transport arguments that vscode-languageclient
appends (``--stdio``, ``--pipe=NAME``, ``--socket=PORT``, ``--clientProcessId=N``) are
accepted too. ``docs/editors.md`` shows the editor set-ups.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Sequence


def parse_address(text: str, flag: str = "--tcp") -> tuple[str, int]:
    """``HOST:PORT`` (or just ``PORT``) → (host, port); ValueError with a readable message."""
    host, _, port = text.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"{flag} wants HOST:PORT, got {text!r}") from None
    if not 0 < number < 65536:
        raise ValueError(f"{flag} port out of range: {number}")
    return (host.strip("[]") or "127.0.0.1"), number


def add_arguments(parser: argparse.ArgumentParser) -> None:
    transport = parser.add_mutually_exclusive_group()
    # stdio is the default; the flag exists because language clients pass it
    # (vscode-languageclient's TransportKind.stdio appends it to the command).
    transport.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (the default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead of stdio")
    transport.add_argument("--socket", metavar="PORT", help="connect to a client listening on 127.0.0.1:PORT (TransportKind.socket)")
    transport.add_argument("--pipe", metavar="NAME", help="connect to a client listening on the Unix socket NAME (TransportKind.pipe)")
    parser.add_argument(
        "--clientProcessId",
        "--client-process-id",
        dest="client_process_id",
        type=int,
        metavar="PID",
        help="exit when this process ends (language clients pass their own id)",
    )
    parser.add_argument("--log-file", metavar="FILE", help="write the server's own log here (default: stderr, warnings only)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")


def serve(args: argparse.Namespace) -> int:
    """Run the server until the client disconnects. Returns the exit status."""
    level = logging.DEBUG if args.verbose else logging.WARNING
    if args.log_file:
        try:
            # 0600 whatever the umask: with -v the log quotes source text (issue 19).
            os.close(os.open(args.log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
            os.chmod(args.log_file, 0o600)
        except OSError as exc:
            print(f"dyn-inspect: cannot write the log file {args.log_file}: {exc.strerror}", file=sys.stderr)
            return 2
        logging.basicConfig(filename=args.log_file, level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    else:
        logging.basicConfig(stream=sys.stderr, level=level, format="dyn-inspect lsp: %(levelname)s %(message)s")
    address = None
    try:
        if args.tcp:
            address = parse_address(args.tcp)
        connection = _connect(args)
    except (ValueError, OSError) as exc:
        print(f"dyn-inspect: {exc}", file=sys.stderr)
        return 2
    if args.client_process_id is not None:
        _exit_with(args.client_process_id)
    from dyn_inspect.lsp.server import create_server
    from dyn_inspect.lsp.wire import BoundedInput, OneLineUnreadable

    logging.getLogger("pygls.server").addFilter(OneLineUnreadable())  # its read loop's logger

    server = create_server()
    if address is not None:
        server.start_tcp(*address)
        return 0
    if connection is not None:
        with connection:
            reader = BoundedInput(connection.makefile("rb"))
            server.start_io(reader, connection.makefile("wb"))  # type: ignore[arg-type]
    else:
        reader = BoundedInput(sys.stdin.buffer)
        server.start_io(reader)  # type: ignore[arg-type]
    return 1 if reader.refused is not None else 0


def _connect(args: argparse.Namespace) -> socket.socket | None:
    """The socket to the client for ``--socket``/``--pipe`` (the client listens, the
    server connects), else None. OSError/ValueError with a readable message."""
    if args.socket:
        host, port = parse_address(args.socket, "--socket")
        try:
            return socket.create_connection((host, port), timeout=10)
        except OSError as exc:
            raise OSError(f"cannot connect to the client at {host}:{port}: {exc.strerror or exc}") from None
    if args.pipe:
        if not hasattr(socket, "AF_UNIX"):
            raise ValueError("--pipe needs Unix sockets")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(args.pipe)
        except OSError as exc:
            sock.close()
            raise OSError(f"cannot connect to the client pipe {args.pipe}: {exc.strerror or exc}") from None
        return sock
    return None


def _exit_with(pid: int) -> None:
    """Exit when the client process ``pid`` is gone: a client killed without a shutdown
    must not leave the server polling runs forever."""

    def watch() -> None:
        while True:
            time.sleep(2.0)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(0)
            except OSError:  # exists but not ours (EPERM): still alive
                pass

    threading.Thread(target=watch, name="dyn-inspect-client-watch", daemon=True).start()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dyn_inspect.lsp", description="the dyn-inspect language server")
    add_arguments(parser)
    return serve(parser.parse_args(argv))
