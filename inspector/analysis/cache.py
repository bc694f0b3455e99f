"""Compile caches per compile: what the FX graph cache, the AOTAutograd cache and (on GPU)
Triton's kernel bundle did for each compile — hit, miss or bypass — with torch's own reason
and the time a hit saved; and, for the run, why a warm run still spent compile time.

Torch writes one ``*_cache_{hit,miss,bypass}`` artifact per lookup (``CacheEvent``; its
``detail`` blob is torch's ``cache_info``): a bypass carries ``cache_bypass_reason``, a hit
``time_saved_ns``/``time_saved_ms``, an FX-graph lookup the key's ``components`` (one line
per input of the hash, ``[hash] name: value``). torch says nothing about *why* a key was
new; ``miss_diff`` answers that as tlparse does: the components that differ from the
closest graph looked up in the same run.

A run that got nothing from the cache is called cold from a fact: what Inductor's cache
directory held when the run's first compile started (``process_start.inductor_cache``),
never from the misses alone: a directory with entries whose keys this run did not have
is not a "first run".

Read by ``dyn-inspect cache`` (through ``inspector/reports/cache.py``), the TUI overview
(``cache_report``, ``unread_lookups``) and the timeline view (``compile_cache``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from dyn_inspect.engine.cache_dir import CAP
from dyn_inspect.engine.schema import CacheEvent, InductorCacheDir
from dyn_inspect.inspector.model import CompileInfo
from dyn_inspect.inspector.run import Run

State = Literal["hit", "miss", "bypass"]
CACHE_NAMES = {"fx_graph": "FX graph", "aotautograd": "AOTAutograd", "triton": "Triton"}
_ADDRESS_RE = re.compile(r" at 0x[0-9a-f]+")
_COMPONENT_RE = re.compile(r"^\[(?P<hash>\w+)\] (?P<name>[^:]+):")


class _CacheInfo(msgspec.Struct):
    """The fields of torch's ``cache_info`` payload that the faces show (others ignored)."""

    cache_state: str | None = None
    cache_status_detailed: str | None = None
    cache_bypass_reason: str | None = None
    cache_bypass_exception_type: str | None = None
    time_saved_ns: int | None = None
    time_saved_ms: float | None = None
    time_taken_ns: int | None = None
    components: list[str] = []
    triton_bundler_meta: str | None = None


@dataclass(frozen=True)
class CacheLookup:
    """One cache lookup of one compile."""

    cache: str  # torch's name: "fx_graph", "aotautograd", ...
    state: State
    key: str | None
    reason: str | None = None  # bypass: torch's reason, one line; miss: torch's detailed status
    time_saved_s: float | None = None  # a hit: the compile time it saved (torch's figure)
    time_taken_s: float | None = None  # a miss: how long compiling the graph took
    triton_kernels: tuple[str, ...] = ()  # kernels Triton's bundle held for this graph (GPU)
    event: CacheEvent | None = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        return CACHE_NAMES.get(self.cache, self.cache)

    def describe(self) -> str:
        """ "FX graph: hit (saved 25.8 s)", "AOTAutograd: bypass — Unsupported call_function ..."."""
        text = f"{self.label}: {self.state}"
        if self.state == "hit" and self.time_saved_s:
            text += f" (saved {self.time_saved_s:.1f} s)"
        if self.state == "bypass" and self.reason:
            text += f" — {self.reason}"
        if self.state == "miss" and self.reason and self.reason != "miss":
            text += f" ({self.reason.replace('_', ' ')})"
        if self.triton_kernels:
            # A hit loads Triton's compiled kernels from the FX graph's entry; a miss stores them there.
            n = len(self.triton_kernels)
            text += (
                f"; {n} Triton kernels loaded from the bundle" if self.state == "hit" else f"; {n} Triton kernels bundled into the entry"
            )
        return text


@dataclass
class CompileCache:
    compile: CompileInfo
    lookups: list[CacheLookup]

    @property
    def function(self) -> str:
        cap = self.compile.capture
        return cap.co_name if cap and cap.co_name else "?"

    def lookup(self, cache: str) -> list[CacheLookup]:
        return [lk for lk in self.lookups if lk.cache == cache]

    @property
    def verdict(self) -> str:
        """ "hit" when every lookup hit, "bypass" when one bypassed, "miss" when one missed, "none"."""
        states = {lk.state for lk in self.lookups}
        if not states:
            return "none"
        if states == {"hit"}:
            return "hit"
        return "bypass" if "bypass" in states else "miss"

    def why_compiled(self) -> str | None:
        """Why this compile ran AOTAutograd/Inductor although a cache was there (None when
        the caches served it). A bypass first (torch's reason), then the FX graph miss (the
        expensive part, Inductor), then AOTAutograd's."""
        bypass = next((lk for lk in self.lookups if lk.state == "bypass"), None)
        if bypass is not None:
            text = f"{bypass.label} cache bypassed: {bypass.reason or 'torch gave no reason'}"
            fx_hit = any(lk.cache == "fx_graph" and lk.state == "hit" for lk in self.lookups)
            if bypass.cache == "aotautograd" and fx_hit:
                text += " (AOTAutograd traced again; Inductor's code came from the FX graph cache)"
            return text
        misses = sorted((lk for lk in self.lookups if lk.state == "miss"), key=lambda lk: lk.cache != "fx_graph")
        if misses:
            return f"{misses[0].label} cache miss: no entry for this graph's key (not compiled before with these inputs and settings)"
        return None


