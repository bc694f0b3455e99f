"""Inductor's cache directory as the first compile of a process found it: where it is and
how many FX graph and AOTAutograd entries it already held. ``dyn-inspect cache`` decides
"cold" from this fact, not from the misses alone. Read only: the directory is never
created (torch's own ``cache_dir()`` would create it and set TORCHINDUCTOR_CACHE_DIR)."""

from __future__ import annotations

import os
import sys

from dyn_inspect.engine.schema import InductorCacheDir

CAP = 10_000  # entries counted at most: "at least this many" is all a headline needs


def _path() -> str | None:
    where = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if where:
        return os.path.abspath(where)
    if "torch" not in sys.modules:
        return None
    try:
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir

        return os.path.abspath(default_cache_dir())
    except Exception:  # noqa: BLE001 - moved in another torch: the fact is unknown, not wrong
        return None


def _count(top: str, depth: int) -> int:
    """Directories ``depth`` levels under ``top`` (an entry is one key's directory)."""
    level = [top]
    for _ in range(depth):
        below: list[str] = []
        for d in level:
            try:
                with os.scandir(d) as it:
                    below.extend(e.path for e in it if e.is_dir(follow_symlinks=False))
            except OSError:
                continue
            if len(below) >= CAP:
                return CAP
        level = below
    return len(level)


def snapshot() -> InductorCacheDir | None:
    """The cache directory now; None where torch's default cannot be read."""
    path = _path()
    if path is None:
        return None
    return InductorCacheDir(
        path=path,
        exists=os.path.isdir(path),
        # fxgraph/<2 chars of the key>/<key>/, aotautograd/<key>/ (torch's layout since 2.4)
        fx_graph_entries=_count(os.path.join(path, "fxgraph"), 2),
        aotautograd_entries=_count(os.path.join(path, "aotautograd"), 1),
    )
