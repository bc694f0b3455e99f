"""Every use of Textual's private API, in one place (as engine/torch_compat.py fences torch).

Two things the TUI needs that Textual has no public API for:

- ``size_known``: whether a ``RichLog`` has been laid out (``RichLog._size_known``), so a
  resize re-wraps text only once there is a width;
- ``HangupSafeApp.get_driver_class``: Textual's Linux driver writing through ``HangupSafeFile``.
  Its writer thread (``textual/drivers/_writer_thread.py``) dies on the first write that fails
  (EIO once the terminal is gone: a closed VS Code terminal, a dropped SSH session), and from
  then on every 31st write waits forever for it: the app hung in its own shutdown and stayed
  as an orphaned process. Writes to a terminal that is gone are dropped instead.

Each degrades to "not available" (no re-wrap, the driver as it is) when another Textual moved
what it reaches for; tests/tui/test_textual_hacks.py checks the installed Textual still has each.
"""

from __future__ import annotations

import errno
from typing import IO, TYPE_CHECKING, TypeVar

from textual.app import App
from textual.driver import Driver

if TYPE_CHECKING:
    from textual.widgets import RichLog

ReturnType = TypeVar("ReturnType")


class HangupSafeApp(App[ReturnType]):
    """An App whose terminal writes survive the terminal going away (``hangup_safe``)."""

    def get_driver_class(self) -> type[Driver]:
        return hangup_safe(super().get_driver_class())


# The errors of a terminal that is gone (hung up, closed); any other failed write (EAGAIN on
# a terminal someone made non-blocking) loses that write only.
_GONE = frozenset({errno.EIO, errno.EPIPE, errno.EBADF, errno.ENXIO})


class HangupSafeFile:
    """The terminal as Textual's writer thread sees it, except that a write or flush that
    fails is dropped instead of raised: the thread keeps draining its queue, so the app can
    still shut down. Once the terminal is gone (``gone``) nothing more is tried."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self.gone = False

    def _failed(self, error: Exception) -> None:
        if isinstance(error, ValueError) or getattr(error, "errno", None) in _GONE:
            self.gone = True

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._file.write(text)
            except (OSError, ValueError) as error:  # ValueError: the file was closed
                self._failed(error)
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._file.flush()
            except (OSError, ValueError) as error:
                self._failed(error)

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return self._file.isatty()

    def __getattr__(self, name: str) -> object:  # encoding, errors, …: the terminal's own
        return getattr(self._file, name)


def hangup_safe(driver_class: type[Driver]) -> type[Driver]:
    """``driver_class`` writing through ``HangupSafeFile``, where it is a driver that writes to
    a terminal file of its own (``_file``: Textual's Linux driver); other drivers (headless,
    web, Windows) unchanged."""
    try:
        from textual.drivers.linux_driver import LinuxDriver
    except ImportError:  # (no termios: Windows)
        return driver_class
    if not issubclass(driver_class, LinuxDriver):
        return driver_class

    class HangupSafeDriver(driver_class):  # type: ignore[valid-type,misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            file = getattr(self, "_file", None)
            if file is not None and not isinstance(file, HangupSafeFile):
                self._file = HangupSafeFile(file)

    return HangupSafeDriver


def size_known(log: RichLog) -> bool:
    """Whether ``log`` has a size yet (False where this Textual does not say)."""
    return bool(getattr(log, "_size_known", False))
