"""The uncaught exception's traceback, kept in the run when it ran without the TUI (``--no-tui``).

The live TUI records the program's whole output (``output.log``); without it the output
goes only to the terminal, and a compile failure's traceback was lost with it. The program
keeps it itself: the launcher's direct child (``engine/bootstrap/sitecustomize.py``) saves,
at exit, the traceback python has just printed for an uncaught exception as
``stderr-tail.log`` in the run directory.

Why not relay the program's stderr through the launcher and keep its tail: the program
would then write stdout and stderr to two different descriptors, and no relay can restore
their order (``2>&1`` and a terminal showed lines moved); a background process outliving
the program would get SIGPIPE on its next write once the relay ended; a closed stderr would
no longer be closed. The program gets python's own descriptors instead; what it printed
other than the traceback stays on the terminal only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

TAIL_NAME = "stderr-tail.log"
TAIL_BYTES = 64 * 1024  # what is kept: a traceback or two, bounded whatever the program prints
TAIL_ENV = "DYN_INSPECT_STDERR_TAIL"  # set by the --no-tui launcher for its direct child


def save_traceback(run_dir: str) -> None:
    """At exit: the uncaught exception's traceback (as python printed it) into the run.
    Never raises: recording problems must not change the exit code."""
    exc = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    # KeyboardInterrupt: nothing to keep, and importing traceback this late makes python
    # exit with 1 instead of dying by SIGINT as it does (seen on 3.11).
    if exc is None or isinstance(exc, KeyboardInterrupt):
        return
    try:
        import traceback

        data = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).encode("utf-8", "replace")[-TAIL_BYTES:]
        fd = os.open(Path(run_dir) / TAIL_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001, S110 - the program's exit comes first
        pass


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
