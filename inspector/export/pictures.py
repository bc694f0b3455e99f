"""The export's graph pictures: SVGs drawn by Graphviz in parallel under one wall-clock
budget for all of them.

Graphviz's layout time grows much faster than a graph's size (a 330-node joint graph takes
seconds, some 240-node ones more than a minute), so graphs above ``MAX_NODES`` are not laid
out at all, the smallest are drawn first, and every ``dot`` still running when the budget
is spent is killed. What was not drawn says why; its DOT file is in the bundle either way.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from dyn_inspect.inspector.analysis import graphs as fx_graphs

# Above this many nodes a graph is not laid out (its DOT is kept): the 100-node graphs of a
# tiny model draw in a quarter second, its 240-node forward and 530-node joint graph take minutes.
MAX_NODES = 200
# Wall-clock seconds for all of an export's pictures together: with the interpreter's start
# and the rest of the bundle (about 4 s for a tiny Llama on 2 shared cores) the export stays
# well under 10 s.
BUDGET_S = 3.0


@dataclass(frozen=True)
class PictureOptions:
    """``draw`` False: no SVG at all (``--no-pictures``)."""

    draw: bool = True
    budget_s: float = BUDGET_S
    max_nodes: int = MAX_NODES


@dataclass
class Job:
    """One graph to draw: ``key`` is its DOT file's path in the bundle."""

    key: str
    dot: str
    nodes: int


@dataclass
class Drawn:
    svg: str | None
    why: str | None  # why there is no SVG


def _workers() -> int:
    # dot is single-threaded and CPU-bound: one per core, a few at most.
    return max(1, min(4, os.cpu_count() or 1))


def draw_all(jobs: list[Job], options: PictureOptions) -> dict[str, Drawn]:
    """Each job's SVG or the reason it has none, within ``options.budget_s`` in all."""
    out: dict[str, Drawn] = {}
    todo: list[Job] = []
    for job in jobs:
        if job.nodes > options.max_nodes:
            out[job.key] = Drawn(None, f"not drawn: {job.nodes} nodes (pictures up to {options.max_nodes}); open {job.key}")
        else:
            todo.append(job)
    if not todo:
        return out
    # NaN or a negative budget draws nothing; an infinite one waits at most an hour.
    budget = min(options.budget_s, 3600.0) if options.budget_s > 0 else 0.0
    deadline = time.monotonic() + budget
    spent = f"not drawn: the picture budget ({budget:g}s for all graphs) was spent; open {{}}"

    def draw(job: Job) -> Drawn:
        left = deadline - time.monotonic()
        if left <= 0:
            return Drawn(None, spent.format(job.key))
        svg, why = fx_graphs.render_svg(job.dot, job.nodes, timeout_s=left)
        if svg is None and time.monotonic() >= deadline:
            return Drawn(None, spent.format(job.key))  # killed at the deadline
        return Drawn(svg, why)

    # Smallest first: the most pictures for the budget.
    todo.sort(key=lambda j: j.nodes)
    with ThreadPoolExecutor(max_workers=_workers(), thread_name_prefix="dyn-inspect-dot") as pool:
        for job, drawn in zip(todo, pool.map(draw, todo), strict=True):
            out[job.key] = drawn
    return out
