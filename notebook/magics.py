"""The notebook face: ``%%dyn_inspect`` records one cell, ``%dyn_inspect on|off`` every
cell from now on, in the kernel's own process, with the recorder the launcher installs.

The cell runs exactly as it would without us: ``%%dyn_inspect`` is not a cell magic but an
input transformer that blanks its own line (the cell's line numbers stay those the user
sees), and recording starts and stops in IPython's ``pre_run_cell``/``post_run_cell``
events — so the cell's output, its value and its exception are IPython's own. Each recorded
cell is a run of its own (``.dyn-inspect/runs/<id>``, ``latest`` points at it) that every
face reads; a cell that compiled nothing leaves no run and shows nothing.
"""

from __future__ import annotations

import linecache
import os
import sys
import time
from pathlib import Path
from typing import Any

MAGIC = "dyn_inspect"
CELL_MAGIC_LINE = f"%%{MAGIC}"

_session: _Session | None = None


def _records_cell(raw_cell: str) -> bool:
    first = raw_cell.lstrip().split("\n", 1)[0].strip()
    return first == CELL_MAGIC_LINE or first.startswith(CELL_MAGIC_LINE + " ")


def blank_cell_magic(lines: list[str]) -> list[str]:
    """IPython input transformer: ``%%dyn_inspect`` becomes an empty line (not removed: the
    cell's lines keep the numbers the user sees)."""
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if line.strip() == CELL_MAGIC_LINE or line.strip().startswith(CELL_MAGIC_LINE + " "):
            return lines[:i] + ["\n"] + lines[i + 1 :]
        break
    return lines


class _Segment:
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.started = time.time()


class _Session:
    """What the extension holds in one kernel: the mode and the cell being recorded."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.always = False
        self.segment: _Segment | None = None

    # -- IPython events ----------------------------------------------------------------

    def pre_run_cell(self, info: Any) -> None:
        if not (self.always or _records_cell(getattr(info, "raw_cell", "") or "")):
            return
        try:
            self._start()
        except Exception as exc:  # noqa: BLE001 - recording must never stop the cell
            sys.stderr.write(f"dyn-inspect: not recording this cell ({exc})\n")

    def post_run_cell(self, result: Any) -> None:
        segment, self.segment = self.segment, None
        if segment is None:
            return
        try:
            report = self._end(segment, result)
        except Exception as exc:  # noqa: BLE001 - the cell's own outcome stands
            sys.stderr.write(f"dyn-inspect: could not read this cell's recording ({exc})\n")
            return
        if report is not None and not report.empty:
            from IPython.display import display

            from dyn_inspect.cell_view import CellView

            display(CellView(report))

    # -- segments ----------------------------------------------------------------------

    def _start(self) -> None:
        import torch  # noqa: F401 - the recorder installs on torch (the cell compiles with it)

        from dyn_inspect.engine import eventlog, recorder

        run_dir = eventlog.new_run_dir(eventlog.runs_root(None), point=False)
        rec = recorder.current()
        if rec is None:
            recorder.activate(run_dir)
        else:
            rec.start_segment(run_dir)
        self.segment = _Segment(run_dir)

    def _end(self, segment: _Segment, result: Any) -> Any:
        from dyn_inspect.engine import eventlog, recorder
        from dyn_inspect.engine.launcher import TOOL_VERSION, launcher_log_name
        from dyn_inspect.engine.schema import RunEnd, RunStart

        rec = recorder.current()
        error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        number = getattr(result, "execution_count", None)
        if rec is None:
            return None
        rec.flush()
        if rec._log is not None:  # noqa: SLF001 - the segment logged: say which cells its files are
            rec.write_events(_cells(self.shell))
        if not rec.end_segment(error):
            eventlog.remove_run_dir(segment.run_dir)  # nothing compiled: no run
            return None
        log = eventlog.EventLog(segment.run_dir, launcher_log_name(False))
        where = _notebook_path(self.shell)
        log.write(
            RunStart(
                t=segment.started,
                command=[where or "<notebook>", f"cell [{number}]"],
                cwd=os.getcwd(),
                mode="notebook",
                tool_version=TOOL_VERSION,
            )
        )
        log.write(RunEnd(exit_code=1 if error is not None else 0, duration_s=time.time() - segment.started))
        log.close()
        eventlog.point_latest(segment.run_dir.parent, segment.run_dir)
        from dyn_inspect.inspector.notebook_report import cell_report
        from dyn_inspect.inspector.run import open_run

        return cell_report(open_run(segment.run_dir), number)


def _cells(shell: Any) -> list[Any]:
    """``notebook_cell`` events for the cells this kernel has run so far: a recorded cell
    calls functions that earlier cells defined, and their locations are cells too."""
    from dyn_inspect.engine.schema import NotebookCell

    names = getattr(getattr(shell, "compile", None), "_filename_map", {}) or {}
    out = []
    for file, number in list(names.items()):
        if not isinstance(number, int):
            continue
        entry = linecache.cache.get(file)
        source = "".join(entry[2]) if entry and len(entry) > 2 and entry[2] else ""
        out.append(NotebookCell(file=file, cell=number, source=source))
    return out


def _notebook_path(shell: Any) -> str | None:
    """The notebook's file where the frontend says it (VS Code's ``__vsc_ipynb_file__``,
    Jupyter server's ``JPY_SESSION_NAME``)."""
    ns = getattr(shell, "user_ns", {}) or {}
    path = ns.get("__vsc_ipynb_file__") or os.environ.get("JPY_SESSION_NAME")
    return str(path) if path else None


# -- the line magic and loading ------------------------------------------------------------


def dyn_inspect_magic(line: str) -> None:
    """``%dyn_inspect on`` records every cell from the next one on; ``off`` stops;
    ``%%dyn_inspect`` on a cell's first line records that cell."""
    session = _session
    if session is None:
        return
    word = line.strip().lower()
    if word == "on":
        session.always = True
        print("dyn-inspect: recording every cell (`%dyn_inspect off` to stop)")
    elif word == "off":
        session.always = False
        print("dyn-inspect: not recording cells (`%%dyn_inspect` records one)")
    else:
        state = "every cell" if session.always else "cells that start with %%dyn_inspect"
        print(f"dyn-inspect: recording {state}; usage: %dyn_inspect on|off")


def load(shell: Any) -> None:
    global _session
    if _session is not None:
        return
    _session = _Session(shell)
    shell.input_transformers_cleanup.append(blank_cell_magic)
    shell.events.register("pre_run_cell", _session.pre_run_cell)
    shell.events.register("post_run_cell", _session.post_run_cell)
    shell.register_magic_function(dyn_inspect_magic, "line", MAGIC)


def unload(shell: Any) -> None:
    global _session
    if _session is None:
        return
    if blank_cell_magic in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(blank_cell_magic)
    shell.events.unregister("pre_run_cell", _session.pre_run_cell)
    shell.events.unregister("post_run_cell", _session.post_run_cell)
    _session = None
