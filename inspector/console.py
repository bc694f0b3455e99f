"""One rich Console factory: colour on terminals, plain text in pipes, NO_COLOR honoured."""

from __future__ import annotations

import os
import sys
from typing import IO

from rich.console import Console


def make_console(file: IO[str] | None = None) -> Console:
    out = file or sys.stdout
    is_tty = hasattr(out, "isatty") and out.isatty()
    return Console(
        file=out,
        no_color=bool(os.environ.get("NO_COLOR")) or not is_tty,
        highlight=is_tty,
        width=None if is_tty else 200,
        soft_wrap=not is_tty,
    )
