"""Following a run from a background thread: load it, then poll ``Run.refresh()`` (which
reads only the bytes appended since the last poll) and tell the app when something new
arrived. Also tails the program's recorded output (``output.log``) when opening a run.

The model is shared with the UI thread, so both hold ``lock`` while touching it: the
follower while it applies new events, the app while it reads the model into widgets.
Notifications are coalesced — at most one ``RunUpdated`` is in flight; the app reads
everything new when it handles it — so a fast writer cannot flood the message queue.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from textual.message_pump import MessagePump

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.reader import Refused, open_inside
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.messages import LoadFailed, OutputAvailable, RunLoaded, RunUpdated

OUTPUT_LOG = "output.log"  # the program's terminal output, written by the live TUI
OUTPUT_TAIL_BYTES = 2 * 1024 * 1024  # when opening a run, show at most this much output


class OutputBuffer:
    """Bytes from the program waiting to be shown; thread-safe, one notification per burst."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chunks: list[bytes] = []
        self._notified = False

    def append(self, data: bytes) -> bool:
        """Add output; True when the caller should notify the app (nothing pending yet)."""
        with self._lock:
            self._chunks.append(data)
            if self._notified:
                return False
            self._notified = True
            return True

    def drain(self) -> bytes:
        with self._lock:
            data = b"".join(self._chunks)
            self._chunks.clear()
            self._notified = False
            return data


class RunFollower(threading.Thread):
    def __init__(
        self,
        target: MessagePump,
        path: Path,
        lock: threading.Lock,
        run: Run | None = None,
        interval: float = 0.1,
        output: OutputBuffer | None = None,
    ) -> None:
        super().__init__(name="dyn-inspect-follow", daemon=True)
        self.target = target
        self.path = path
        self.lock = lock
        self.run_ = run
        self.interval = interval
        self.output = output  # tail output.log into it (opening a run; live mode pumps the pty)
        self._output_offset = 0
        self._stop_event = threading.Event()
        self._pending = threading.Event()
        self._paused = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()

    def pause(self) -> None:
        """Stop applying new events (until ``resume``): the model holds still for a reader
        that cannot take the lock for long (an export). Returns once no poll is running."""
        self._paused.set()
        with self.lock:
            pass

    def resume(self) -> None:
        self._paused.clear()

    def handled(self) -> None:
        """The app has read the model: the next new events deserve a new message."""
        self._pending.clear()

    def run(self) -> None:
        if self.run_ is None:
            try:
                with self.lock:
                    self.run_ = Run(self.path)
            except InspectorError as exc:
                self.target.post_message(LoadFailed(str(exc)))
                return
            except Exception as exc:  # noqa: BLE001 - shown to the user, never a traceback
                self.target.post_message(LoadFailed(f"cannot read {self.path}: {exc}"))
                return
            self.target.post_message(RunLoaded(self.run_))
        if self.output is not None:
            self._start_output_tail()
        while not self._stop_event.wait(self.interval):
            self.poll()

    def poll(self) -> int:
        assert self.run_ is not None
        if self._paused.is_set():
            return 0
        try:
            with self.lock:
                new = self.run_.refresh()
        except InspectorError as exc:
            self.target.post_message(LoadFailed(str(exc)))
            self._stop_event.set()
            return 0
        if new and not self._pending.is_set():
            self._pending.set()
            self.target.post_message(RunUpdated(new))
        if self.output is not None:
            self._tail_output()
        return new

    # -- output.log --------------------------------------------------------------------

    def _start_output_tail(self) -> None:
        try:
            size = os.path.getsize(self.path / OUTPUT_LOG)
        except OSError:
            return
        self._output_offset = max(0, size - OUTPUT_TAIL_BYTES)
        if self._output_offset and self.output is not None:
            self.output.append(b"[... earlier output not shown ...]\n")
        self._tail_output()

    def _tail_output(self) -> None:
        assert self.output is not None
        try:  # (never a plain open: a FIFO named output.log would hang the follower)
            with os.fdopen(open_inside(self.path, self.path / OUTPUT_LOG), "rb") as f:
                f.seek(self._output_offset)
                data = f.read(OUTPUT_TAIL_BYTES)
        except (OSError, Refused):
            return
        if data:
            self._output_offset += len(data)
            if self.output.append(data):
                self.target.post_message(OutputAvailable())
