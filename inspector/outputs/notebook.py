"""The answer shown under a notebook cell (``%load_ext dyn_inspect``): what that cell
compiled, built by ``inspector/notebook_report.py`` and rendered by ``dyn_inspect.cell_view``
as HTML and as plain text."""

from __future__ import annotations

from dyn_inspect.inspector.outputs.common import Output


class CellBreak(Output):
    where: str  # "cell [3], line 4" or "train_lib.py:27"
    code: str | None  # the line's text
    headline: str
    gb_id: str | None
    url: str | None
    count: int
    explanation: str | None
    user_stack: list[str]  # outermost first, as `where` is written


class CellRecompile(Output):
    function: str
    where: str  # the function's def line
    compiles: int
    guard: str | None  # the first guard that failed
    fix: str | None  # what to change (a root cause's fix, else the guard's suggestion)
    limit_hit: bool
    guards: list[str]  # every guard failure, in order


class CellFailure(Output):
    where: str
    headline: str
    type: str | None


class CellReport(Output):
    run: str
    cell: int | None  # the execution count
    compiles: int
    graphs: int
    kernels: int
    compile_time_s: float
    breaks: list[CellBreak]
    recompiles: list[CellRecompile]
    failures: list[CellFailure]
    exception: str | None  # what the cell raised ("ValueError: …"), when it did

    @property
    def empty(self) -> bool:
        """Nothing compiled and nothing failed: nothing to show under the cell."""
        return self.compiles == 0 and not self.failures
