"""Which shapes are dynamic: per compile, the symbols torch created (dim, example value,
range, the user line), the dims it specialized back to a constant and the line that did it,
the shape guards and the sizes the guard tree accepts (``inspector/analysis/shapes.py``)."""

from __future__ import annotations

from dyn_inspect.inspector.analysis.shapes import CompileShapes, compile_shapes, readable_source, shapes_of
from dyn_inspect.inspector.locations import file_line
from dyn_inspect.inspector.model import CompileInfo, RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import source_loc
from dyn_inspect.inspector.run import Run


def compile_shapes_output(cs: CompileShapes, cwd: str | None = None) -> typed.CompileShapes:
    """One compile's shapes; a specialization's ``text`` names its line relative to ``cwd``
    (default: this process's)."""
    return typed.CompileShapes(
        compile_id=cs.compile.cid,
        log=cs.compile.log,
        function=cs.function,
        automatic_dynamic=cs.automatic_dynamic,
        symbols=[
            typed.ShapeSymbol(
                symbol=s.symbol,
                name=s.name,
                source=s.source,
                value=s.value,
                range=s.range,
                loc=source_loc(s.loc),
                specialized=s.specialized is not None,
                static_value=s.specialized.value if s.specialized is not None else None,
                static_loc=source_loc(s.specialized.loc) if s.specialized is not None else None,
            )
            for s in cs.symbols
        ],
        specializations=[
            typed.ShapeSpecialization(
                symbol=s.symbol,
                name=s.name,
                source=s.source,
                value=s.value,
                reason=s.reason,
                loc=source_loc(s.loc),
                text=s.describe(file_line(s.loc.file, s.loc.line, cwd) if s.loc else None),
            )
            for s in cs.specializations
        ],
        guards=[typed.ShapeGuard(expr=g.expr, readable=g.readable, loc=source_loc(g.loc), installed=g.installed) for g in cs.guards],
        accepts=[
            typed.DimAccepted(source=d.source, name=readable_source(d.source), low=d.low, high=d.high, dynamic=d.dynamic, text=d.text)
            for d in cs.accepts
        ],
    )


def shapes_report(run: Run) -> typed.ShapesReport:
    """What ``shapes`` prints: every compile's shapes, with the shape guards torch installed
    (read from each compile's guard tree)."""
    return typed.ShapesReport(run=str(run.path), compiles=run_shapes(run.model, run=run))


def run_shapes(model: RunModel, cwd: str | None = None, run: Run | None = None) -> list[typed.CompileShapes]:
    """Every compile's shapes, lines relative to ``cwd`` (the bundle's pages: the run's);
    with ``run``, which shape guards torch installed (read from each guard tree)."""
    return [compile_shapes_output(cs, cwd) for cs in compile_shapes(model, run)]


def compile_shapes_of(c: CompileInfo, cwd: str | None = None) -> typed.CompileShapes:
    """One compile's shapes (the timeline's detail), as ``shapes --json`` gives them."""
    return compile_shapes_output(shapes_of(c), cwd)
