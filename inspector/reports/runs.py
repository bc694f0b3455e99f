"""Which runs are recorded: per run when it started, the command, how it ended and its
counts (breaks, recompiles, kernels, compile time); an unreadable run with why."""

from __future__ import annotations

from pathlib import Path

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.outputs import Counts
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs.lsp import LspRunInfo
from dyn_inspect.inspector.run import Run


def _command(r: Run) -> list[str]:
    m = r.model
    start = next((p.start for p in m.processes.values() if p.start), None)
    return list(m.run_start.command if m.run_start else (start.argv if start else []))


def run_row(path: Path, latest: Path | None) -> typed.RunRow:
    try:
        r = Run(path)
    except InspectorError as exc:
        return typed.RunRow(id=path.name, path=str(path), latest=path == latest, status="unreadable", error=str(exc))
    m = r.model
    start = next((p.start for p in m.processes.values() if p.start), None)
    started = m.run_start.t if m.run_start and m.run_start.t else (start.t if start else None)
    return typed.RunRow(
        id=path.name,
        path=str(path),
        latest=path == latest,
        started=started,
        command=_command(r),
        status=m.status,
        exit_code=m.exit_code,
        duration_s=m.run_end.duration_s if m.run_end else None,
        processes=len(m.processes),
        frames=len(m.frames),
        compiles=m.compile_count(),
        graph_breaks=Counts(unique=len(m.breaks), total=m.total_break_hits()),
        recompiles=len(m.recompiles),
        recompile_limit_hits=len(m.recompile_limits),
        kernels=len(m.kernels),
        compile_time_s=round(m.total_compile_time(), 4),
        problems=len(r.problems),
    )


def runs_report(runs_dir: Path, paths: list[Path], latest: Path | None) -> typed.RunsReport:
    """What ``runs --json`` prints: a row per run of ``paths`` (``list_runs``), oldest first."""
    return typed.RunsReport(runs_dir=str(runs_dir), runs=[run_row(p, latest) for p in paths])


def run_info(r: Run) -> LspRunInfo:
    """A run as the editor lists it (``dynInspect.listRuns``): the counts ``runs`` gives."""
    m = r.model
    return LspRunInfo(
        path=str(r.path), id=r.path.name, command=" ".join(_command(r)), breaks=len(m.breaks), recompiles=len(m.recompiles), status=m.status
    )