@dataclass
class CacheReport:
    compiles: list[CompileCache]
    # Inductor's cache directory when the run's first compile started (None: not recorded,
    # a run of an older dyn-inspect or an imported TORCH_TRACE).
    before: InductorCacheDir | None = None

    def count(self, cache: str, state: State) -> int:
        return sum(1 for cc in self.compiles for lk in cc.lookups if lk.cache == cache and lk.state == state)

    @property
    def warm(self) -> bool:
        """Something came from the cache: the run found the cache (partly) warm."""
        return any(lk.state == "hit" for cc in self.compiles for lk in cc.lookups)

    @property
    def time_saved_s(self) -> float:
        # AOTAutograd's hit figure includes the FX graph it loaded: count one per compile.
        total = 0.0
        for cc in self.compiles:
            saved = [lk.time_saved_s or 0.0 for lk in cc.lookups if lk.state == "hit"]
            total += max(saved, default=0.0)
        return total

    def story(self, dynamo_s: float) -> list[str]:
        """Why a warm run still compiled, in a few lines (empty for a cold run)."""
        if not self.warm:
            return []
        served = [cc for cc in self.compiles if cc.verdict == "hit"]
        with_lookups = [cc for cc in self.compiles if cc.lookups]
        out = [
            f"warm cache: {len(served)} of {len(with_lookups)} compiles served from the cache (saved {self.time_saved_s:.1f} s); "
            f"Dynamo still traced every frame ({dynamo_s:.2f} s: its tracing is not cached between runs)"
        ]
        for cc in with_lookups:
            why = cc.why_compiled()
            if why is not None:
                out.append(f"compiled anyway: {cc.function} ({cc.compile.cid}) — {why}")
        return out

    def cold(self) -> str | None:
        """Why nothing came from the cache, in one line; None when something did."""
        if self.warm:
            return None
        if not any(cc.lookups for cc in self.compiles):
            return "no cache lookups: nothing was compiled, or the FX graph and AOTAutograd caches are off"
        b = self.before
        if b is None:
            return "cold cache: nothing came from the cache (what the cache directory held before this run was not recorded)"
        if not b.fx_graph_entries and not b.aotautograd_entries:
            return f"cold cache: nothing came from the cache — {b.path} held no entries when the run started (its first run with this cache directory)"
        held = f"{b.path} held {_entries(b.fx_graph_entries, 'FX graph')} and {_entries(b.aotautograd_entries, 'AOTAutograd')} when the run started"
        if not self.count("fx_graph", "miss") and not self.count("aotautograd", "miss"):
            return f"nothing came from the cache: every lookup bypassed it ({held})"
        # The keys are torch's: our recorder keeps them the user's (engine/torch_compat.py,
        # keep_cache_key), so a miss here is the program's, its inputs', settings' or torch's.
        return f"nothing came from the cache although {held}: none had this run's keys (other code, inputs, settings or torch)"


def _entries(n: int, cache: str) -> str:
    count = f"at least {n}" if n >= CAP else str(n)
    return f"{count} {cache} {'entry' if n == 1 else 'entries'}"


def _before(run: Run) -> InductorCacheDir | None:
    """The cache directory as the run's first process to compile found it."""
    starts = [p.start for p in run.model.processes.values() if p.start is not None and p.start.inductor_cache is not None]
    first = min(starts, key=lambda s: s.t, default=None)
    return first.inductor_cache if first is not None else None


def _one_line(text: str) -> str:
    return " ".join(_ADDRESS_RE.sub("", text).split())


