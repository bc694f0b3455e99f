"""Where a path a run recorded is in the opened checkout, and which paths are the user's:
``Workspace`` maps the recorded paths of a run made elsewhere (a copy, a clone, a container,
a folder that moved) onto the workspace's files; ``norm_path`` is the one path
normalization every lookup goes through (realpath: a symlinked workspace still matches)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import msgspec

from dyn_inspect.inspector.events import Loc
from dyn_inspect.inspector.locations import inside, is_library, run_cwd
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.source_files import allow_root, located, read_source, source_lines


@functools.lru_cache(maxsize=4096)
def norm_path(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def line_text(path: str, line: int) -> str | None:
    lines = source_lines(path)
    return lines[line - 1].strip() if 1 <= line <= len(lines) else None


def snapshot(path: str, since: float | None) -> list[str] | None:
    """The file's lines when it was not modified after ``since`` (the run's start), else None."""
    if since is None:
        return None
    try:
        if os.stat(located(path)).st_mtime > since:
            return None
    except OSError:
        return None
    text = read_source(path)
    return None if text is None else text.splitlines()


class Workspace:
    """Which paths are the user's (inside a workspace root, not library code), and where a
    path recorded by a run is in the opened checkout.

    A run recorded in another place (a copy, a clone, a container path, or before the
    folder moved) names files that do not exist here. ``local(path)`` maps them: the same
    path relative to the run's working directory, taken from the folder that holds the
    run's ``.dyn-inspect`` (``local_cwd``), else the longest tail of the path that exists
    under a workspace root. Among several candidates the one whose line holds the recorded
    text wins; placement later drops a finding whose text is not found at all.
    """

    def __init__(
        self, roots: list[Path], recorded_cwd: str | None = None, local_cwd: Path | None = None, cells: frozenset[str] = frozenset()
    ) -> None:
        self.roots = [Path(norm_path(str(r))) for r in roots]
        # the run's notebook cells (the files IPython compiled them under): the user's code,
        # though outside every root (lsp.notebook_cells puts them on the open cells)
        self.cells = frozenset(norm_path(c) for c in cells)
        self.recorded_cwd = recorded_cwd
        self.local_cwd = Path(norm_path(str(local_cwd))) if local_cwd is not None else None
        self._cache: dict[str, bool] = {}
        self._mapped: dict[str, str | None] = {}
        # What the findings built with this workspace depend on (findings_cache.Scope):
        # every recorded path answered with itself (``inside``) or with nothing
        # (``outside``), and whether any was answered with another file (a candidate).
        self.inside: set[str] = set()
        self.outside: set[str] = set()
        self.remapped = False
        # The files the findings name are read under these roots (the one reader's rule).
        for root in (*self.roots, self.local_cwd):
            allow_root(root)

    @classmethod
    def for_run(cls, roots: list[Path], run: Run | None) -> Workspace:
        if run is None:
            return cls(roots)
        recorded = run_cwd(run.model)
        runs_root = run.path.parent
        local = runs_root.parent.parent if runs_root.name == "runs" and runs_root.parent.name == ".dyn-inspect" else None
        return cls(roots, recorded, local, frozenset(run.model.cells))

    def contains(self, path: str) -> bool:
        known = self._cache.get(path)
        if known is None:
            real = norm_path(path)
            known = real in self.cells or (not is_library(real) and any(inside(real, r) for r in self.roots))
            self._cache[path] = known
        return known

    def _candidates(self, path: str) -> list[str]:
        out: list[str] = []
        if self.recorded_cwd and self.local_cwd is not None:
            try:
                rel = os.path.relpath(path, self.recorded_cwd)
            except ValueError:
                rel = None
            if rel is not None:
                out.append(os.path.normpath(os.path.join(self.local_cwd, rel)))
        parts = Path(path).parts[1:]
        bases = ([self.local_cwd] if self.local_cwd is not None else []) + self.roots
        for k in range(len(parts), 0, -1):
            tail = os.path.join(*parts[-k:])
            for base in bases:
                out.append(os.path.join(base, tail))
        seen: set[str] = set()
        found = []
        for c in out:
            if c not in seen and os.path.isfile(c) and self.contains(c):
                seen.add(c)
                found.append(c)
        return found

    def maps_to_nothing(self, path: str) -> bool:
        """Whether ``local(path)`` is None whatever line and text it is asked with."""
        if self.contains(path):
            return False
        return is_library(path) or not os.path.isabs(path) or not self._candidates(path)

    def local(self, path: str, line: int | None = None, code: str | None = None) -> str | None:
        """The workspace file for a recorded ``path`` (itself when it is in the
        workspace), or None for library code and files not in this checkout."""
        if path in self._mapped:
            return self._mapped[path]
        if self.contains(path):
            self._mapped[path] = path
            self.inside.add(path)
            return path
        if is_library(path) or not os.path.isabs(path):
            self._mapped[path] = None
            self.outside.add(path)
            return None
        candidates = self._candidates(path)
        chosen = candidates[0] if candidates else None
        if chosen is None:
            self.outside.add(path)
        else:
            self.remapped = True
        if len(candidates) > 1 and line is not None and code:
            for c in candidates:
                if line_text(c, line) == code.strip():
                    chosen = c
                    break
            else:
                return chosen  # not confirmed: decide again with the next location's text
        self._mapped[path] = chosen
        return chosen

    def local_loc(self, loc: Loc) -> Loc | None:
        mapped = self.local(loc.file, loc.line, loc.code)
        if mapped is None:
            return None
        return loc if mapped == loc.file else msgspec.structs.replace(loc, file=mapped)

    def nearest(self, stack: list[Loc]) -> Loc | None:
        for frame in reversed(stack):
            mapped = self.local_loc(frame)
            if mapped is not None:
                return mapped
        return None
