"""What the compile caches did: per compile, the FX graph, AOTAutograd and Triton lookups
(hit, miss, bypass) with torch's reason, and why a warm run still compiled
(``inspector/analysis/cache.py``)."""

from __future__ import annotations

from collections.abc import Callable

from dyn_inspect.inspector.analysis.cache import (
    CacheLookup,
    CacheReport,
    CompileCache,
    cache_report,
    compile_cache,
    component_words,
    miss_diff,
    unread_lookups,
)
from dyn_inspect.inspector.model import CompileInfo, RunModel
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.run import Run


def dynamo_seconds(model: RunModel) -> float:
    """The seconds Dynamo traced for (its tracing is never served from a cache)."""
    return sum(c.capture.times.dynamo_s or 0.0 for c in model.compiles.values() if c.capture)


def lookup_output(lk: CacheLookup) -> typed.CacheLookup:
    return typed.CacheLookup(
        cache=lk.cache,
        state=lk.state,
        key=lk.key,
        reason=lk.reason,
        time_saved_s=lk.time_saved_s,
        time_taken_s=lk.time_taken_s,
        triton_kernels=list(lk.triton_kernels),
        text=lk.describe(),
    )


def compile_cache_output(run: Run, cc: CompileCache) -> typed.CompileCache:
    diff = miss_diff(run, cc)
    return typed.CompileCache(
        compile_id=cc.compile.cid,
        log=cc.compile.log,
        function=cc.function,
        verdict=cc.verdict,
        why_compiled=cc.why_compiled(),
        lookups=[lookup_output(lk) for lk in cc.lookups],
        miss_differs_from=typed.MissDiffers(
            compile_id=diff.other_cid, components=list(diff.differs), words=[component_words(n) for n in diff.differs]
        )
        if diff
        else None,
    )


def caches_report(run: Run) -> typed.CacheReport:
    """What ``cache`` prints: every compile's lookups, the story or why it was cold."""
    found = cache_report(run)
    return typed.CacheReport(
        run=str(run.path),
        warm=found.warm,
        time_saved_s=found.time_saved_s,
        story=found.story(dynamo_seconds(run.model)),
        cold=found.cold(),
        compiles=[compile_cache_output(run, cc) for cc in found.compiles],
    )


# compile (log, id) -> (its lookup count, its answer): kept by a caller that asks again as
# a live run grows (the TUI's overview), so that only compiles with new lookups are re-read
CacheMemo = dict[tuple[str, str], tuple[int, CompileCache]]

__all__ = ["CacheMemo", "cache_story", "caches_report", "compile_lookups", "unread_lookups"]


def cache_story(run: Run, memo: CacheMemo, compiles: list[CompileInfo], shown: Callable[[str], bool]) -> list[str]:
    """Why a warm run still compiled (the lines ``cache`` prints first), over ``compiles``
    (``compiles_in_order``, taken under the TUI's lock: this runs in a thread) whose log
    ``shown`` accepts; Dynamo's seconds as ``dynamo_seconds`` counts them."""
    found = cache_report(run, memo, compiles)
    dynamo_s = sum(c.capture.times.dynamo_s or 0.0 for c in compiles if c.capture and shown(c.log))
    return CacheReport([cc for cc in found.compiles if shown(cc.compile.log)]).story(dynamo_s)


def compile_lookups(run: Run, c: CompileInfo) -> list[typed.CacheLookup]:
    """One compile's cache lookups (the timeline's detail): what ``cache`` lists for it."""
    return [lookup_output(lk) for lk in compile_cache(run, c).lookups]
