"""DDPOptimizer's splits: the graphs ``torch.compile(DDP(model))`` cut at DDP's bucket
boundaries, said as what they are — not graph breaks of the user's code.

Dynamo hands a graph captured inside DDP's forward to DDPOptimizer, which cuts it where
DDP's gradient buckets end (``bucket_cap_mb``; a smaller first bucket), so each bucket's
all-reduce can overlap the rest of the backward. Torch records the cut as
``optimize_ddp_split_*`` (``engine/normalizers/ddp.py``). One ``DdpSplitSite`` is a frame
split the same way on a set of ranks: its graphs' parameter bytes in graph order, the line
each graph after the first begins at, the caps. Ranks that split the same frame differently
are separate sites (their buckets differ: another model size or cap on that rank).

Public API: ``ddp_splits(model) -> list[DdpSplitSite]``, ``megabytes(n)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dyn_inspect.engine.normalizers.locations import is_library_file
from dyn_inspect.engine.schema import Loc
from dyn_inspect.inspector.locations import file_line, nearest_user_frame
from dyn_inspect.inspector.model import CompileInfo, RunModel

MIB = 1024 * 1024  # DDP's "mb" (bucket_cap_mb * 1024 * 1024)


def megabytes(n: int) -> str:
    """Bytes in DDP's unit: "1.00 MB" for 1,050,624 (a Linear(512, 512)'s parameters)."""
    return f"{n / MIB:.2f} MB"


def _cap_mb(n: int) -> str:
    return f"{n / MIB:g}"


@dataclass(frozen=True)
class DdpBucket:
    """One graph of a split: DDP's bucket of parameters it holds."""

    name: str  # torch's submodule name (submod_0, …)
    param_bytes: int | None  # None: a parameter's shape was not concrete
    params: int
    loc: Loc | None  # its first source line: where this bucket's graph begins


@dataclass
class DdpSplitSite:
    """A frame DDPOptimizer split into several graphs, the same way on ``ranks``."""

    function: str
    file: str
    line: int  # the function's def line
    buckets: list[DdpBucket]
    bucket_bytes_cap: int | None
    first_bucket_bytes: int | None
    called_at: Loc | None = None  # set when the frame is library code: the user's call
    ranks: list[int] = field(default_factory=list)
    compile_ids: list[str] = field(default_factory=list)

    @property
    def graphs(self) -> int:
        return len(self.buckets)

    @property
    def boundaries(self) -> list[Loc]:
        """Where each graph after the first begins: the lines DDP split at."""
        return [b.loc for b in self.buckets[1:] if b.loc is not None]

    @property
    def caps(self) -> str:
        """ "bucket_cap_mb=2, first bucket 1 MB", or why the caps are not known."""
        if self.bucket_bytes_cap is None:
            return "bucket cap not recorded"
        text = f"bucket_cap_mb={_cap_mb(self.bucket_bytes_cap)}"
        if self.first_bucket_bytes is not None and self.first_bucket_bytes != self.bucket_bytes_cap:
            # DDP all-reduces the graph's last bucket first, under a smaller cap of its own
            text += f", first bucket {_cap_mb(self.first_bucket_bytes)} MB"
        return text

    @property
    def sizes(self) -> str:
        """The graphs' parameter bytes in graph order, equal neighbours counted once:
        "2.00 MB ×2, 1.00 MB"."""
        runs: list[list[Any]] = []
        for b in self.buckets:
            text = "? MB" if b.param_bytes is None else megabytes(b.param_bytes)
            if runs and runs[-1][0] == text:
                runs[-1][1] += 1
            else:
                runs.append([text, 1])
        return ", ".join(text if n == 1 else f"{text} ×{n}" for text, n in runs)

    @property
    def where(self) -> str:
        """The function split, or where the program called it when the frame is torch's own
        (``DDP(torch.compile(model))`` compiles torch's ``inner`` wrapper)."""
        if self.called_at is not None:
            return f"the graph called at {file_line(self.called_at.file, self.called_at.line)}"
        return f"{self.function} ({file_line(self.file, self.line)})" if self.file else self.function

    @property
    def headline(self) -> str:
        cuts = self.graphs - 1
        where = self.where
        return (
            f"{where}: split by DDP at {cuts} bucket boundar{'y' if cuts == 1 else 'ies'} ({self.caps}) "
            f"into {self.graphs} graphs; parameters per graph {self.sizes}"
        )


def _site_key(c: CompileInfo) -> tuple[object, ...]:
    cap = (c.ddp_split.bucket_bytes_cap, c.ddp_split.first_bucket_bytes) if c.ddp_split else (None, None)
    return (_frame(c), cap, tuple((b.param_bytes, b.loc.file if b.loc else None, b.loc.line if b.loc else None) for b in c.ddp_buckets))


def _frame(c: CompileInfo) -> tuple[str, str, int]:
    cap = c.capture
    if cap is not None and cap.co_name:
        return cap.co_name, cap.co_filename or "", cap.co_firstlineno or 0
    return "?", "", 0


def ddp_splits(model: RunModel, has: Callable[[str], bool] | None = None) -> list[DdpSplitSite]:
    """Every frame DDPOptimizer split (in the process logs ``has`` accepts: a TUI scope),
    grouped over the ranks that split it alike; in the order the first rank compiled them."""
    sites: dict[tuple[object, ...], DdpSplitSite] = {}
    for c in model.compiles_in_order():
        if c.ddp_split is None or len(c.ddp_buckets) < 2 or (has is not None and not has(c.log)):
            continue
        key = _site_key(c)
        site = sites.get(key)
        if site is None:
            name, file, line = _frame(c)
            buckets = [DdpBucket(b.name, b.param_bytes, len(b.params), b.loc) for b in c.ddp_buckets]
            called_at = nearest_user_frame(list(c.start.stack)) if c.start is not None and is_library_file(file) else None
            split = c.ddp_split
            site = sites[key] = DdpSplitSite(name, file, line, buckets, split.bucket_bytes_cap, split.first_bucket_bytes, called_at)
        process = model.processes.get(c.log)
        if process is not None and process.rank is not None and process.rank not in site.ranks:
            site.ranks.append(process.rank)
        site.compile_ids.append(c.cid)
    for site in sites.values():
        site.ranks.sort()
    return list(sites.values())
