"""The user's program, run by the live TUI in a child process on a pseudo-terminal.

Why a pty rather than pipes: on a pipe, Python (and most C runtimes) block-buffer stdout,
so a training loop's prints would reach the output pane in 8 KiB bursts or only at exit;
and libraries that colour their output (tqdm, rich, logging handlers) check ``isatty()``
and would drop their colours. On a pty the program behaves as in the user's terminal:
line-buffered, coloured, and a prompt (``input()``) is echoed like in a terminal. stdout and
stderr share the pty, so their interleaving is exactly what the terminal would show.

The child gets its own session (``start_new_session``): keys typed in the TUI never reach
it as signals; Ctrl-C in the TUI asks first, then signals the child's process group (which
includes the workers torchrun or a DataLoader started). Where no pty can be opened the
program runs on pipes with ``PYTHONUNBUFFERED=1``.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import signal
import struct
import subprocess
import termios
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message_pump import MessagePump

from dyn_inspect.tui.follow import OUTPUT_LOG, OutputBuffer
from dyn_inspect.tui.messages import ChildExited, OutputAvailable

if TYPE_CHECKING:  # (the launcher pulls in the recorder: imported only where a run starts)
    from dyn_inspect.engine.launcher import Launch

OUTPUT_LOG_LIMIT = 16 * 1024 * 1024  # output.log stops growing here (the pane keeps scrolling)


class ChildProcess:
    def __init__(self, launch: Launch, target: MessagePump, output: OutputBuffer) -> None:
        self.launch = launch
        self.target = target
        self.output = output
        self.process: subprocess.Popen[bytes] | None = None
        self.master: int | None = None
        self.exit_code: int | None = None  # as the shell reports it (128+signal when killed)
        self.returncode: int | None = None
        self._log_fd: int | None = None
        self._logged = 0
        self._finish_lock = threading.Lock()

    @property
    def alive(self) -> bool:
        return self.process is not None and self.returncode is None and self.process.poll() is None

    def start(self, columns: int = 100, rows: int = 30) -> None:
        """Start the program; raises OSError when it cannot be started."""
        try:
            self._log_fd = os.open(self.launch.run_dir / OUTPUT_LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError:
            self._log_fd = None
        try:
            master, slave = os.openpty()
        except OSError:
            master = slave = -1
        if master >= 0:
            self.master = master
            self.resize(columns, rows)
            try:
                self.process = self.launch.start(stdin=slave, stdout=slave, stderr=slave, start_new_session=True, close_fds=True)
            finally:
                os.close(slave)
            reader = threading.Thread(target=self._pump_pty, name="dyn-inspect-pty", daemon=True)
        else:
            self.launch.spec.extra_env.setdefault("PYTHONUNBUFFERED", "1")
            self.process = self.launch.start(
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
            )
            reader = threading.Thread(target=self._pump_pipe, name="dyn-inspect-pipe", daemon=True)
        reader.start()
        threading.Thread(target=self._wait, name="dyn-inspect-wait", daemon=True).start()

    # -- output ------------------------------------------------------------------------

    def _emit(self, data: bytes) -> None:
        if self._log_fd is not None:
            if self._logged < OUTPUT_LOG_LIMIT:
                try:
                    os.write(self._log_fd, data)
                except OSError:
                    pass
                self._logged += len(data)
                if self._logged >= OUTPUT_LOG_LIMIT:
                    try:
                        os.write(self._log_fd, b"\n[dyn-inspect: output.log size limit reached; later output not saved]\n")
                    except OSError:
                        pass
        if self.output.append(data):
            self.target.post_message(OutputAvailable())

    def _pump_pty(self) -> None:
        assert self.master is not None
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.25)
            except (OSError, ValueError):
                break
            if not ready:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError as exc:
                # EIO: every writer closed the pty (the program and its children ended).
                if exc.errno not in (errno.EIO, errno.EBADF):
                    self._emit(f"\n[dyn-inspect: reading output failed: {exc}]\n".encode())
                break
            if not data:
                break
            self._emit(data)
        self._close_log()

    def _pump_pipe(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stream = self.process.stdout
        while True:
            data = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not data:
                break
            self._emit(data)
        self._close_log()

    def _close_log(self) -> None:
        if self._log_fd is not None:
            try:
                os.close(self._log_fd)
            except OSError:
                pass
            self._log_fd = None

    def _wait(self) -> None:
        assert self.process is not None
        rc = self.process.wait()
        self.target.post_message(ChildExited(rc))

    # -- input and control ----------------------------------------------------------------

    def write(self, data: bytes) -> None:
        if not self.alive:
            return
        try:
            if self.master is not None:
                os.write(self.master, data)
            elif self.process is not None and self.process.stdin is not None:
                self.process.stdin.write(data)
                self.process.stdin.flush()
        except OSError:
            pass

    def send_eof(self) -> None:
        """End of input: Ctrl-D on a pty (at the start of a line), closing the pipe otherwise."""
        if self.master is not None:
            eof = termios.tcgetattr(self.master)[6][termios.VEOF]
            self.write(eof if isinstance(eof, bytes) else bytes([eof]))
        elif self.process is not None and self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass

    def signal(self, signum: int) -> None:
        """Signal the program's whole process group (its workers too)."""
        if self.process is None or self.returncode is not None:
            return
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            try:
                self.process.send_signal(signum)
            except ProcessLookupError:
                pass

    def interrupt(self) -> None:
        self.signal(signal.SIGINT)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)

    def resize(self, columns: int, rows: int) -> None:
        if self.master is None or columns <= 0 or rows <= 0:
            return
        try:
            fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        except OSError:
            return
        if self.alive:
            self.signal(signal.SIGWINCH)

    def finish(self, returncode: int) -> int:
        """Record the end (``run_end``) once; returns the exit code the shell would report."""
        with self._finish_lock:
            if self.exit_code is None:
                self.returncode = returncode
                self.exit_code = self.launch.finish(returncode)
            return self.exit_code

    def stop_and_wait(self, timeout: float = 5.0) -> int:
        """Kill the program (if still running), wait for it and record the end."""
        if self.process is None:
            return self.finish(127)
        if self.process.poll() is None:
            self.kill()
        try:
            rc = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            rc = -signal.SIGKILL
        return self.finish(rc)

    @property
    def run_dir(self) -> Path:
        return self.launch.run_dir
