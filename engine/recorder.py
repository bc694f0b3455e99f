"""The in-process recorder: receives torch's own structured-trace records.

``activate()`` runs inside the user's program (installed by the startup hook in
``bootstrap/``) once torch is imported. It routes ``trace_structured`` straight to us
(``tracehook.py``: without torch's md5, orphan stacks and logging layer, the cost that
TORCH_TRACE pays) and feeds every record through the normalizers into this process's
event log. Fallback (``DYN_INSPECT_TRACE_HOOK=0``): a handler first on ``torch.__trace`` —
first, because torch's lazy TORCH_TRACE handler removes itself during dispatch and a
handler after it would miss that record. It never changes the user's backend or
Inductor's config: kernel → source lines come from a wrapper on Inductor's own provenance
function (``torch_compat.install_provenance``, installed once Inductor is imported; it
returns torch's result unchanged, so the output code, cache keys and trace records stay the
program's), which ``DYN_INSPECT_PROVENANCE=0`` leaves out. At the first record it notes what
Inductor's cache directory holds (``process_start.inductor_cache``). Every touch of torch's private API goes through
``torch_compat`` (probed, fenced; which hooks are active is written into process_start
and process_end as ``hooks``).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dyn_inspect.engine import cache_dir, environment, kernel_lines, torch_compat
from dyn_inspect.engine.eventlog import EventLog, process_log_name, tell_launcher
from dyn_inspect.engine.normalizers import Normalizer, PendingBreak, TraceRecord, on_torch_thread
from dyn_inspect.engine.schema import Blob, Event, ExceptionInfo, InductorCacheDir, Loc, ProcessEnd, ProcessStart

RUN_DIR_ENV = "DYN_INSPECT_RUN_DIR"
LAUNCHER_PID_ENV = "DYN_INSPECT_LAUNCHER_PID"
DISABLE_ENV = "DYN_INSPECT_COMPILE_DISABLED"
PROVENANCE_ENV = "DYN_INSPECT_PROVENANCE"
ASYNC_ENV = "DYN_INSPECT_ASYNC"
TRACE_HOOK_ENV = "DYN_INSPECT_TRACE_HOOK"

_recorder: Recorder | None = None


class _TraceHandler(logging.Handler):
    def __init__(self, recorder: Recorder) -> None:
        super().__init__(level=logging.DEBUG)
        self.recorder = recorder

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if isinstance(metadata, dict):
            self.recorder.on_record(TraceRecord(metadata, getattr(record, "payload", None), record.created))

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging API
        pass  # never print logging tracebacks into the user's output


# Records after which the queue is drained before torch goes on: a compile's events are on
# disk before its compiled code runs (a SIGKILL right after a compile keeps all of them).
_FLUSH_KINDS = frozenset({"compilation_metrics", "bwd_compilation_metrics"})


class _Worker:
    """Normalizes and writes records on a daemon thread, in arrival order.

    Torch hands us a record in the middle of a compile; parsing it (graphs, output code,
    provenance), hashing payloads and writing blobs and events took about a third of the
    recording cost on the H200 runs. Here the compile thread only queues the record: the
    work runs while the compile thread waits on Inductor's compile workers (GIL free).
    Ordering and the on-disk guarantees are those of the synchronous path: one thread
    writes, blobs before the events naming them, each event one ``os.write``. The queue is
    drained at the end of each compile, by ``flush()`` and at exit. A forked child (other
    pid) falls back to the synchronous path.
    """

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.pid = os.getpid()
        self._queue: deque[tuple[TraceRecord, PendingBreak | None]] = deque()
        self._cond = threading.Condition()
        self._busy = False
        self._thread: threading.Thread | None = None

    def submit(self, item: tuple[TraceRecord, PendingBreak | None]) -> None:
        with self._cond:
            self._queue.append(item)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="dyn-inspect-recorder", daemon=True)
                self._thread.start()
            self._cond.notify()

    def flush(self) -> None:
        with self._cond:
            while self._queue or self._busy:
                if self._thread is None or not self._thread.is_alive():
                    break
                self._cond.wait(0.5)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._busy = False
                    self._cond.notify_all()
                    self._cond.wait()
                record, pending = self._queue.popleft()
                self._busy = True
            self.recorder._process(record, pending)


@dataclass
class _Build:
    build: Callable[[Callable[[str | bytes], Blob]], list[Event]]


class Recorder:
    """Owns this process's log; created lazily so processes that never compile leave none."""

    def __init__(self, run_dir: Path, eager_log: bool) -> None:
        self.run_dir = run_dir
        self.started = time.time()
        self._lock = threading.RLock()
        self._log: EventLog | None = None
        self._normalizer: Normalizer | None = None
        self._pending = threading.local()
        self._exception: BaseException | None = None
        self.compile_disabled = os.environ.get(DISABLE_ENV) == "1"
        # Kernel → source lines (torch_compat.install_provenance): None until Inductor is
        # imported (then installed on torch's thread), False when not wanted or not possible.
        self.provenance: bool | None = None if os.environ.get(PROVENANCE_ENV, "1") != "0" else False
        self._origins = threading.local()  # this thread's kernels named since its last output code
        self.inductor_cache: InductorCacheDir | None = None
        self._compiling = False  # the first record came: torch is compiling
        self.errors = 0
        self.records = 0  # structured-trace records seen: the kernel profiler's "still compiling?"
        # Notebooks (dyn_inspect.magics): between recorded cells torch's records are dropped.
        self.paused = False
        # What torch had compiled, and we had recorded, when this recorder (or segment) started.
        self._records_before, self._frames_before = 0, _frames_ok()
        # Normalizing and writing run on a background thread (see _Worker) unless DYN_INSPECT_ASYNC=0.
        self._worker: _Worker | None = _Worker(self) if os.environ.get(ASYNC_ENV, "1") != "0" else None
        if eager_log:
            self._open()

    def _before_first_compile(self) -> None:
        """On torch's thread, at the first record (``dynamo_start``: before any cache lookup)."""
        if self._compiling:
            return
        self._compiling = True
        try:
            self.inductor_cache = cache_dir.snapshot()
        except Exception:  # noqa: BLE001 - recording must never break the user's program
            self.errors += 1

    def _open(self) -> EventLog:
        if self._log is None:
            self._before_first_compile()
            self._log = EventLog(self.run_dir, process_log_name(os.getpid()))
            self._normalizer = Normalizer(self._log.blobs, live=True)
            info = environment.static_info()
            if "torch" in sys.modules:
                info.update(environment.torch_info())
            self._log.write(
                ProcessStart(
                    t=self.started,
                    compile_disabled=self.compile_disabled,
                    provenance=self.provenance is not False,  # wanted; installed once Inductor is imported (process_end.hooks)
                    inductor_cache=self.inductor_cache,
                    hooks=torch_compat.HOOKS.report(),
                    **info,
                )
            )
        return self._log

    def on_record(self, record: TraceRecord) -> None:
        if not self._compiling:
            self._before_first_compile()
        if self.paused:
            return
        self.records += 1
        on_torch_thread(record)  # thread-local torch state, before the record changes thread
        pending = None
        if record.kind == "artifact" and (record.body or {}).get("name") == "dynamo_graph_break_reason":
            pending = getattr(self._pending, "value", None)  # thread-local: read it on torch's thread
        if self.provenance is None and "torch._inductor.debug" in sys.modules:
            # Inductor is compiling (nothing of it is imported by us): before its codegen
            self.provenance = torch_compat.install_provenance(self._take_origins)
        self._submit(record, pending)
        if record.kind == "inductor_output_code":
            origins = self._origins_record(record)
            if origins is not None:
                self._submit(origins, None)

    def _submit(self, record: TraceRecord, pending: PendingBreak | None) -> None:
        worker = self._worker
        if worker is not None and worker.pid == os.getpid():
            worker.submit((record, pending))
            if record.kind in _FLUSH_KINDS:
                worker.flush()  # a finished compile is on disk before its code runs
            return
        self._process(record, pending)

    def _take_origins(self, kernel: str, traces: list[str]) -> None:
        """From Inductor's codegen, on its thread: one kernel's source stacks."""
        pending = getattr(self._origins, "value", None)
        if pending is None:
            pending = self._origins.value = {}
        known = pending.setdefault(kernel, [])
        known.extend(t for t in traces if t not in known)

    def _origins_record(self, output_code: TraceRecord) -> TraceRecord | None:
        """The kernels named since this thread's last output code, as torch's own provenance
        artifact of that output code (the same normalizer reads both): only those the code
        defines or calls, none where the program turned torch's provenance on itself. Output
        code that came from a warm cache (no kernel named since) gets what an earlier
        recorded compile of the same code kept (``kernel_lines``)."""
        pending = getattr(self._origins, "value", None)
        self._origins.value = None
        if not self.provenance or torch_compat.user_provenance_on():
            return None
        code = output_code.payload or ""
        kept: dict[str, list[str]] | None
        if pending:
            kept = {f"{name}:{i}": traces for i, (name, traces) in enumerate(pending.items(), start=1) if name in code}
            if kept:
                kernel_lines.keep(code, kept)
        else:
            kept = kernel_lines.recall(code)  # from a warm cache: codegen never ran
        if not kept:
            return None
        ids = {k: v for k, v in output_code.metadata.items() if k != "inductor_output_code"}
        body = {"name": "inductor_provenance_tracking_kernel_stack_traces", "encoding": "json"}
        return TraceRecord({"artifact": body, **ids}, json.dumps(kept), output_code.t)

    def submit_build(self, build: Callable[[Callable[[str | bytes], Blob]], list[Event]]) -> None:
        """Events made outside the trace stream that need the blob store (kernel_meta.py):
        ``build(put)`` runs on the writer thread, in order with torch's records."""
        if self.paused:
            return
        item = _Build(build)
        worker = self._worker
        if worker is not None and worker.pid == os.getpid():
            worker.submit((item, None))  # type: ignore[arg-type]
            return
        self._process(item, None)  # type: ignore[arg-type]

    def _process(self, record: TraceRecord, pending: PendingBreak | None) -> None:
        if isinstance(record, _Build):
            try:
                with self._lock:
                    log = self._open()
                    for event in record.build(log.blobs.put):
                        log.write(event)
            except Exception:  # noqa: BLE001 - recording must never break the user's program
                self.errors += 1
            return
        if not record.resolve():
            return
        try:
            with self._lock:
                log = self._open()
                assert self._normalizer is not None
                if pending is not None or (record.kind == "artifact" and (record.body or {}).get("name") == "dynamo_graph_break_reason"):
                    self._normalizer.ctx.pending_break = pending
                for event in self._normalizer.feed(record):
                    log.write(event)
        except Exception:  # noqa: BLE001 - recording must never break the user's program
            self.errors += 1

    def flush(self) -> None:
        """Wait until every record handed to us so far is on disk."""
        worker = self._worker
        if worker is not None and worker.pid == os.getpid():
            worker.flush()

    def write_events(self, events: Iterable[Event]) -> None:
        """Events made outside the trace stream (the kernel profiler's)."""
        self.flush()
        try:
            with self._lock:
                log = self._open()
                for event in events:
                    log.write(event)
        except Exception:  # noqa: BLE001 - recording must never break the user's program
            self.errors += 1

    def set_pending_break(self, exc: Any) -> None:
        stack = list(getattr(exc, "real_stack", None) or [])
        self._pending.value = PendingBreak(gb_type=getattr(exc, "gb_type", None), stack=stack)

    def clear_pending_break(self) -> None:
        self._pending.value = None

    def note_exception(self, exc: BaseException) -> None:
        self._exception = exc

    def start_segment(self, run_dir: Path) -> None:
        """Record from now on into ``run_dir`` (a notebook cell's run): the log there is
        written on the first record, as at start-up."""
        self.end_segment()
        with self._lock:
            self.run_dir = run_dir
            self.started = time.time()
            self._exception = None
            self.paused = False
            self._records_before, self._frames_before = self.records, _frames_ok()

    def end_segment(self, exc: BaseException | None = None) -> bool:
        """Close the current log as a process end (``exc``: what the cell raised) and drop
        torch's records until the next segment. True when the segment logged anything."""
        if exc is not None:
            self._exception = exc
        had_log = self._log is not None
        self.finish()
        with self._lock:
            self._log = None
            self._normalizer = None
            self.paused = True
        return had_log

    def _unrecorded_frames(self) -> int:
        """Frames torch's own counters say Dynamo compiled while no record reached us (since
        this recorder, or this notebook segment, started: a kernel may have compiled before)."""
        if self.records > self._records_before:
            return 0
        return max(0, _frames_ok() - self._frames_before)

    def finish(self) -> None:
        self.flush()
        with self._lock:
            if self._log is None and not self._unrecorded_frames():
                return
            log = self._open()  # torch compiled frames we never saw: the end below says so
            exc_info = None
            exc = self._exception
            if exc is not None and not isinstance(exc, (SystemExit, KeyboardInterrupt)):
                tb = traceback.extract_tb(exc.__traceback__)
                last = tb[-1] if tb else None
                exc_info = ExceptionInfo(
                    type=type(exc).__qualname__,
                    message=str(exc),
                    traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
                    loc=Loc(file=last.filename, line=last.lineno or 0, name=last.name, code=(last.line or None)) if last else None,
                )
            elif isinstance(exc, KeyboardInterrupt):
                exc_info = ExceptionInfo(type="KeyboardInterrupt", message="", traceback="")
            devices, driver = environment.cuda_devices()
            hooks = torch_compat.HOOKS.report()  # a hook may have turned off since the start
            lost = self._unrecorded_frames()
            if lost:
                why = f"torch compiled {lost} frame{'s' if lost != 1 else ''} in process {os.getpid()} but none was recorded"
                hooks["recording"] = f"degraded: {why}"
                tell_launcher(why)
            log.write(
                ProcessEnd(
                    duration_s=time.time() - self.started,
                    exit_code=1 if exc_info else None,
                    exception=exc_info,
                    devices=devices,
                    cuda_driver=driver,
                    hooks=hooks,
                )
            )
            log.close()