def _lookup(run: Run, e: CacheEvent) -> CacheLookup:
    state: State = "bypass" if e.bypass else "hit" if e.hit else "miss"
    info = _CacheInfo()
    raw = run.blob_text(e.detail)
    if raw:
        try:
            info = msgspec.json.decode(raw, type=_CacheInfo)
        except msgspec.DecodeError:
            pass  # an unexpected payload: the state alone is still right
    saved = info.time_saved_ns / 1e9 if info.time_saved_ns else (info.time_saved_ms / 1e3 if info.time_saved_ms else None)
    reason = _one_line(info.cache_bypass_reason) if info.cache_bypass_reason else info.cache_status_detailed
    triton: tuple[str, ...] = ()
    if info.triton_bundler_meta:
        m = re.search(r"cached_kernel_names=\[([^\]]*)\]", info.triton_bundler_meta)
        if m and m[1].strip():
            triton = tuple(n.strip().strip("'\"") for n in m[1].split(","))
    return CacheLookup(
        cache=e.cache,
        state=state,
        key=e.key,
        reason=reason,
        time_saved_s=saved,
        time_taken_s=info.time_taken_ns / 1e9 if info.time_taken_ns else None,
        triton_kernels=triton,
        event=e,
    )


def compile_cache(run: Run, c: CompileInfo) -> CompileCache:
    return CompileCache(c, [_lookup(run, e) for e in c.caches])


def cache_report(
    run: Run, memo: dict[tuple[str, str], tuple[int, CompileCache]] | None = None, compiles: list[CompileInfo] | None = None
) -> CacheReport:
    """Every compile's cache lookups, in compile order (compiles without any included).

    ``memo`` (kept by a caller that asks again as a live run grows, the overview) holds
    each compile's answer with its lookup count: only compiles with new lookups have their
    payloads read again. ``compiles``: these instead of the model's (a list taken under the
    TUI's lock, read in a thread)."""
    out = []
    for c in run.model.compiles_in_order() if compiles is None else compiles:
        if c.capture is None and not c.caches:
            continue
        key = (c.log, c.cid)
        known = memo.get(key) if memo is not None else None
        if known is not None and known[0] == len(c.caches):
            out.append(known[1])
            continue
        cc = compile_cache(run, c)
        if memo is not None:
            memo[key] = (len(c.caches), cc)
        out.append(cc)
    return CacheReport(out, before=_before(run))


def _components(run: Run, e: CacheEvent) -> dict[str, str]:
    raw = run.blob_text(e.detail)
    try:
        info = msgspec.json.decode(raw, type=_CacheInfo) if raw else _CacheInfo()
    except msgspec.DecodeError:
        return {}
    out: dict[str, str] = {}
    for line in info.components:
        m = _COMPONENT_RE.match(line)
        if m:
            out[m["name"]] = m["hash"]
    return out


# what the key components torch names stand for
COMPONENT_WORDS = {"gm": "the graph's code", "cache_key_tag": "the cache key tag", "system_info": "the machine / versions"}


def component_words(name: str) -> str:
    """``gm`` → "gm (the graph's code)", ``example_inputs[0]`` → "example_inputs[0] (input 0's shape, dtype, strides)"."""
    m = re.fullmatch(r"example_inputs\[(\d+)\]", name)
    if m:
        return f"{name} (input {m[1]}'s shape, dtype, strides)"
    return f"{name} ({COMPONENT_WORDS[name]})" if name in COMPONENT_WORDS else name


@dataclass(frozen=True)
class MissDiff:
    """What made an FX graph key new: the components that differ from the closest graph
    looked up in the same run (``other_cid``)."""

    other_cid: str
    differs: list[str]
    shared: int
    total: int


def miss_diff(run: Run, cc: CompileCache) -> MissDiff | None:
    """For a compile whose FX graph lookup missed: the closest other FX graph lookup of the
    run and the key components that differ (``gm`` is the graph's code, ``example_inputs[i]``
    an input's shape/dtype/stride, ``fx_kwargs[...]``, ``inductor_config`` settings)."""
    miss = next((lk for lk in cc.lookups if lk.cache == "fx_graph" and lk.state == "miss" and lk.event is not None), None)
    if miss is None or miss.event is None:
        return None
    mine = _components(run, miss.event)
    if not mine:
        return None
    best: MissDiff | None = None
    for c in run.model.compiles_in_order():
        for e in c.caches:
            if e.cache != "fx_graph" or e is miss.event or e.bypass or e.key == miss.key:
                continue
            theirs = _components(run, e)
            if not theirs:
                continue
            shared = sum(1 for name, h in mine.items() if theirs.get(name) == h)
            differs = sorted(name for name in set(mine) | set(theirs) if mine.get(name) != theirs.get(name))
            if best is None or shared > best.shared:
                best = MissDiff(c.cid, differs, shared, len(mine))
    return best


def unread_lookups(compiles: list[CompileInfo], memo: dict[tuple[str, str], tuple[int, CompileCache]]) -> int:
    """How many lookups' payloads ``cache_report`` would read (the rest are in ``memo``)."""
    n = 0
    for c in compiles:
        known = memo.get((c.log, c.cid))
        if known is None or known[0] != len(c.caches):
            n += len(c.caches)
    return n
