"""Ranks of a distributed run: one row per rank — node, compiles, graph breaks, recompiles,
kernels, compile time — with the cells that stand out from the other ranks highlighted,
and the rank's behaviour group (``inspector.ranks.rank_behaviours``): identical to the
reference ranks, or how it differs ("extra graph break … at train.py:88")."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import DataTable

from dyn_inspect.inspector.model import RunModel
from dyn_inspect.inspector.ranks import (
    COMPILE_TIME_MIN_GAP_S,
    COMPILE_TIME_RATIO,
    Behaviour,
    format_ranks,
    node_of,
    rank_behaviours,
    rank_profiles,
)
from dyn_inspect.tui.views.base import COMMON_KEYS, Context, SearchHit, matches
from dyn_inspect.tui.views.table import Cell, SplitView
from dyn_inspect.tui.widgets import DetailPane

OUTLIER = "bold red"


@dataclass(frozen=True)
class RankRow:
    rank: int
    node: int | None
    compiles: int
    breaks: int  # hits
    recompiles: int
    kernels: int
    compile_time_s: float
    group: int  # index into the behaviours (0: the reference)


def rank_rows(model: RunModel) -> tuple[list[RankRow], list[Behaviour]]:
    """Per rank the counts the table shows, and the behaviour groups they fall in."""
    profiles = rank_profiles(model)
    behaviours = rank_behaviours(model, profiles)
    group_of = {r: i for i, b in enumerate(behaviours) for r in b.ranks}
    log_rank = {log: r for r, p in profiles.items() for log in p.logs}
    hits: dict[int, int] = dict.fromkeys(profiles, 0)
    for group in model.breaks.values():
        for log, _ in group.hits:
            r = log_rank.get(log)
            if r is not None:
                hits[r] += 1
    nodes = {p.rank: node_of(p) for p in model.processes.values() if p.rank is not None}
    rows = [
        RankRow(
            r,
            nodes.get(r),
            len(p.compiles),
            hits[r],
            sum(p.recompiles.values()),
            sum(len(c.kernels) for c in p.compiles.values()),
            p.compile_time_s,
            group_of.get(r, 0),
        )
        for r, p in sorted(profiles.items())
    ]
    return rows, behaviours


def _outliers(values: list[int]) -> set[int]:
    """Indexes whose count differs from the most common one (SPMD ranks should agree; a tie
    is settled like the reference behaviour group: the lowest rank's value)."""
    if len(values) < 2:
        return set()
    counts = Counter(values)
    best = max(counts.values())
    usual = next(v for v in values if counts[v] == best)
    return {i for i, v in enumerate(values) if v != usual}


def _slow(times: list[float]) -> set[int]:
    """The compile-time rule of the divergence report: over ×1.5 and +1 s the fastest."""
    if not times:
        return set()
    fastest = min(times)
    return {i for i, t in enumerate(times) if t - fastest > COMPILE_TIME_MIN_GAP_S and (fastest <= 0 or t / fastest > COMPILE_TIME_RATIO)}


class RanksView(SplitView):
    view_id = "ranks"
    TABLE_ID = "ranks-table"
    DETAIL_ID = "rank-detail"
    COLUMNS = (
        ("Rank", "rank"),
        ("Node", "node"),
        ("Compiles", "compiles"),
        ("Breaks", "breaks"),
        ("Recompiles", "recompiles"),
        ("Kernels", "kernels"),
        ("Compile time", "time"),
        ("Behaviour", "group"),
    )
    EMPTY = "Not a distributed run: no ranks."
    HELP = (
        """
## Ranks

One row per rank of a distributed run: its node, compiles, graph-break hits, recompiles,
kernels and compile time. A count that differs from most ranks', and a compile time
far above the fastest rank's (×1.5 and +1 s), are **highlighted**. *Behaviour*: `=` for the
ranks that compiled like the majority, else how the rank differs.

- **↑/↓** select a rank; the right pane says how its behaviour group differs
"""
        + COMMON_KEYS
    )

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._events = -1
        self._rows: dict[str, RankRow] = {}
        self._behaviours: list[Behaviour] = []
        self._shown: str | None = None

    def tab_label(self, ctx: Context) -> str:
        return f"Ranks ({len(ctx.run.model.ranks())})"

    def sync(self, ctx: Context) -> None:
        super().sync(ctx)
        model = ctx.run.model
        if model.event_count == self._events:
            return  # nothing new: the table is current (a 256-rank run is not recomputed per poll)
        self._events = model.event_count
        rows, self._behaviours = rank_rows(model)
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear()
        self._rows = {str(r.rank): r for r in rows}
        columns = {
            "compiles": _outliers([r.compiles for r in rows]),
            "breaks": _outliers([r.breaks for r in rows]),
            "recompiles": _outliers([r.recompiles for r in rows]),
            "kernels": _outliers([r.kernels for r in rows]),
            "time": _slow([r.compile_time_s for r in rows]),
        }

        def num(i: int, column: str, value: int) -> Cell:
            return Cell(str(value), value, style=OUTLIER if i in columns[column] else "", justify="right")

        for i, r in enumerate(rows):
            b = self._behaviours[r.group] if self._behaviours else None
            what = "=" if b is None or b.reference else (b.differences[0] if b.differences else "differs")
            what = what if len(what) <= 72 else what[:71] + "…"  # the pane has it whole
            table.add_row(
                Cell(str(r.rank), r.rank, justify="right"),
                Cell("" if r.node is None else str(r.node), -1 if r.node is None else r.node, justify="right"),
                num(i, "compiles", r.compiles),
                num(i, "breaks", r.breaks),
                num(i, "recompiles", r.recompiles),
                num(i, "kernels", r.kernels),
                Cell(f"{r.compile_time_s:.2f}s", r.compile_time_s, style=OUTLIER if i in columns["time"] else "", justify="right"),
                Cell(what, (r.group, r.rank), style="" if what == "=" else OUTLIER),
                key=str(r.rank),
            )
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1), animate=False)
            self._show(str(rows[min(cursor, len(rows) - 1)].rank))

    def _show(self, key: str) -> None:
        row = self._rows.get(key)
        if row is None or not self._behaviours:
            return
        self._shown = key
        b = self._behaviours[row.group]
        ref = self._behaviours[0]
        parts = [Text.assemble((f"rank {row.rank}", "bold"), (f"  node {row.node}" if row.node is not None else "", "dim"))]
        if b.reference:
            parts.append(Text(f"compiled like {format_ranks(b.ranks)} (the reference group)"))
        else:
            parts.append(Text(f"behaves like {format_ranks(b.ranks)}; differs from {format_ranks(ref.ranks)}:", style="bold red"))
            parts.extend(Text(f"  • {d}") for d in b.differences)
        parts.append(
            Text(
                f"{len(self._behaviours)} behaviour group{'s' if len(self._behaviours) != 1 else ''} in "
                f"{format_ranks(r for bb in self._behaviours for r in bb.ranks)}",
                style="dim",
            )
        )
        self.query_one(DetailPane).show(*parts)

    def search(self, ctx: Context, query: str) -> list[SearchHit]:
        hits = []
        for b in rank_behaviours(ctx.run.model) if len(ctx.run.model.ranks()) > 1 else []:
            if not b.reference and matches(query, *b.differences):
                hits.append(SearchHit(self.view_id, str(b.ranks[0]), f"ranks     {b.describe()}"))
        return hits

    def reveal(self, key: str) -> None:
        self.reveal_row(key, key in self._rows)