def _frames_ok() -> int:
    """torch's own count of the frames Dynamo compiled in this process (0 before torch)."""
    utils = sys.modules.get("torch._dynamo.utils")
    try:
        return int(utils.counters["frames"]["ok"]) if utils is not None else 0  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - torch's counters are not ours to rely on
        return 0


def _hook_graph_breaks(recorder: Recorder) -> None:
    """Hand Dynamo's Unsupported exception (gb_type, real_stack with columns) to the
    normalizer of the text record that log_graph_break is about to emit."""
    torch_compat.install_graph_breaks(recorder.set_pending_break, recorder.clear_pending_break)


def _install_trace_handler(recorder: Recorder) -> None:
    logger = logging.getLogger("torch.__trace")
    logger.setLevel(logging.DEBUG)
    if not any(isinstance(h, _TraceHandler) for h in logger.handlers):
        logger.handlers.insert(0, _TraceHandler(recorder))


def _install_excepthook(recorder: Recorder) -> None:
    previous = sys.excepthook

    def excepthook(tp: type[BaseException], value: BaseException, tb: Any) -> None:
        recorder.note_exception(value)
        previous(tp, value, tb)

    sys.excepthook = excepthook


def activate(run_dir: str | Path | None = None) -> Recorder | None:
    """Start recording in this process (idempotent). Needs torch importable."""
    global _recorder
    if _recorder is not None:
        return _recorder
    target = run_dir or os.environ.get(RUN_DIR_ENV)
    if not target:
        return None
    launcher = os.environ.get(LAUNCHER_PID_ENV)
    eager = launcher is not None and str(os.getppid()) == launcher
    recorder = Recorder(Path(target), eager_log=False)
    _recorder = recorder
    hooks = torch_compat.HOOKS
    # One note on stderr per run (not one per torchrun worker): the launcher's child, or
    # rank 0, or a process activated without the launcher.
    hooks.announce = eager or launcher is None or os.environ.get("RANK", "0") == "0"
    if recorder.provenance is False:
        hooks.off("provenance", f"{PROVENANCE_ENV}=0")
    # The lean path (engine/tracehook.py) hands torch's records straight to us; the logging
    # handler is the fallback (DYN_INSPECT_TRACE_HOOK=0, or a torch whose trace_structured
    # is not the one we know, or our lean code failing).
    if os.environ.get(TRACE_HOOK_ENV, "1") == "0":
        hooks.off("trace", f"{TRACE_HOOK_ENV}=0")
        _install_trace_handler(recorder)
    else:
        torch_compat.install_trace(recorder.on_record, fallback=lambda: _install_trace_handler(recorder))
    _hook_graph_breaks(recorder)
    _install_excepthook(recorder)
    os.register_at_fork(after_in_child=lambda: _after_fork_in_child(recorder))  # its own log
    atexit.register(recorder.finish)
    _start_kernel_profiler(recorder)  # after finish: atexit runs it first
    _start_kernel_meta(recorder)
    if eager:
        recorder._open()  # after the hooks: process_start says which are active
    hooks.say_start()
    return recorder


