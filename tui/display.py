"""How the TUI writes paths, locations, durations and commands, and where it shows a break.

Paths are shown relative to the run's working directory (where the user ran the program)
and library files from their package (``torch/_dynamo/eval_frame.py``), so the screen never
shows long absolute paths and a run looks the same wherever it is opened from.
"""

from __future__ import annotations

from dyn_inspect.inspector.locations import run_cwd, short_loc, short_path

__all__ = ["cut_middle", "display_loc", "display_path", "duration", "run_cwd"]

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


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def cut_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells, its middle replaced by "…" when longer: a kernel's
    name keeps its kind (``triton_red_fused_``) and its number (``_12``), what tells it from
    its neighbours in a table."""
    if len(text) <= width:
        return text
    tail = width // 3
    return text[: width - tail - 1] + "…" + text[-tail:]
