"""The program's stderr tail, kept in the run when it ran without the TUI (``--no-tui``).

The live TUI records the program's whole output (``output.log``); without it the output
went only to the terminal, and a compile failure's traceback was lost with it. Here the
child's stderr goes through us: every byte is written on to our own stderr at once, and
the last ``TAIL_BYTES`` are saved as ``stderr-tail.log`` in the run directory when the
program ends.

The program must not notice: when our stderr is a terminal the child gets a pseudo-
terminal of the same size for its stderr (``isatty(2)`` stays true, colours and progress
bars behave), else a pipe. A failure to set this up leaves the child's stderr as it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import sys
import termios
import threading
from collections import deque
from pathlib import Path

TAIL_NAME = "stderr-tail.log"
TAIL_BYTES = 64 * 1024  # what is kept: a traceback or two, bounded whatever the program prints
_CHUNK = 16 * 1024


class StderrTee:
    """Forwards the child's stderr to ours and keeps its tail. Use::

    tee = StderrTee.create(); process = Popen(..., **tee.popen_kwargs()); tee.started()
    ...; tee.finish(run_dir)
    """

    def __init__(self, read_fd: int, child_fd: int, is_pty: bool) -> None:
        self._read_fd = read_fd
        self._child_fd = child_fd
        self._is_pty = is_pty
        self._tail: deque[bytes] = deque()
        self._size = 0
        self._thread = threading.Thread(target=self._pump, name="dyn-inspect-stderr", daemon=True)

    @classmethod
    def create(cls) -> StderrTee | None:
        """A tee for the next child, or None (then the child inherits our stderr as is)."""
        try:
            if os.isatty(2):
                import pty

                master, slave = pty.openpty()
                with contextlib.suppress(OSError):
                    # The terminal's size, so the program formats for the width it sees.
                    size = fcntl.ioctl(2, termios.TIOCGWINSZ, struct.pack("HHHH", 0, 0, 0, 0))
                    fcntl.ioctl(slave, termios.TIOCSWINSZ, size)
                return cls(master, slave, True)
            read, write = os.pipe()
            return cls(read, write, False)
        except OSError:
            return None

    def popen_kwargs(self) -> dict[str, int]:
        return {"stderr": self._child_fd}

    def started(self) -> None:
        """The child holds its end now: close ours (so its exit ends the pump) and start."""
        os.close(self._child_fd)
        self._thread.start()

    def abandon(self) -> None:
        """The child did not start."""
        for fd in (self._child_fd, self._read_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _pump(self) -> None:
        out = sys.stderr.fileno() if hasattr(sys.stderr, "fileno") else 2
        while True:
            try:
                data = os.read(self._read_fd, _CHUNK)
            except OSError:  # EIO: the pty's last writer closed it
                break
            if not data:
                break
            with contextlib.suppress(OSError):
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view) :]
            self._tail.append(data)
            self._size += len(data)
            while self._size - len(self._tail[0]) >= TAIL_BYTES:
                self._size -= len(self._tail.popleft())
        with contextlib.suppress(OSError):
            os.close(self._read_fd)

    def finish(self, run_dir: Path, timeout: float = 2.0) -> None:
        """Wait briefly for the last bytes (a grandchild may keep the stream open), then
        save the tail. Never raises: recording problems must not change the exit code."""
        self._thread.join(timeout)
        data = b"".join(list(self._tail))[-TAIL_BYTES:]
        if self._is_pty:
            data = data.replace(b"\r\n", b"\n")  # the pty's line discipline added the \r
        if not data:
            return
        with contextlib.suppress(OSError):
            fd = os.open(run_dir / TAIL_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)


def read_tail(run_dir: Path, limit: int = TAIL_BYTES) -> str | None:
    """The saved tail of a run, or None. The run directory is untrusted: a regular file
    only (no symlink, FIFO or device), read bounded."""
    try:
        fd = os.open(run_dir / TAIL_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")