def _start_kernel_profiler(recorder: Recorder) -> None:
    """``--profile-kernels N``: imported and installed only when asked (no cost when off)."""
    if not os.environ.get("DYN_INSPECT_PROFILE_KERNELS"):
        return
    try:
        from dyn_inspect.engine import profiler

        steps = profiler.requested()
        if steps:
            profiler.install(recorder, steps)
    except Exception as exc:  # noqa: BLE001 - recording must go on without the profile
        sys.stderr.write(f"dyn-inspect: --profile unavailable ({exc!r})\n")


def _start_kernel_meta(recorder: Recorder) -> None:
    """Triton kernels' compile metadata (engine/kernel_meta.py): where Triton is installed."""
    hooks = torch_compat.HOOKS
    if os.environ.get("DYN_INSPECT_KERNEL_META") == "0":  # the benchmark's "without" arm
        hooks.off("kernel_meta", "DYN_INSPECT_KERNEL_META=0")
        return
    try:
        from dyn_inspect.engine import kernel_meta

        def epoch() -> int:
            n = recorder._normalizer
            return n.ctx.epoch if n is not None else 0

        if kernel_meta.install(recorder.submit_build, epoch, lambda why: hooks.degrade("kernel_meta", why)):
            hooks.active("kernel_meta")
        else:
            hooks.off("kernel_meta", "Triton is not installed")
    except Exception as exc:  # noqa: BLE001 - recording must go on without kernel metadata
        hooks.degrade("kernel_meta", f"install failed: {exc!r}")


