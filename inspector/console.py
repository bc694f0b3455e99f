"""One rich Console factory: colour on terminals, plain text in pipes, NO_COLOR honoured.

Text from a run's log is untrusted (a ``graph_break(msg="\\x1b[2J...")`` lands in it):
``safe_text`` shows terminal control characters as escapes instead of sending them, and
the consoles made here apply it to every segment they print, so no face executes a
log's escape sequences. ``write_private`` writes a file 0600 whatever the umask (graphs
and reports quote the model's code).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.segment import Segment

from dyn_inspect.inspector.reader import CONTROL as _CONTROL
from dyn_inspect.inspector.reader import safe_text

__all__ = ["SafeConsole", "make_console", "mkdir_private", "safe_text", "write_private"]


class SafeConsole(Console):
    """A Console that neutralizes control characters in what it renders (not in its own
    style codes, which are added after rendering)."""

    def render_str(self, text: str, **kwargs: Any) -> Any:  # type: ignore[override]
        # Before layout, so that widths are those of the escaped text.
        return super().render_str(safe_text(text), **kwargs)

    def render(self, renderable: Any, options: Any = None) -> Iterable[Segment]:  # type: ignore[override]
        for segment in super().render(renderable, options):
            if segment.control is None and _CONTROL.search(segment.text) is not None:
                yield Segment(safe_text(segment.text), segment.style, None)
            else:
                yield segment


def make_console(file: IO[str] | None = None) -> Console:
    out = file or sys.stdout
    is_tty = hasattr(out, "isatty") and out.isatty()
    # markup=False: strings from a run (a break type, a path, a kernel name) are printed as
    # they are; with Rich's default a ``[/]`` in one raised MarkupError inside a table cell.
    # Styled text is built with rich.text.Text, never with markup in an f-string.
    return SafeConsole(
        file=out,
        markup=False,
        no_color=bool(os.environ.get("NO_COLOR")) or not is_tty,
        highlight=is_tty,
        width=None if is_tty else 200,
        soft_wrap=not is_tty,
    )


def write_private(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Create or replace ``path`` with mode 0600 regardless of the umask."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_CREAT
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def mkdir_private(path: str | os.PathLike[str]) -> Path:
    """``mkdir -p`` with 0700 for what it creates (and the leaf), regardless of the umask."""
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(p, 0o700)
    return p
