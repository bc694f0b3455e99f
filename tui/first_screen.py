"""A finished run's first screen — the header and the overview, as plain data — saved when
its index is written, so that ``dyn-inspect open`` draws the overview with the run's data
before it has read the run (0.1 s for a 100k-event run's index, seconds for a 1M-event one):
the run is read behind it and the overview then redrawn from the model, the same.

Kept in this user's cache (``index.cache_dir()/first-screen``, as the language server's
findings), keyed by the run's path, its index's identity and the code that drew it
(``user_cache.derived_key``): an index rewritten, a log appended to, dyn-inspect's code
changed (an edited headline, an upgrade), and the saved screen is not used.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import msgspec

from dyn_inspect.engine import user_cache
from dyn_inspect.inspector import index
from dyn_inspect.inspector.locations import run_cwd
from dyn_inspect.inspector.reports import screens
from dyn_inspect.inspector.run import Run

FOLDER = "first-screen"  # (user_cache.PRODUCTS)
MAX_BYTES = 1 << 20  # a first screen is a few KB: anything bigger is not ours


class Opening(NamedTuple):
    """What ``dyn-inspect open`` starts from: the run's saved first screen if current."""

    saved: FirstScreen | None


def opening(run_path: Path, initial_view: str) -> Opening:
    """Looked up before Textual is imported (the overview only: another first view has no
    saved screen)."""
    saved = None
    if initial_view == "overview" and not os.environ.get(index.NO_INDEX_ENV):
        saved = load(run_path)
    return Opening(saved)


class FirstScreen(msgspec.Struct, frozen=True):
    key: bytes
    command: str
    state: screens.RunState
    env: str
    elapsed: float | None
    cwd: str | None  # what paths are shown relative to (the run's recorded directory)
    ranks: list[int]
    overview: screens.Overview


def _key_of(run_path: Path, index_id: bytes) -> bytes:
    return user_cache.derived_key(FOLDER, os.path.realpath(run_path), index_id.hex())


def _folder() -> Path:
    return user_cache.folder(FOLDER)


def build(run: Run, index_id: bytes) -> FirstScreen | None:
    """The first screen of ``run``, whose model is exactly the index ``index_id``'s, when it
    is finished and was read without problems (a screen that lists skipped lines is drawn
    from the run itself)."""
    if not run.model.finished or run.problems or run.unknown:
        return None
    model = run.model
    elapsed = screens.elapsed(model, 0.0)
    if elapsed != screens.elapsed(model, 1e18):
        return None  # the header's clock would still be running (no recorded duration)
    return FirstScreen(
        key=_key_of(run.path, index_id),
        command=screens.command_line(model, run.path.name),
        state=screens.run_state(model),
        env=screens.environment_text(model),
        elapsed=elapsed,
        cwd=run_cwd(model),
        ranks=model.ranks(),
        overview=screens.overview(model),
    )


def save(run: Run, index_id: bytes | None = None) -> bool:
    """Keep ``run``'s first screen for its next ``open`` (best effort; False when not kept).
    ``index_id``: the identity of the index just written from ``run``'s model; without it,
    the model must be exactly the index the run was opened from."""
    if index_id is None:
        if run.index_id is None or run.read_on_open:
            return False
        index_id = run.index_id
    screen = build(run, index_id)
    if screen is None:
        return False
    return user_cache.write(_folder(), screen.key, msgspec.msgpack.encode(screen))


def load(run_path: Path) -> FirstScreen | None:
    """The saved first screen of the run at ``run_path`` if it describes the run as it is
    now (its index current and covering every log whole); else None."""
    index_id = index.identity(run_path)
    if index_id is None:
        return None
    key = _key_of(run_path, index_id)
    data = user_cache.read(_folder(), key, MAX_BYTES)
    if data is None:
        return None
    try:
        screen = msgspec.msgpack.decode(data, type=FirstScreen)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if screen.key != key:
        return None
    return screen


def forget(run_path: Path) -> None:
    """Drop the saved first screen of the run at ``run_path`` (its next ``open`` reads the
    run before drawing it, and saves it again)."""
    index_id = index.identity(run_path)
    if index_id is not None:
        user_cache.drop(_folder(), _key_of(run_path, index_id))