def current() -> Recorder | None:
    return _recorder


def tell_not_recording(why: str) -> None:
    """The startup hook's last word when torch was imported but no recorder started: a
    process log whose end says so (the summary's "degraded:" line) and the launcher's line."""
    tell_launcher(why)
    target = os.environ.get(RUN_DIR_ENV)
    if not target:
        return
    try:
        log = EventLog(Path(target), process_log_name(os.getpid()))
        info = environment.static_info()
        log.write(ProcessStart(t=time.time(), hooks={"recording": f"degraded: {why}"}, **info))
        log.write(ProcessEnd(duration_s=0.0, hooks={"recording": f"degraded: {why}"}))
        log.close()
    except Exception:  # noqa: BLE001 - the line above already told the user
        pass


def _after_fork_in_child(recorder: Recorder) -> None:
    """A forked child is a process of its own: it starts its own log (``p<pid>.jsonl``,
    written on its first record) instead of appending to its parent's with clashing compile
    ids. The parent's log, locks and worker thread are not the child's (a lock held by the
    parent's worker at the fork would never be released here). The child writes on the
    synchronous path (the worker belongs to the parent's pid)."""
    log = recorder._log
    recorder._lock = threading.RLock()
    recorder._log = None
    recorder._normalizer = None
    recorder._exception = None
    recorder.started = time.time()
    if log is not None:
        log.forget()
