"""Source shown beside a finding: the lines around a location, syntax highlighted with the
line marked, and the ``$EDITOR`` command that opens it (``+line``).

Files are read fresh (cached by mtime) from where the run recorded them; when the line's
text no longer matches what was recorded (``Loc.code``), the view says the file changed.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Mapping

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.source_files import read_source as read_file
from dyn_inspect.inspector.source_files import source_version

THEME = "monokai"
LEXER_LEAD = 30  # lines lexed above a snippet for context


@functools.lru_cache(maxsize=64)
def _read(path: str, mtime_ns: int, size: int) -> str | None:
    return read_file(path)


def read_source(path: str) -> str | None:
    """The file's text through the one reader (``inspector/source_files.py``: regular Python
    files under the run's roots, bounded), cached per version."""
    version = source_version(path)
    return None if version is None else _read(path, *version)


def stale(loc: Loc, text: str) -> bool:
    """The recorded line text differs from the file's line now (the file was edited)."""
    if loc.code is None:
        return False
    lines = text.splitlines()
    if not 1 <= loc.line <= len(lines):
        return True
    return lines[loc.line - 1].strip() != loc.code.strip()


def snippet(loc: Loc, title: str, context: int = 6) -> RenderableType:
    """``context`` lines either side of ``loc``, highlighted, its line marked."""
    text = read_source(loc.file)
    if text is None:
        lines: list[RenderableType] = [Text(title, style="bold"), Text("source not available here", style="dim italic")]
        if loc.code:
            lines.append(Syntax(loc.code, "python", theme=THEME, line_numbers=True, start_line=loc.line, highlight_lines={loc.line}))
        return Group(*lines)
    first = max(1, loc.line - context)
    last = loc.line + context
    # Rich tokenizes all the code it is given, on every render: hand it the window plus some
    # lines before it (so a docstring opened above still lexes as a string), not the file.
    lead = max(1, first - LEXER_LEAD)
    window = "\n".join(text.splitlines()[lead - 1 : last])
    # Rich counts ``line_range`` and ``stylize_range`` lines inside the code it is given (the
    # window, line 1 = file line ``lead``), while ``start_line`` and ``highlight_lines`` are
    # the numbers shown: convert, or a line past the lexer lead shows blank or shifted.
    offset = lead - 1
    syntax = Syntax(
        window,
        "python",
        theme=THEME,
        line_numbers=True,
        start_line=lead,
        line_range=(first - offset, last - offset),
        highlight_lines={loc.line},
        word_wrap=False,
    )
    if loc.col is not None and loc.end_col is not None and loc.end_col > loc.col:
        syntax.stylize_range("bold underline", (loc.line - offset, loc.col), (loc.line - offset, loc.end_col))
    parts: list[RenderableType] = [Text(title, style="bold")]
    if stale(loc, text):
        parts.append(Text(f"⚠ the file changed since the run; line {loc.line} was: {loc.code}", style="yellow"))
    parts.append(syntax)
    return Group(*parts)


def code_view(text: str, lexer: str, start_line: int = 1) -> Syntax:
    return Syntax(text, lexer, theme=THEME, line_numbers=True, start_line=start_line, word_wrap=False)


def editor_command(path: str, line: int, env: Mapping[str, str] | None = None) -> list[str]:
    """The command that opens ``path`` at ``line`` in the user's editor.

    ``$VISUAL`` then ``$EDITOR`` (default ``vi``); ``+line`` is understood by vi/vim/nvim,
    emacs, nano, micro, kak and helix; VS Code wants ``--goto path:line``. The path is a
    run's data: it is made absolute, so that no name (``+:!cmd``, ``-c``) reaches the
    editor as an option or a command.
    """
    path = os.path.abspath(path)
    env = os.environ if env is None else env
    editor = env.get("VISUAL") or env.get("EDITOR") or "vi"
    argv = shlex.split(editor)
    name = os.path.basename(argv[0]) if argv else "vi"
    if name in ("code", "code-insiders", "codium", "cursor"):
        return [*argv, "--goto", f"{path}:{line}"]
    return [*argv, f"+{line}", path]


MAX_CODE_LINES = 4000  # a wrapper module can be huge; the rest is one `o`/export away


def cut_code(text: str) -> tuple[str, int]:
    """The first ``MAX_CODE_LINES`` lines of a graph's or kernel's code, and how many more
    there were (0 when none were cut)."""
    lines = text.splitlines()
    if len(lines) <= MAX_CODE_LINES:
        return text, 0
    return "\n".join(lines[:MAX_CODE_LINES]), len(lines) - MAX_CODE_LINES
