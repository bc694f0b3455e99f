"""What the language server reads off the wire, bounded and answered (issue 29, item 8).

pygls reads a ``Content-Length: N`` header and then ``stdin.read(N)``: a header of
99999999999 raised MemoryError out of the server's loop (a traceback, the stream gone).
``BoundedInput`` wraps the client's stream: a message longer than ``MAX_MESSAGE`` ends the
session with one line on stderr (the body cannot be skipped without reading it, and a
client that sends such a header is not speaking LSP), and a header line is read at most
``MAX_HEADER`` bytes at a time, so a newline-less stream never grows one line without end.

pygls turns a request whose params do not match their LSP type into an exception inside
``json.loads``, before the request is dispatched: the client never got an answer and
stderr got a traceback. ``AnsweringProtocol`` answers such a request with a JSON-RPC
Invalid Params error (and drops such a notification) with one log line.

A body that is not a JSON-RPC message (``[1,2]``, ``5``, a dict without ``jsonrpc``, a
method that is no string, text that is not JSON, JSON nested 100k deep) is dropped with one
log line; pygls logged each with a traceback (``OneLineUnreadable`` for the ones its read
loop catches). A ``shutdown`` while another request runs (an editor's verify) is answered:
pygls cancelled the others while iterating over the dict their cancelling shrinks.

A handler that raises is answered too: ``guarded`` wraps every feature and command of the
server, logs the error once (``window/logMessage``) and answers an empty result.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol, TypeVar, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage

logger = logging.getLogger(__name__)

MAX_MESSAGE = 64 << 20  # far above any real message (a whole file's didOpen)
MAX_HEADER = 64 << 10
IGNORED = "$/dyn-inspect/invalidMessage"  # a "$/" notification: dispatched to nothing

# A handler (sync or async); guarded() hands back one of the same signature.
F = TypeVar("F", bound=Callable[..., Any])


class BoundedInput:
    """The client's byte stream with bounded reads (the ``readline``/``read`` pygls uses)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.refused: int | None = None  # the Content-Length refused, if one was

    def readline(self) -> bytes:
        return self.stream.readline(MAX_HEADER)

    def read(self, n: int) -> bytes:
        if n > MAX_MESSAGE:
            self.refused = n
            print(
                f"dyn-inspect lsp: a message of {n} bytes (Content-Length) is over the {MAX_MESSAGE >> 20} MiB bound; "
                "the stream cannot be resynchronized, exiting",
                file=sys.stderr,
                flush=True,
            )
            return b""  # pygls' loop ends at an empty read, and the server shuts down
        return self.stream.read(n)


def _brief(exc: BaseException) -> str:
    """One line for a structuring error (cattrs nests the fields that failed)."""
    notes = [str(n) for n in getattr(exc, "__notes__", [])]
    inner = getattr(exc, "exceptions", None)
    if inner:
        notes += [_brief(e) for e in inner]
    text = "; ".join(n for n in notes if n) or f"{type(exc).__name__}: {exc}"
    return text[:300]


class OneLineUnreadable(logging.Filter):
    """pygls' read loop logs a body it cannot decode (not JSON, nested too deep) with a
    traceback: one line instead, saying why."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.getMessage() == "Unable to handle message":
            exc = record.exc_info[1]
            record.msg, record.args = "unreadable message dropped: %s: %.200s", (type(exc).__name__, exc)
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


class AnsweringProtocol(LanguageServerProtocol):
    """The LSP protocol, answering a request whose params have the wrong type."""

    def handle_message(self, message: Any) -> None:
        if getattr(message, "method", None) == IGNORED:  # already answered (or dropped) with its line
            return
        if not isinstance(getattr(message, "jsonrpc", None), str):  # a list, a number, a dict that is no message
            logger.warning("message that is no JSON-RPC message dropped: %.80r", message)
            return
        super().handle_message(message)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Any:
        """pygls' shutdown, cancelling the other requests over a copy of their dict."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True
        return None

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" not in data or "error" in data or "method" not in data:
            return super().structure_message(data)
        method = data["method"]
        is_request = "id" in data
        if not isinstance(method, str):
            logger.warning("message with a method that is no string dropped: %.80r", method)
            if is_request and isinstance(data["id"], int | str):
                self._send_response(
                    data["id"],
                    error=types.ResponseError(code=JsonRpcInvalidRequest.CODE, message="Invalid request: the method is no string"),
                )
            return JsonRPCNotification(method=IGNORED, jsonrpc="2.0", params=None)
        try:
            kind = self.get_message_type(method) or (JsonRPCRequestMessage if is_request else JsonRPCNotification)
            return self._converter.structure(data, kind)
        except Exception as exc:
            logger.warning("invalid params for %.80r: %s", method, _brief(exc))
            if is_request and isinstance(data["id"], int | str):
                self._send_response(
                    data["id"],
                    error=types.ResponseError(
                        code=JsonRpcInvalidParams.CODE, message=f"Invalid params for {str(method)[:80]}: {_brief(exc)}"
                    ),
                )
            return JsonRPCNotification(method=IGNORED, jsonrpc="2.0", params=None)


class Says(Protocol):
    """The server as ``guarded`` uses it: a message logged once."""

    def say(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None: ...


_current: Says | None = None  # the server made last (create_server): heard when no handler argument is it


def answering(server: Says) -> None:
    """``server`` hears the errors of handlers called without it."""
    global _current
    _current = server


def _server_of(args: tuple[Any, ...]) -> Says:
    if args and isinstance(args[0], LanguageServer):
        return cast(Says, args[0])
    assert _current is not None
    return _current


def guarded(empty: Callable[[], object]) -> Callable[[F], F]:
    """Answer ``empty()`` and log once instead of failing a request."""

    def wrap(f: F) -> F:
        if asyncio.iscoroutinefunction(f):

            @functools.wraps(f)
            async def async_wrapper(*args: Any) -> object:
                try:
                    return await f(*args)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    _server_of(args).say(f"{f.__name__} failed: {type(exc).__name__}: {exc}", types.MessageType.Error)
                    return empty()

            return async_wrapper  # type: ignore[return-value]  # same signature as f (functools.wraps)

        @functools.wraps(f)
        def wrapper(*args: Any) -> object:
            try:
                return f(*args)
            except Exception as exc:
                _server_of(args).say(f"{f.__name__} failed: {type(exc).__name__}: {exc}", types.MessageType.Error)
                return empty()

        return wrapper  # type: ignore[return-value]  # same signature as f (functools.wraps)

    return wrap
