"""tui/_textual_hacks.py against the installed Textual: each private thing it reaches for is
still there and still does what the TUI relies on (a Textual upgrade that moves one fails
here, by name, rather than as a silently missing first-frame replay or re-wrap)."""

from __future__ import annotations

import errno
import inspect
import io
import queue
import sys
import threading

import pytest
from textual.app import App, ComposeResult
from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread
from textual.drivers.headless_driver import HeadlessDriver
from textual.drivers.linux_driver import LinuxDriver
from textual.widgets import Label, RichLog

from dyn_inspect.tui._textual_hacks import HangupSafeApp, HangupSafeFile, hangup_safe, size_known


def test_app_display_is_still_the_terminal_write() -> None:
    params = list(inspect.signature(App._display).parameters)
    assert params == ["self", "screen", "renderable"], params


class _Seen(HangupSafeApp[None]):
    def compose(self) -> ComposeResult:
        yield Label("hello from the fence test")
        yield RichLog(id="log")


async def test_the_log_learns_its_size() -> None:
    app = _Seen()
    async with app.run_test(size=(60, 12)) as pilot:
        log = app.query_one("#log", RichLog)
        await pilot.pause()
        assert size_known(log)


class _HungUpTerminal(io.StringIO):
    """A terminal that is gone: every write and flush fails as a hung-up tty's does (EIO)."""

    def write(self, text: str) -> int:
        raise OSError(errno.EIO, "Input/output error")

    def flush(self) -> None:
        raise OSError(errno.EIO, "Input/output error")


def _writes_return(writer: WriterThread, count: int) -> bool:
    """Whether ``count`` writes through Textual's writer thread return (within a minute)."""
    done = threading.Event()

    def write_all() -> None:
        for i in range(count):
            writer.write(f"frame {i}\n")
        done.set()

    threading.Thread(target=write_all, daemon=True).start()
    return done.wait(timeout=60)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_textuals_writer_thread_still_dies_on_a_hung_up_terminal_and_then_blocks_writers() -> None:
    """Why HangupSafeFile exists: with the terminal gone, the installed Textual's writer thread
    dies at its first write, and once its queue is full every write waits forever (the TUI
    hung in its own shutdown as an orphaned process). Fails once Textual no longer does this."""
    writer = WriterThread(_HungUpTerminal())  # type: ignore[arg-type]
    writer.start()
    writer.write("the first frame after the hangup\n")
    writer.join(timeout=60)
    assert not writer.is_alive()
    for i in range(MAX_QUEUED_WRITES):
        writer.write(f"frame {i}\n")  # queued for a thread that is gone
    with pytest.raises(queue.Full):
        writer._queue.put_nowait("the next write")  # write() would wait here for good


def test_through_hangup_safe_file_the_writer_thread_drains_and_stops() -> None:
    terminal = HangupSafeFile(_HungUpTerminal())  # type: ignore[arg-type]
    writer = WriterThread(terminal)  # type: ignore[arg-type]
    writer.start()
    assert _writes_return(writer, MAX_QUEUED_WRITES * 4)
    assert writer.is_alive() and terminal.gone
    writer.stop()  # what the app's shutdown does: returns once the queue is drained
    assert not writer.is_alive()


def test_a_write_that_would_block_is_lost_but_the_terminal_is_not_given_up() -> None:
    class Busy(io.StringIO):
        def write(self, text: str) -> int:
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

    terminal = HangupSafeFile(Busy())  # type: ignore[arg-type]
    assert terminal.write("frame") == len("frame") and not terminal.gone


async def test_the_linux_driver_writes_through_the_hangup_safe_file() -> None:
    driver_class = hangup_safe(LinuxDriver)
    assert issubclass(driver_class, LinuxDriver) and hangup_safe(HeadlessDriver) is HeadlessDriver
    assert _Seen().driver_class.__name__ == "HangupSafeDriver"  # the TUI's App (HangupSafeApp) uses it
    driver = driver_class(App())  # (a driver is made inside the app's event loop)
    assert isinstance(driver._file, HangupSafeFile)  # what start_application_mode gives its WriterThread
    assert driver._file.fileno() == sys.__stderr__.fileno()
