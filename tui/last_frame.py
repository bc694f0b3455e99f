"""The first frame the TUI drew for a run, kept so that the next ``dyn-inspect open RUN`` puts
it on the terminal at once — before Python has imported Textual, which is most of the time
to a first frame (0.3–0.4 s on a 2-vCPU VM) — and Textual's own first frame, the same
characters, then replaces it.

A frame is kept per (run, terminal size, the environment that decides how Textual draws) in
this user's cache (``cache_dir()/frames``), with the stat of the run's files and of the code
that drew it: a log appended to, an index rewritten, Textual or dyn-inspect changed, and it is
not replayed. A frame replayed is confirmed a moment later by the full check of the run's
first screen (``first_screen.load``) and wiped if that fails, before Textual draws.

This module runs first thing in ``dyn-inspect``'s ``main`` (``replay``): it imports only the
standard library's light modules, none of ours but ``engine.user_cache``.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import zlib
from pathlib import Path
from typing import Any

from dyn_inspect.engine import user_cache

MAGIC = b"dyn-inspect frame 1\n"
MAX_BYTES = 4 << 20  # a 400x100 frame in 24-bit colour is well under 1 MB
# (engine.eventlog's, named here: importing it takes longer than a replay.)
RUNS_DIR_ENV = "DYN_INSPECT_RUNS_DIR"
# What decides how Textual draws on this terminal, beside its size (and TEXTUAL_*).
TERMINAL_ENV = ("TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TERM_PROGRAM", "LANG", "LC_ALL", "LC_CTYPE")
ALT_SCREEN_ON, ALT_SCREEN_OFF = "\x1b[?1049h", "\x1b[?1049l"
HIDE_CURSOR, SHOW_CURSOR, CLEAR, RESTORE_CURSOR = "\x1b[?25l", "\x1b[?25h", "\x1b[2J", "\x1b8"


# (Plain classes: dataclasses imports inspect, a tenth of the time to a replay.)
class Spot:
    """A run (realpath) and its files as they were before its first screen was checked (a
    log appended to after that check makes the frame stale, not wrong)."""

    __slots__ = ("files", "run")

    def __init__(self, run: str, files: list[list[Any]]) -> None:
        self.run = run
        self.files = files


class _Replayed:
    __slots__ = ("attrs", "done", "handed_over", "run")

    def __init__(self, run: str, attrs: list[Any] | None) -> None:
        self.run = run
        self.attrs = attrs  # the terminal's modes before the replay
        self.handed_over = False  # Textual has the screen (it leaves the alternate screen itself)
        self.done = False


_replayed: _Replayed | None = None


def _folder() -> Path:
    return user_cache.folder("frames")


def _code_files() -> list[str]:
    """The code a frame depends on: the TUI's modules, Textual's and Rich's (an upgrade
    rewrites them)."""
    import rich
    import textual

    here = Path(__file__).parent
    ours = sorted(str(p) for p in (*here.glob("*.py"), *here.glob("views/*.py")))
    theirs = [
        os.path.join(os.path.dirname(m.__file__ or ""), name)
        for m in (textual, rich)
        for name in ("__init__.py", "console.py" if m is rich else "app.py")
    ]
    return ours + theirs


def _stats(run: str, code: list[str]) -> list[list[Any]]:
    """The run directory's files and ``code``, by name, size, mtime and inode (raises
    OSError when one is gone)."""
    out: list[list[Any]] = []
    with os.scandir(run) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                out.append([entry.name, st.st_size, st.st_mtime_ns, st.st_ino])
    for path in code:
        st = os.stat(path)
        out.append([path, st.st_size, st.st_mtime_ns, st.st_ino])
    return out


def _terminal(columns: int, lines: int) -> list[Any]:
    env = sorted([k, v] for k, v in os.environ.items() if k in TERMINAL_ENV or k.startswith("TEXTUAL_"))
    return [columns, lines, env]


def _file_of(run: str, terminal: list[Any]) -> tuple[bytes, str]:
    """The cache key (a file name: the full key is checked inside) and the full key."""
    key = json.dumps([run, terminal])
    return zlib.crc32(key.encode()).to_bytes(4, "big"), key


def spot(run_dir: Path) -> Spot | None:
    """The run's files now: take it before its first screen is checked (``keep`` then stores
    the frame under it)."""
    run = os.path.realpath(run_dir)
    try:
        return Spot(run, _stats(run, _code_files()))
    except OSError:
        return None


def keep(where: Spot, columns: int, lines: int, frame: str) -> bool:
    """Store ``frame`` (what Textual wrote for the whole screen, ``columns`` × ``lines``) as
    the run's next replay on a terminal like this one; best effort."""
    name, key = _file_of(where.run, _terminal(columns, lines))
    head = json.dumps({"key": key, "files": where.files}).encode()
    data = MAGIC + head + b"\n" + frame.encode("utf-8", "surrogateescape")
    if len(data) > MAX_BYTES:
        return False
    return user_cache.write(_folder(), name, data, suffix=".frame")


