"""How the TUI writes paths, locations, durations and commands, and where it shows a break.

Paths are shown relative to the run's working directory (where the user ran the program)
and library files from their package (``torch/_dynamo/eval_frame.py``), so the screen never
shows long absolute paths and a run looks the same wherever it is opened from.
"""

from __future__ import annotations

import os
import shlex

from dyn_inspect.inspector.locations import run_cwd, short_loc, short_path

__all__ = ["command_text", "display_loc", "display_path", "duration", "run_cwd"]

# The one home of these is inspector/locations.py; the TUI's names for them:
display_path = short_path
display_loc = short_loc


def duration(seconds: float | None) -> str:
    """1.23s, 12.3s, 2m 05s, 1h 02m."""
    if seconds is None:
        return "—"
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def command_text(command: list[str], cwd: str | None = None) -> str:
    """The user's command as they would type it: the interpreter's path shortened, paths
    under the working directory relative to it."""
    if not command:
        return "?"
    first = os.path.basename(command[0]) if "/" in command[0] else command[0]
    rest = [_under(arg, cwd) for arg in command[1:]]
    return shlex.join([first, *rest])


def _under(arg: str, cwd: str | None) -> str:
    if not cwd or not arg.startswith("/"):
        return arg
    rel = os.path.relpath(arg, cwd)
    return arg if rel.startswith("..") else rel


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"
