"""Starting the language server the way real clients do: vscode-languageclient appends
``--stdio`` (TransportKind.stdio), ``--socket=PORT`` / ``--pipe=NAME`` (the client listens,
the server connects) and ``--clientProcessId=N``. Each is checked by an ``initialize``
handshake with the real server process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corpus_support import DYN_INSPECT

PYTHON_M = [sys.executable, "-m", "dyn_inspect.lsp"]


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _handshake(root: Path) -> bytes:
    return b"".join(
        [
            _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}}}),
            _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
            _frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
            _frame({"jsonrpc": "2.0", "method": "exit"}),
        ]
    )


def _responses(data: bytes) -> dict[int, dict]:
    """The JSON-RPC responses (by id) in a stream of LSP frames."""
    out: dict[int, dict] = {}
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        length = next(int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
        message = json.loads(rest[:length])
        if "id" in message and "method" not in message:
            out[message["id"]] = message
        data = rest[length:]
    return out


def _check(answers: dict[int, dict]) -> None:
    assert answers[1]["result"]["serverInfo"]["name"] == "dyn-inspect"
    assert answers[1]["result"]["capabilities"]["hoverProvider"] is True
    assert "result" in answers[2] and answers[2]["result"] is None


@pytest.mark.parametrize(
    "command",
    [
        [*PYTHON_M, "--stdio"],
        [*PYTHON_M, "--stdio", f"--clientProcessId={os.getpid()}"],
        [str(DYN_INSPECT), "lsp", "--stdio"],
        [str(DYN_INSPECT), "lsp", "--clientProcessId", str(os.getpid()), "--stdio"],
    ],
    ids=["python-m", "python-m-pid", "dyn-inspect-lsp", "dyn-inspect-lsp-pid"],
)
def test_stdio_as_vscode_languageclient_starts_it(command: list[str], tmp_path: Path) -> None:
    done = subprocess.run(command, input=_handshake(tmp_path), capture_output=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert b"Traceback" not in done.stderr
    _check(_responses(done.stdout))


def _serve_over(listener: socket.socket, command: list[str], root: Path) -> None:
    """Start the server, accept its connection, run the handshake over it."""
    listener.settimeout(60)
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=root)
    try:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(60)
            conn.sendall(_handshake(root))
            data = b""
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
                if 2 in _responses(data):
                    break
        _check(_responses(data))
        assert proc.wait(timeout=60) == 0, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_socket_transport_connects_to_the_client(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        _serve_over(listener, [*PYTHON_M, f"--socket={port}"], tmp_path)


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets only")
def test_pipe_transport_connects_to_the_client(tmp_path: Path) -> None:
    path = tmp_path / "lsp.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen(1)
        _serve_over(listener, [str(DYN_INSPECT), "lsp", f"--pipe={path}"], tmp_path)


def test_unreachable_client_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: the connection is refused
        done = subprocess.run([*PYTHON_M, f"--socket={port}"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dyn-inspect: cannot connect to the client at 127.0.0.1:{port}")
    done = subprocess.run([*PYTHON_M, f"--pipe={tmp_path / 'none.sock'}"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "cannot connect to the client pipe" in done.stderr


def test_server_exits_when_the_client_process_is_gone(tmp_path: Path) -> None:
    client = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    server = subprocess.Popen(
        [*PYTHON_M, "--stdio", f"--clientProcessId={client.pid}"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
    )
    try:
        time.sleep(1.0)
        assert server.poll() is None  # the client is alive: the server keeps serving
        client.kill()
        client.wait()
        # stdin stays open: only the watch on the client's pid can end the server.
        assert server.wait(timeout=60) == 0
    finally:
        for p in (client, server):
            if p.poll() is None:
                p.kill()
                p.wait()