def _saved(run: str, columns: int, lines: int) -> bytes | None:
    """The frame kept for ``run`` on this terminal if the run's files and the code that drew
    it are as they were then."""
    name, key = _file_of(run, _terminal(columns, lines))
    data = user_cache.read(_folder(), name, MAX_BYTES, suffix=".frame")
    if data is None or not data.startswith(MAGIC):
        return None
    head, sep, frame = data[len(MAGIC) :].partition(b"\n")
    try:
        meta = json.loads(head)
        if not sep or meta["key"] != key:
            return None
        files = meta["files"]
        code = [f[0] for f in files if os.path.isabs(f[0])]
        if _stats(run, code) != files:
            return None
    except (ValueError, KeyError, TypeError, IndexError, OSError):
        return None
    return frame


def _run_of(argv: list[str]) -> str | None:
    """The run ``dyn-inspect open`` shows for ``argv`` (``inspector.run.resolve_run``'s forms:
    none = the latest run, a run directory, a runs directory or a project's, a run's id), when
    it has an index; ``open`` with an option is left to the real resolution. (Where this
    guess and that resolution differ, ``confirm`` wipes the frame.)"""
    if argv[:1] != ["open"] or len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        return None
    root = os.environ.get(RUNS_DIR_ENV) or os.path.join(".dyn-inspect", "runs")
    if len(argv) == 1:
        candidates = [os.path.join(root, "latest")]
    elif os.path.isdir(arg := argv[1]):
        candidates = [arg, os.path.join(arg, "latest"), os.path.join(arg, ".dyn-inspect", "runs", "latest")]
    else:
        candidates = [os.path.join(root, arg)]
    for candidate in candidates:
        run = os.path.realpath(candidate)
        # (The recorder's index in the run, or the one a reader built in the user cache.)
        if os.path.isfile(os.path.join(run, user_cache.INDEX_FILE)) or user_cache.index_path(run).is_file():
            return run
    return None


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def replay(argv: list[str]) -> bool:
    """Put the kept frame of the run that ``dyn-inspect ARGV`` opens on the terminal, in the
    alternate screen, with the terminal's echo off (keys typed meanwhile wait for the TUI);
    True when one was drawn. ``undo`` (also at exit) puts the terminal back."""
    global _replayed
    if _replayed is not None or os.environ.get("DYN_INSPECT_NO_INDEX") or os.environ.get("DYN_INSPECT_NO_FRAME"):
        return False
    run = _run_of(argv)
    if run is None:
        return False
    try:
        out, inp = sys.stdout.fileno(), sys.stdin.fileno()
        if not (os.isatty(out) and os.isatty(inp)):
            return False
        size = os.get_terminal_size(out)
    except (OSError, ValueError):
        return False
    frame = _saved(run, size.columns, size.lines)
    if frame is None:
        return False
    import termios

    attrs: list[Any] | None
    try:
        attrs = termios.tcgetattr(inp)
        quiet = termios.tcgetattr(inp)
        quiet[3] &= ~(termios.ECHO | termios.ICANON)
        termios.tcsetattr(inp, termios.TCSANOW, quiet)
    except termios.error:
        attrs = None
    _replayed = _Replayed(run, attrs)
    atexit.register(undo)
    try:
        # The cursor back where ?1049h saved it (DECRC): where terminals keep one saved
        # cursor for both screens (libvterm: Neovim's and Vim's terminals), Textual's own
        # ?1049h saves it again, and its ?1049l at exit must find the shell's position there,
        # not the frame's last cell. (Where each screen has its own, this moves the hidden
        # cursor of the alternate one only.)
        _write(out, (ALT_SCREEN_ON + HIDE_CURSOR).encode() + frame + RESTORE_CURSOR.encode())
    except OSError:
        undo()
        return False
    return True


def replayed() -> str | None:
    """The run whose frame is on the screen (realpath), if any."""
    return _replayed.run if _replayed is not None and not _replayed.done else None


def confirm(run_dir: Path, shown: bool) -> bool:
    """After the real resolution and check: wipe a replayed frame unless it is of ``run_dir``
    and its first screen (``shown``) is what the TUI draws first. True when it stays."""
    if _replayed is None or _replayed.done:
        return False
    if shown and os.path.realpath(run_dir) == _replayed.run:
        return True
    try:
        _write(sys.stdout.fileno(), CLEAR.encode())
    except (OSError, ValueError):
        pass
    return False


def hand_over() -> None:
    """Textual is about to take the terminal: it leaves the alternate screen when it stops
    (it enters it again without a change: terminals ignore a second ``?1049h``)."""
    if _replayed is not None:
        _replayed.handed_over = True


def undo() -> None:
    """The terminal as before the replay: its modes, and the main screen unless Textual took
    it over (an error printed next is then seen)."""
    if _replayed is None or _replayed.done:
        return
    _replayed.done = True
    try:
        if not _replayed.handed_over:
            _write(sys.stdout.fileno(), (SHOW_CURSOR + ALT_SCREEN_OFF).encode())
        if _replayed.attrs is not None:
            import termios

            termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, _replayed.attrs)
    except (OSError, ValueError):
        pass
