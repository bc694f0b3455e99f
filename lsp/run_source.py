"""Which run the server shows, and following it while it grows.

The run is the one pinned by the ``run`` setting or ``dynInspect.selectRun``, else the
latest under the runs directory (the ``runsDir`` setting, else ``$DYN_INSPECT_RUNS_DIR``,
else ``<workspace>/.dyn-inspect/runs``). ``poll()`` is called every ``POLL_S`` from a worker
thread: it switches to a newer run when ``latest`` moves, reads what was appended to the
current run (``Run.refresh`` is incremental), reopens a run whose log was replaced or
truncated, and lets go of a run whose directory was deleted. Problems are returned as
messages; nothing here raises to the caller and nothing from a log is executed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dyn_inspect.engine.eventlog import runs_root
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.run import Run, is_run_dir, latest_run, list_runs, resolve_run

POLL_S = 0.05  # a poll is a few stats and a read of what was appended: cheap


@dataclass
class PollResult:
    changed: bool = False  # the model (or the run shown) changed: rebuild and republish
    switched: bool = False  # another run is shown now
    messages: list[str] = field(default_factory=list)


class RunSource:
    def __init__(self, workspace_root: Path) -> None:
        self.workspace_root = workspace_root
        self.runs_dir_setting: str | None = None
        self.pinned: str | None = None  # a run dir or id; None follows the latest
        self.run: Run | None = None

    # -- configuration ---------------------------------------------------------------

    @property
    def root(self) -> Path:
        return runs_root(self.runs_dir_setting, cwd=self.workspace_root)

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
            found = latest_run(self.root)
        except OSError as exc:
            return None, f"cannot list runs in {self.root}: {exc}"
        if found is None:
            return None, f"no runs in {self.root} yet — record one with `dyn-inspect your_script.py`"
        return found, None

    def _open(self, path: Path) -> tuple[Run | None, str | None]:
        try:
            return Run(path), None
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
        result = PollResult()
        wanted, problem = self._wanted()
        if problem:
            result.messages.append(problem)
        current = self.run.path.resolve() if self.run is not None else None
        if wanted is not None and (current is None or wanted.resolve() != current):
            run, problem = self._open(wanted)
            if problem:
                result.messages.append(problem)
            if run is not None or self.run is not None:
                result.changed = result.switched = True
            self.run = run
            if run is not None:
                result.messages.append(f"showing run {run.path}")
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
            return list(reversed(list_runs(self.root)))
        except OSError:
            return []


@dataclass
class RunListing:
    path: str
    id: str
    command: str
    breaks: int
    recompiles: int
    status: str

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "id": self.id,
            "command": self.command,
            "breaks": self.breaks,
            "recompiles": self.recompiles,
            "status": self.status,
        }


class ListingCache:
    """``dynInspect.listRuns`` rows, re-read only when a run's logs changed size."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[tuple[tuple[str, int], ...], RunListing]] = {}

    @staticmethod
    def _signature(path: Path) -> tuple[tuple[str, int], ...]:
        try:
            names = sorted(n for n in os.listdir(path) if n.endswith(".jsonl"))
        except OSError:
            return ()
        sig = []
        for n in names:
            try:
                sig.append((n, os.stat(path / n).st_size))
            except OSError:
                pass
        return tuple(sig)

    def row(self, path: Path, current: Run | None) -> RunListing | None:
        if current is not None and current.path.resolve() == path.resolve():
            return listing_of(current)
        sig = self._signature(path)
        cached = self._rows.get(str(path))
        if cached is not None and cached[0] == sig:
            return cached[1]
        try:
            row = listing_of(Run(path))
        except (InspectorError, OSError, ValueError):
            return None
        self._rows[str(path)] = (sig, row)
        return row


def listing_of(run: Run) -> RunListing:
    m = run.model
    command: list[str] = []
    if m.run_start is not None:
        command = list(m.run_start.command)
    else:
        start = next((p.start for p in m.processes.values() if p.start), None)
        command = list(start.argv) if start else []
    return RunListing(
        path=str(run.path),
        id=run.path.name,
        command=" ".join(command),
        breaks=len(m.breaks),
        recompiles=len(m.recompiles),
        status=m.status,
    )
