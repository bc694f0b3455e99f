"""What a notebook cell compiled, as one ``CellReport``: the counts, breaks, recompiles
(with the fix ``summary`` gives) and failures of the cell's run. The notebook face
(``dyn_inspect.cell_view``) renders it; nothing there decides what to show."""

from __future__ import annotations

from dyn_inspect.engine.schema import Loc
from dyn_inspect.inspector.analysis.causes import describe_fix, recompile_causes
from dyn_inspect.inspector.analysis.recompiles import frames_with_recompiles, recompile_timeline
from dyn_inspect.inspector.locations import def_file_line, from_user, short_loc
from dyn_inspect.inspector.outputs.common import SourceLoc
from dyn_inspect.inspector.outputs.notebook import CellBreak, CellFailure, CellRecompile, CellReport
from dyn_inspect.inspector.reports import summary
from dyn_inspect.inspector.run import Run


def _where(loc: SourceLoc | None) -> str:
    return "?" if loc is None else short_loc(Loc(file=loc.file, line=loc.line))


def _line_text(run: Run, loc: SourceLoc | None) -> str | None:
    """The line's text: from the cell's recorded source (its file is not on disk), else
    what torch recorded with the location."""
    if loc is None:
        return None
    cell = run.model.cells.get(loc.file)
    if cell is not None:
        lines = cell.source.splitlines()
        return lines[loc.line - 1].strip() if 0 < loc.line <= len(lines) else None
    return loc.code.strip() if loc.code else None


def cell_report(run: Run, cell: int | None) -> CellReport:
    s = summary(run)
    m = run.model
    fixes: dict[int, str] = {}
    for cause in recompile_causes(m):
        if cause.fix is not None:
            for f in cause.frames:
                fixes.setdefault(id(f), describe_fix(cause.fix))
    recompiles = []
    for frame in sorted(frames_with_recompiles(m), key=lambda f: -len(f.compiles)):
        entries = [e for e in recompile_timeline(m, frame) if e.is_recompile and e.failures]
        first = entries[0] if entries else None
        fix = fixes.get(id(frame))
        if fix is None and first is not None and first.suggestion is not None and first.suggestion.code:
            fix = first.suggestion.code
        recompiles.append(
            CellRecompile(
                function=frame.name,
                where=def_file_line(frame.filename, frame.firstlineno),
                compiles=frame.compile_count,
                guard=first.failures[0].text if first is not None else None,
                fix=fix,
                limit_hit=frame.recompile_limit is not None,
                guards=[e.failures[0].text for e in entries],
            )
        )
    return CellReport(
        run=s.run,
        cell=cell,
        compiles=s.compiles,
        graphs=s.graphs,
        kernels=s.kernels,
        compile_time_s=s.compile_time_s,
        breaks=[
            CellBreak(
                where=_where(b.user_loc),
                code=_line_text(run, b.user_loc),
                headline=b.headline,
                gb_id=b.gb_id,
                url=b.url,
                count=b.count,
                explanation=b.explanation,
                user_stack=[_where(f) for f in from_user([f for f in b.user_stack if f is not None])],
            )
            for b in s.breaks
        ],
        recompiles=recompiles,
        failures=[CellFailure(where=_where(f.user_loc), headline=f.headline, type=f.type) for f in s.compile_failures],
        exception=_exception(run),
    )


def _exception(run: Run) -> str | None:
    for p in run.model.processes.values():
        if p.end is not None and p.end.exception is not None:
            e = p.end.exception
            return f"{e.type}: {e.message}" if e.message else e.type
    return None
