"""Opening a run directory: finding it, reading its logs, following it while it grows.

``open_run(None)`` is the latest run under ``./.dyn-inspect/runs``; ``open_run(path)``
accepts a run directory, a runs root (→ its latest) or a run id. ``Run.refresh()`` reads
only what was appended since the last call and feeds it to the ``RunModel``.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Collection, Iterator
from pathlib import Path

from dyn_inspect.engine.eventlog import LATEST, runs_root
from dyn_inspect.engine.schema import Blob, Event, UnknownEvent
from dyn_inspect.inspector import index
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.model import RunModel, handler_for
from dyn_inspect.inspector.reader import LogFile, Problem, blob_readable, list_logs, read_blob, safe_text
from dyn_inspect.inspector.source_files import allow_model_roots


def is_run_dir(path: Path) -> bool:
    return path.is_dir() and (any(path.glob("*.jsonl")) or (path / "blobs").is_dir())


def run_folders(root: Path) -> list[Path]:
    """The folders directly under a runs root that may hold a run, sorted (never a
    symlink: ``latest`` points at one of them). Raises OSError when ``root`` cannot be read."""
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())


def list_runs(root: Path) -> list[Path]:
    """Run directories under a runs root, oldest first (names sort by start time)."""
    if not root.is_dir():
        return []
    return [p for p in run_folders(root) if is_run_dir(p)]


def latest_run(root: Path) -> Path | None:
    link = root / LATEST
    if link.exists():
        target = link.resolve()
        if is_run_dir(target):
            return target
    runs = list_runs(root)
    return runs[-1] if runs else None


def resolve_run(arg: str | os.PathLike[str] | None, runs_dir: str | None = None) -> Path:
    root = runs_root(runs_dir)
    if arg is None:
        found = latest_run(root)
        if found is None:
            raise InspectorError(f"no runs in {root} — record one with `dyn-inspect your_script.py`")
        return found
    path = Path(arg)
    if is_run_dir(path):
        return path.resolve()
    if path.is_dir():
        found = latest_run(path)
        if found is not None:
            return found
        if (path / ".dyn-inspect" / "runs").is_dir():
            found = latest_run(path / ".dyn-inspect" / "runs")
            if found is not None:
                return found
        raise InspectorError(f"{path} is not a dyn-inspect run (no event logs in it)")
    candidate = root / str(arg)
    if is_run_dir(candidate):
        return candidate.resolve()
    raise InspectorError(f"no run at {arg}")


def refuse_without_event_logs(path: str | os.PathLike[str], logs: dict[str, LogFile]) -> None:
    """Raise ``InspectorError`` when the logs read from ``path`` make no run: there are none,
    or none is an event log (the first one's problem says why). Same answer from every
    command: files that are not event logs make no run."""
    if not logs:
        raise InspectorError(f"{path} holds no event logs (an empty or unfinished run)")
    if all(log.rejected for log in logs.values()):
        first = next(p for log in logs.values() for p in log.problems[:1])
        raise InspectorError(f"{path} is not a dyn-inspect run: none of its logs is an event log ({first})")


FREEZE_ABOVE = 10_000  # events: a model this large is moved out of the collector's sight


class Run:
    """A run directory and the model built from it (incrementally).

    ``skip``: event kinds the caller never reads (``index.NOT_FOR_FINDINGS`` for the LSP):
    when the run opens from its index they are not decoded. ``use_index=False`` reads the
    logs only (and writes no index); its default is on unless ``DYN_INSPECT_NO_INDEX`` is set.
    ``recorder``: this process recorded the run (the launcher's end-of-run summary, the live
    TUI): its index goes into the run; any other reader's goes to the user cache, never
    into a run it did not record (``inspector/index.py``).
    """

    def __init__(
        self, path: str | os.PathLike[str], skip: Collection[str] = (), use_index: bool | None = None, recorder: bool = False
    ) -> None:
        if use_index is None:
            use_index = not os.environ.get(index.NO_INDEX_ENV)
        self.path = Path(path)
        self.recorder = recorder
        self.logs: dict[str, LogFile] = {}
        self.model = RunModel()
        self.unknown: list[UnknownEvent] = []
        self.kept = index.Kept()
        self.index_id: bytes | None = None  # which index it opened from (its header's MAC)
        self.from_index = use_index and index.load(self, skip)
        # Events read from the logs on opening (all of them without an index; what was
        # appended after it with one): 0 means the model is exactly the index's.
        self.read_on_open = tail = self.refresh()
        if self.model.event_count > FREEZE_ABOVE:
            # The model is long-lived and holds no cycles: without this, every later full
            # collection walks it (a first summary of a 256-rank run lost 0.3 s there).
            gc.freeze()
        refuse_without_event_logs(path, self.logs)
        if use_index and self.model.finished and (tail or not self.from_index):
            # A finished run read (partly) from its logs: the next open need not.
            self.write_index()

    def write_index(self) -> Path | None:
        """Save the index (best effort: None when it cannot be written)."""
        return index.write(self)

    def refresh(self) -> int:
        """Read what was appended since the last call; returns the number of new events."""
        new = 0
        kept = self.kept if self.kept.complete else None
        # Building creates many small objects and no cycles: the cyclic GC's repeated full
        # passes over a growing heap were a third of opening a large run.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            for file in list_logs(self.path):
                name = file.name
                log = self.logs.get(name)
                if log is None:
                    log = self.logs[name] = LogFile(file)
                apply = self.model.apply
                log_no = kept.number(name) if kept is not None else 0
                for event in log.iter_new(light=True):
                    new += 1
                    cls = type(event)
                    if cls is UnknownEvent:
                        self.unknown.append(event)  # type: ignore[arg-type]
                    else:
                        apply(event, name)  # type: ignore[arg-type]
                    # Kinds the model only counts (chromium, raw: no handler) are not kept:
                    # the index stores their counts, not the events.
                    if kept is not None and (cls is UnknownEvent or handler_for(cls) is not None):
                        kept.add(index.kind_of(event), event, log_no)
        finally:
            if gc_was_enabled:
                gc.enable()
        allow_model_roots(self.model, self.path)  # its recorded directory: where its source files are
        return new

    def events(self, log_name: str | None = None) -> Iterator[tuple[str, Event | UnknownEvent]]:
        """Re-read every event from disk (for exports); does not touch the model."""
        for file in list_logs(self.path):
            if log_name is not None and file.name != log_name:
                continue
            reader = LogFile(file)
            for event in reader.poll():
                yield file.name, event

    @property
    def problems(self) -> list[Problem]:
        out: list[Problem] = []
        for log in self.logs.values():
            out.extend(log.problems)
            tail = log.unterminated_tail()
            if tail and self.model.finished:
                out.append(Problem(log.path.name, log.line_no + 1, f"truncated last line ({tail} bytes) skipped"))
        return out

    def blob_text(self, blob: Blob | None) -> str:
        """A payload's text, loaded on demand; '' when missing (listed as a problem)."""
        if blob is None:
            return ""
        data = read_blob(self.path, blob)  # only the store's own digests, bounded
        return "" if data is None else safe_text(data.decode("utf-8", "replace"))  # no terminal escapes

    def blob_exists(self, blob: Blob) -> bool:
        return blob_readable(self.path, blob)


def open_run(arg: str | os.PathLike[str] | None = None, runs_dir: str | None = None) -> Run:
    return Run(resolve_run(arg, runs_dir))
