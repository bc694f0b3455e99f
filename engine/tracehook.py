"""A lean ``torch._logging.trace_structured`` for when the recorder is its only consumer.

Torch builds a structured-trace record only when a handler sits on the ``torch.__trace``
logger, and then pays for things a file-oriented consumer (TORCH_TRACE, tlparse) needs and
we do not: an md5 of every payload (``has_payload``), a captured Python stack for every
record logged outside a compile (``stack``: most chromium events), JSON with ``indent=0``
for object payloads (a fx-graph-cache event's args hold the whole graph text), then the
``logging`` machinery. With a handler on the logger our recorder measured at 2.5–5.8 % of
compile time on the H200 (GPT-2, ResNet-50: torch's own ``structured_logging_overhead_s``).

So when nobody else listens, ``install`` replaces ``trace_structured`` (in
``torch._logging`` and ``torch._logging._internal``, and in modules that already imported
it by name) with a function that builds the same record — metadata, compile ids, rank,
payload — and hands it straight to the recorder. Payloads are still computed by torch's
own ``payload_fn`` at the same moment (a graph printed later would show later mutations);
what goes is the md5, the orphan stack and the logging layer. The time spent here is not
added to torch's ``structured_logging_overhead_s`` (plainly, with nobody listening, torch
counts none); ``DYN_INSPECT_TRACE_STATS=1`` says what it cost.

The fake tensors' descriptions (``DEFERRED``: ``describe_tensor``, ``_storage``,
``_source``, about 1,400 records in GPT-2's compile) are left to the recorder's writer
thread: torch gives their metadata as a function of an immutable description, so it is
called there (``TraceRecord.resolve``) with the same result, while the compiling thread
only queues the record. Not when torch's ``log_trace_structured_event`` hook is replaced
by something that would see the record before its metadata exists.

While another handler is on the logger (the user also set TORCH_TRACE, a test's handler),
torch's original function is the one in place, called by torch with no frame of ours
beneath it, and the logger's ``handle`` hands us each record it logs (see ``install``).

What the lean path does not compute: the three "before passes" graphs Inductor prints
(``BEFORE_PASSES``). Each is a full ``print_readable`` of a graph about to be rewritten,
so it cannot be put off to the writer thread, and on the H200 it was the largest single
cost left on the compiling thread (``before_post_grad_graph`` 120–190 ms of GPT-2's
~290 ms). They are computed and recorded with ``dyn-inspect run --all-graphs``
(``DYN_INSPECT_ALL_GRAPHS=1``), and whenever torch computes them anyway (TORCH_TRACE set,
or the logging-handler fallback). The graphs after the passes are always recorded.

Which torch this fits is checked by ``torch_compat.install_trace`` (the parameters of
torch's function must be the ones ``_bind`` knows); a call of another shape, or our own
code raising, switches back to torch's original for good (see ``install``).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import msgspec

from dyn_inspect.engine.normalizers import Deferred, TraceRecord

_encode = msgspec.json.Encoder().encode
STATS_ENV = "DYN_INSPECT_TRACE_STATS"
ALL_GRAPHS_ENV = "DYN_INSPECT_ALL_GRAPHS"
# Inductor's artifacts of a graph before its passes rewrite it (see the module docstring)
BEFORE_PASSES = frozenset({"before_pre_grad_graph", "before_joint_graph", "before_post_grad_graph"})
# Records whose metadata torch gives as a function of an immutable description (a fake
# tensor's, its storage's, its source's: ~1,400 records in GPT-2's compile, 24 ms of torch's
# time on the H200): computed on the writer thread (``TraceRecord.resolve``), not here.
DEFERRED = frozenset({"describe_tensor", "describe_storage", "describe_source"})


def _no_payload() -> None:
    return None


def _does_nothing(*args: Any, **kwargs: Any) -> None:
    pass


def _is_no_op(fn: Any) -> bool:
    """Torch's ``log_trace_structured_event`` as shipped (a hook that does nothing): a
    deferred record never reaches a real one with its metadata not computed yet."""
    code = getattr(fn, "__code__", None)
    mine = _does_nothing.__code__
    return fn is None or (code is not None and code.co_code == mine.co_code and code.co_consts == mine.co_consts)


def _payload_text(payload: object) -> str | None:
    """Torch's payload conversion, with msgspec's encoder for objects (same JSON value)."""
    if payload is None or isinstance(payload, str):
        return payload
    if isinstance(payload, list):
        return "[\n" + ",\n".join(json.dumps(i) for i in payload) + "\n]"
    try:
        return _encode(payload).decode()
    except (TypeError, ValueError, OverflowError):
        return json.dumps(payload, default=lambda o: list(o) if isinstance(o, set) else repr(o), indent=0)


def _print_stats(stats: dict[str, list[int]]) -> None:
    """DYN_INSPECT_TRACE_STATS=1: where recording time went, per record kind (stderr)."""
    torch_ns = sum(v[1] for v in stats.values())
    ours_ns = sum(v[2] for v in stats.values())
    out = [f"dyn-inspect trace stats: torch metadata+payload {torch_ns / 1e9:.3f}s, recorder {ours_ns / 1e9:.3f}s"]
    for key, (n, t, o) in sorted(stats.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:30]:
        out.append(f"  {key:60} n={n:6} torch={t / 1e6:9.1f}ms recorder={o / 1e6:9.1f}ms")
    sys.stderr.write("\n".join(out) + "\n")


def _bind(
    name: str,
    metadata_fn: Callable[[], Any] = dict,
    *,
    payload_fn: Callable[[], object] = _no_payload,
    suppress_context: bool = False,
    expect_trace_id: bool = True,
    record_logging_overhead: bool = True,
    compile_id: Any = None,
) -> tuple[str, Callable[[], Any], Callable[[], object], bool, bool, Any]:
    """The call shape we understand; a TypeError for any other (a newer torch's caller)."""
    return name, metadata_fn, payload_fn, suppress_context, record_logging_overhead, compile_id


def install(feed: Callable[[TraceRecord], None], on_failure: Callable[[str], None] | None = None) -> bool:
    """Route torch's structured trace to ``feed``; False if torch lacks what we rely on.

    Fenced (torch_compat's ``trace`` hook): a call we do not understand, or our own code
    raising, turns the lean path off for good — ``on_failure(reason)`` puts the logging
    handler in place — and torch's original handles that call and every later one."""
    try:
        import torch
        import torch._logging as torch_logging
        import torch._logging._internal as internal
    except Exception:  # noqa: BLE001
        return False
    original = getattr(internal, "trace_structured", None)
    trace_log = getattr(internal, "trace_log", None)
    if original is None or trace_log is None or getattr(original, "_dyn_inspect", False):
        return False
    log_event = getattr(internal, "log_trace_structured_event", None)
    defer = DEFERRED if _is_no_op(log_event) else frozenset()
    stats: dict[str, list[int]] | None = {} if os.environ.get(STATS_ENV) else None
    if stats is not None:
        atexit.register(_print_stats, stats)
    guards = torch._guards
    dist = torch.distributed
    subgraph_name = getattr(getattr(torch.fx, "traceback", None), "_get_regional_inductor_subgraph_name", None)
    lean = [True]
    skipped = frozenset() if os.environ.get(ALL_GRAPHS_ENV) == "1" else BEFORE_PASSES

    def context(record: dict[str, Any], compile_id: Any) -> None:
        if dist.is_available() and dist.is_initialized():
            record["rank"] = dist.get_rank()
        trace_id = guards.CompileContext.current_trace_id()
        cid = trace_id.compile_id if trace_id else compile_id
        if cid is not None:
            if getattr(cid, "compiled_autograd_id", None) is not None:
                record["compiled_autograd_id"] = cid.compiled_autograd_id
            if cid.frame_id is not None:
                record["frame_id"] = cid.frame_id
            if cid.frame_compile_id is not None:
                record["frame_compile_id"] = cid.frame_compile_id
        if trace_id:
            record["attempt"] = trace_id.attempt
        if subgraph_name is not None and (sub := subgraph_name()) is not None:
            record["subgraph_name"] = sub

    def trace_structured(*args: Any, **kwargs: Any) -> None:
        if not lean[0]:
            return original(*args, **kwargs)
        if trace_log.handlers:
            # Someone listens whom addHandler did not announce (a list changed in place):
            # torch's function from now on, ours seeing its records through ``handle``.
            # (This one call still has our frame under it.)
            to_torch()
            return original(*args, **kwargs)
        try:
            name, metadata_fn, payload_fn, suppress_context, _record_overhead, compile_id = _bind(*args, **kwargs)
        except TypeError as exc:
            turn_off(f"trace_structured called in a way we do not know ({exc})")
            return original(*args, **kwargs)
        start = time.time_ns()
        try:
            if name in defer and payload_fn is _no_payload:
                metadata: Any = Deferred(metadata_fn)
                payload = None
            else:
                metadata = metadata_fn()
                if name == "artifact" and isinstance(metadata, dict) and metadata.get("name") in skipped:
                    return None  # not computed: the cost of a whole graph print, for a graph kept only with --all-graphs
                payload = payload_fn()
        except Exception:  # noqa: BLE001 - torch's own formatting; without us it would not run
            return None
        computed = time.time_ns()
        try:
            _feed(name, metadata, payload, suppress_context, compile_id)
        except Exception as exc:  # noqa: BLE001 - our code: off, and torch's original (now
            turn_off(f"our trace handler failed: {exc!r}")  # with the fallback handler) records it
            return original(*args, **kwargs)
        # Not added to torch's structured_logging_overhead_s: plainly, with nobody listening,
        # torch spends and counts nothing here, and the program's compilation metrics are its
        # own (issue 56). DYN_INSPECT_TRACE_STATS=1 says what the recorder cost.
        if stats is not None:
            end = time.time_ns()
            key = name if name != "artifact" or not isinstance(metadata, dict) else f"artifact:{metadata.get('name')}"
            entry = stats.setdefault(key, [0, 0, 0])
            entry[0] += 1
            entry[1] += computed - start
            entry[2] += end - computed
        return None

    def _feed(name: str, metadata: Any, payload: object, suppress_context: bool, compile_id: Any) -> None:
        record: dict[str, Any] = {name: metadata}
        if not suppress_context:
            context(record, compile_id)
        text = _payload_text(payload)
        if log_event is not None:
            log_event(name, record)
        feed(TraceRecord(record, text, time.time()))

    # -- while someone else listens: torch's own function, its records seen as they are logged
    #
    # With a handler on ``torch.__trace`` (TORCH_TRACE, a test's or the program's own), torch's
    # function must be the one torch calls: a frame of ours beneath it would be in every
    # record's LogRecord (``stacklevel=2``: the pathname TORCH_TRACE's prefix shows), in the
    # ``stack`` of a record logged outside a compile and in the file names interned for it
    # (one more ``str`` record). So the module attributes point back at torch's function, and
    # the logger's ``handle`` (an attribute of this one logger, as torch sets its
    # ``isEnabledFor``) hands each record to us before its handlers get it unchanged.
    logger_handle = logging.Logger.handle

    def handle(record: logging.LogRecord) -> Any:
        if lean[0]:
            metadata = getattr(record, "metadata", None)
            if isinstance(metadata, dict):
                try:
                    feed(TraceRecord(metadata, getattr(record, "payload", None), record.created))
                except Exception as exc:  # noqa: BLE001 - our code: the fallback handler takes over
                    turn_off(f"our trace handler failed: {exc!r}")
        return logger_handle(trace_log, record)

    def add_handler(handler: logging.Handler) -> None:
        logging.Logger.addHandler(trace_log, handler)
        if lean[0] and trace_log.handlers:
            to_torch()

    def remove_handler(handler: logging.Handler) -> None:
        logging.Logger.removeHandler(trace_log, handler)
        if lean[0] and not trace_log.handlers:
            to_ours()  # torch's lazy TORCH_TRACE handler, gone at its first record when unset

    def point_at(fn: Any) -> None:
        old = ours if fn is original else original
        internal.trace_structured = fn
        torch_logging.trace_structured = fn
        # Modules that did `from torch._logging import trace_structured` (before us, or
        # while the other one was in place).
        for module in list(sys.modules.values()):
            try:
                if getattr(module, "trace_structured", None) is old:
                    module.trace_structured = fn  # type: ignore[attr-defined]  # any module: ModuleType declares none
            except Exception:  # noqa: BLE001 - odd modules (lazy proxies) refuse setattr
                pass

    def to_torch() -> None:
        with switching:
            point_at(original)

    def to_ours() -> None:
        with switching:
            if lean[0] and not trace_log.handlers:
                point_at(ours)

    def turn_off(reason: str) -> None:
        if lean[0]:
            lean[0] = False
            with switching:
                point_at(original)
                for attr in ("handle", "addHandler", "removeHandler"):
                    trace_log.__dict__.pop(attr, None)
            if on_failure is not None:
                on_failure(reason)

    ours = trace_structured
    ours._dyn_inspect = True  # type: ignore[attr-defined]
    ours.__wrapped__ = original  # type: ignore[attr-defined]
    switching = threading.Lock()
    trace_log.handle = handle  # type: ignore[method-assign]
    trace_log.addHandler = add_handler  # type: ignore[method-assign]
    trace_log.removeHandler = remove_handler  # type: ignore[method-assign]
    if not trace_log.handlers:
        point_at(ours)
    return True
