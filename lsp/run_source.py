"""Which run the server shows, and following it while it grows.

The run is the one pinned by the ``run`` setting or ``dynInspect.selectRun``; else, among
the runs found wherever the user works — the ``runsDir`` setting, ``$DYN_INSPECT_RUNS_DIR``
and every ``.dyn-inspect/runs`` under the workspace folders (``cd examples && dyn-inspect
train.py`` records there) — the newest one that compiled code in a file open in the
editor (or in a notebook cell whose text an open notebook holds); with none such, the
newest that compiled anything; else the newest. A run that compiled nothing (a crash at
start-up, a mistyped command) thus never hides the last useful one, and a run that is
recording takes over once it compiles an open file.
``poll()`` is called every ``POLL_S`` from a worker
thread: it switches to a newer run when ``latest`` moves, reads what was appended to the
current run (``Run.refresh`` is incremental), reopens a run whose log was replaced or
truncated, and lets go of a run whose directory was deleted. Problems are returned as
messages; nothing here raises to the caller and nothing from a log is executed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.events import runs_root
from dyn_inspect.inspector.index import NOT_FOR_FINDINGS
from dyn_inspect.inspector.run import Run, is_run_dir, resolve_run, run_folders
from dyn_inspect.lsp.notebook_cells import cell_key
from dyn_inspect.lsp.run_listing import log_sizes

if TYPE_CHECKING:
    from dyn_inspect.inspector.workspace import Workspace

T = TypeVar("T")

POLL_S = 0.05  # a poll is a few stats and a read of what was appended: cheap
RESCAN_S = 3.0  # how often the workspace is walked for new .dyn-inspect/runs folders
RECHECK_S = 1.0  # how often a growing run that is not shown is read again
MAX_CONSIDERED = 20  # the newest runs looked at when choosing
MAX_WALK_DIRS = 20000  # a huge workspace is searched only this far
# Folders never searched for runs: environments, caches, VCS data, dependencies.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "env",
        "__pycache__",
        "site-packages",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        "build",
        "dist",
    }
)


def find_runs_roots(roots: list[Path], max_dirs: int = MAX_WALK_DIRS) -> list[Path]:
    """Every ``.dyn-inspect/runs`` folder under ``roots`` (breadth first, bounded)."""
    found: list[Path] = []
    queue = [r for r in roots if r.is_dir()]
    seen = 0
    while queue and seen < max_dirs:
        folder = queue.pop(0)
        seen += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            if entry.name == ".dyn-inspect":
                runs = Path(entry.path) / "runs"
                if runs.is_dir():
                    found.append(runs)
                continue
            if entry.name in SKIP_DIRS or entry.name.startswith("."):
                continue
            queue.append(Path(entry.path))
    return found


@dataclass(frozen=True)
class Touch:
    """What a run compiled: whether anything, and in which workspace files (real paths)."""

    compiled: bool
    files: frozenset[str]


def touch_of(run: Run, roots: list[Path], ws: Workspace | None = None) -> Touch:
    """``ws``: the workspace the findings were built with (its record of the paths it
    answered then covers the touch too); else one of ``roots``."""
    from dyn_inspect.inspector.workspace import Workspace, norm_path

    ws = ws if ws is not None else Workspace.for_run(roots, run)
    m = run.model
    files: set[str] = set()
    for frame in m.frames.values():
        local = ws.local(frame.filename, frame.firstlineno)
        if local is not None:
            files.add(norm_path(local))
    for group in m.break_groups():
        for _log, event in group.hits[:1]:
            loc = ws.local_loc(event.loc) or ws.nearest(event.user_stack)
            if loc is not None:
                files.add(norm_path(loc.file))
    if m.cells:
        # A cell is also named by its text: an open notebook cell holding it chooses the run
        # (the file IPython compiled it under is the kernel's own, never open anywhere).
        sources = {norm_path(f): c.source for f, c in m.cells.items()}
        files.update(k for k in (cell_key(sources[f]) for f in list(files) if f in sources) if k is not None)
    return Touch(compiled=bool(m.compiles) or bool(m.frames), files=frozenset(files))


NO_RUNS = (
    "no recorded runs found in {roots} (looked for .dyn-inspect/runs in every folder and the runsDir setting) — "
    'record one with `dyn-inspect your_script.py` (VS Code: "dyn-inspect: Run Current File with dyn-inspect")'
)


@dataclass
class PollResult:
    changed: bool = False  # the model (or the run shown) changed: rebuild and republish
    switched: bool = False  # another run is shown now
    messages: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)  # also worth a visible window/showMessage


class _NotSaved(Exception):
    """A run ``cached_choice`` would have to read: it has nothing saved."""


class RunSource:
    def __init__(self, workspace_root: Path, roots: list[Path] | None = None, open_files: Callable[[], set[str]] | None = None) -> None:
        self.workspace_root = workspace_root
        self.roots = roots or [workspace_root]
        self.open_files = open_files or (lambda: set())
        self.runs_dir_setting: str | None = None
        self.pinned: str | None = None  # a run dir or id; None follows the latest
        self.run: Run | None = None
        self.why = ""  # why the run shown was chosen (said with "showing run")
        self._found: list[Path] = []
        self._scanned = float("-inf")
        self._touch: dict[str, tuple[tuple[tuple[str, int], ...], float, Touch | None]] = {}
        self._current_touch: tuple[tuple[int, int], Touch] | None = None
        self._spare: tuple[Path, Run] | None = None  # the run ``_touched`` opened last, this poll
        self._rescan_s = RESCAN_S
        # root -> (its directory's (inode, mtime), runs in it, folders in it not yet a run)
        self._listed: dict[str, tuple[tuple[int, int], list[Path], list[Path]]] = {}

    # -- configuration ---------------------------------------------------------------

    @property
    def root(self) -> Path:
        return runs_root(self.runs_dir_setting, cwd=self.workspace_root)

    def runs_roots(self) -> list[Path]:
        """Where runs are looked for: the setting (or $DYN_INSPECT_RUNS_DIR) first, then
        every ``.dyn-inspect/runs`` under the workspace folders (rescanned now and then)."""
        now = time.monotonic()
        if now - self._scanned >= self._rescan_s:
            self._found = find_runs_roots(self.roots)
            self._scanned = time.monotonic()
            # A walk of a huge workspace costs: at most ~2 % of the time goes to it.
            self._rescan_s = max(RESCAN_S, 50 * (self._scanned - now))
        out: list[Path] = []
        seen: set[str] = set()
        for root in [self.root, *self._found]:
            key = os.path.realpath(root)
            if key not in seen:
                seen.add(key)
                out.append(root)
        return out

    def candidates(self) -> list[Path]:
        """Every run found, newest first (run names start with their start time)."""
        runs: list[Path] = []
        for root in self.runs_roots():
            try:
                runs.extend(self._runs_in(root))
            except OSError:
                continue
        runs.sort(key=lambda p: (p.name, str(p)), reverse=True)
        return runs

    def _runs_in(self, root: Path) -> list[Path]:
        """``list_runs(root)``, listed again only when the root's directory changed (a run
        created or deleted changes its mtime): polling 2,000 runs every POLL_S looked into
        each of them, 59 % of a core while idle. A folder that was not yet a run (the
        recorder makes the folder, then its first log) is looked into at every poll."""
        st = os.stat(root)
        sig = (st.st_ino, st.st_mtime_ns)
        key = str(root)
        cached = self._listed.get(key)
        # (an mtime within the last second may not show a change made in the same tick)
        if cached is not None and cached[0] == sig and time.time() - st.st_mtime > 1.0:
            _, runs, pending = cached
            became = [p for p in pending if is_run_dir(p)]
            if became:
                runs = sorted([*runs, *became])
                pending = [p for p in pending if p not in became]
                self._listed[key] = (sig, runs, pending)
            return list(runs)
        runs, pending = [], []
        for p in run_folders(root):
            (runs if is_run_dir(p) else pending).append(p)
        self._listed[key] = (sig, runs, pending)
        return list(runs)

    def _touched(self, path: Path) -> Touch | None:
        """What the run at ``path`` compiled (cached; a growing run is read again at most
        every RECHECK_S); None when it cannot be read."""
        if self.run is not None and self.run.path.resolve() == path.resolve():
            # The shown run's model is already read; recomputed only when it grew.
            stamp = (id(self.run), self.run.model.event_count)
            if self._current_touch is None or self._current_touch[0] != stamp:
                self._current_touch = (stamp, touch_of(self.run, self.roots))
            return self._current_touch[1]
        key = str(path)
        cached = self._touch.get(key)
        now = time.monotonic()
        if cached is not None and now - cached[1] < RECHECK_S:
            return cached[2]
        sig = log_sizes(path)
        if cached is not None and cached[0] == sig:
            self._touch[key] = (sig, now, cached[2])  # unchanged: looked at again in RECHECK_S
            return cached[2]
        try:
            opened = Run(path, skip=NOT_FOR_FINDINGS)
            touch = touch_of(opened, self.roots)
        except (InspectorError, OSError, ValueError, UnicodeDecodeError):
            self._touch[key] = (sig, now, None)  # not read again every poll until it changes
            return None
        # The run chosen is usually the last one looked at: opened once, not twice (a
        # million-event run twice in memory was 270 MB at the first diagnostics).
        self._spare = (path.resolve(), opened)
        self._touch[key] = (sig, now, touch)
        return touch

    def choose(self, runs: list[Path]) -> tuple[Path, str]:
        """The run to show among ``runs`` (newest first), and why."""
        return self._pick(runs, self._touched)

    def _pick(self, runs: list[Path], touched: Callable[[Path], Touch | None]) -> tuple[Path, str]:
        open_files = self.open_files()
        fallback: Path | None = None
        for path in runs[:MAX_CONSIDERED]:
            touch = touched(path)
            if touch is None:
                continue
            if open_files and touch.files & open_files:
                return path, "the newest run that compiled code in an open file"
            if fallback is None and touch.compiled:
                fallback = path
                if not open_files:
                    break  # nothing open: no older run is chosen over it (and none is read)
        if fallback is not None:
            return fallback, "the newest run that compiled something"
        return runs[0], "the newest run (none compiled anything)"

    def cached_choice(self, lookup: Callable[[Path], tuple[T, Touch] | None]) -> tuple[Path, T] | None:
        """The run ``choose`` would show, and what ``lookup`` saved for it, decided by the
        same rule from saved touches alone (``lookup``: findings_cache.peek); None as soon
        as a run it would have to read has nothing saved (then the poll reads the runs)."""
        if self.pinned is not None:
            return None
        try:
            runs = self.candidates()
        except OSError:
            return None
        if not runs:
            return None
        saved: dict[Path, T] = {}

        def touched(path: Path) -> Touch:
            hit = lookup(path)
            if hit is None:
                raise _NotSaved
            saved[path] = hit[0]
            return hit[1]

        try:
            path, _ = self._pick(runs, touched)
        except _NotSaved:
            return None
        return path, saved[path]

    def configure(self, runs_dir: str | None, pinned: str | None) -> bool:
        """Returns True when what is shown may change (the caller polls at once)."""
        if runs_dir == self.runs_dir_setting and pinned == self.pinned:
            return False
        self.runs_dir_setting, self.pinned = runs_dir, pinned
        return True

    # -- following ---------------------------------------------------------------------

    def _wanted(self) -> tuple[Path | None, str | None]:
        if self.pinned is not None:
            candidate = Path(self.pinned)
            if not candidate.is_absolute() and (self.workspace_root / candidate).exists():
                candidate = self.workspace_root / candidate
            try:
                return resolve_run(str(candidate) if candidate.exists() else self.pinned, str(self.root)), None
            except (InspectorError, OSError) as exc:
                return None, f"the selected run {self.pinned} cannot be read: {exc}"
        try:
            runs = self.candidates()
        except OSError as exc:
            return None, f"cannot list runs in {self.root}: {exc}"
        if not runs:
            return None, NO_RUNS.format(roots=", ".join(str(r) for r in self.roots))
        found, self.why = self.choose(runs)
        return found, None

    def _open(self, path: Path) -> tuple[Run | None, str | None]:
        spare, self._spare = self._spare, None
        if spare is not None and spare[0] == path.resolve():
            return spare[1], None
        try:
            return Run(path, skip=NOT_FOR_FINDINGS), None
        except InspectorError as exc:
            return None, str(exc)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            return None, f"cannot read the run {path}: {exc}"

    def _replaced(self, run: Run) -> str | None:
        """Why the run must be read again from the start: a log that shrank (rewritten or
        truncated) or was deleted cannot be followed incrementally."""
        for name, log in run.logs.items():
            try:
                size = os.stat(run.path / name).st_size
            except FileNotFoundError:
                return f"the log {name} of {run.path} was deleted"
            except OSError:
                continue
            if size < log.offset:
                return f"the log {name} of {run.path} was rewritten"
        return None

    def poll(self) -> PollResult:
        try:
            return self._poll()
        finally:
            self._spare = None  # a run looked at but not shown is not kept

    def _poll(self) -> PollResult:
        result = PollResult()
        wanted, problem = self._wanted()
        if problem:
            result.messages.append(problem)
            if problem.startswith("no recorded runs found"):
                result.shown.append(problem)
        current = self.run.path.resolve() if self.run is not None else None
        if wanted is not None and (current is None or wanted.resolve() != current):
            run, problem = self._open(wanted)
            if problem:
                result.messages.append(problem)
            if run is not None or self.run is not None:
                result.changed = result.switched = True
            self.run = run
            if run is not None:
                because = f" ({self.why})" if self.pinned is None and self.why else ""
                result.messages.append(f"showing run {run.path}{because}")
            return result
        if wanted is None:
            if self.run is not None and (self.pinned is not None or not is_run_dir(self.run.path)):
                result.messages.append(f"the run {self.run.path} is gone; nothing to show")
                self.run = None
                result.changed = result.switched = True
            return result
        run = self.run
        assert run is not None
        if not run.path.is_dir():
            result.messages.append(f"the run {run.path} was deleted; nothing to show")
            self.run = None
            result.changed = result.switched = True
            return result
        why = self._replaced(run)
        if why is not None:
            reopened, problem = self._open(run.path)
            result.messages.append(f"{why}; read again from what is on disk")
            if problem:
                result.messages.append(problem)
            self.run = reopened
            result.changed = result.switched = True
            return result
        try:
            new = run.refresh()
        except InspectorError as exc:
            result.messages.append(str(exc))
            self.run = None
            result.changed = result.switched = True
            return result
        except (OSError, ValueError) as exc:
            result.messages.append(f"cannot read {run.path}: {exc}")
            return result
        result.changed = new > 0
        return result

    # -- listing -------------------------------------------------------------------------

    def list_runs(self) -> list[Path]:
        try:
            return self.candidates()
        except OSError:
            return []
