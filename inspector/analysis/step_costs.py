"""What a steady-state step costs, and what each graph break costs in it (``--profile N``).

The engine writes one ``StepProfile`` per profiled process (engine/region_profile.py): host
time per compiled region, per compiled backward graph, in guard checks and outside all of
them. Here each region is joined to the compile it runs (torch's compile id within the last
reset epoch before the profile, the FX-graph cache keys it called choosing among epochs) and
each compile's graph break to the time it costs per step:

- the **eager code** the break leaves in its frame (the region's time less its graph,
  wrappers and nested regions: the breaking instruction and what it runs), plus
- the **resume function's** guard check and wrappers — what one graph would not pay.

The compiled graphs' own time is not counted against the break: without the break they
would still run (fused, maybe faster; not measured here). ``step_costs(model)`` returns one
``StepCosts`` per profiled process (its log), empty for a run without ``--profile``;
``break_costs(model)`` each break site's ``BreakCost``; ``guard_cost(model, frames)`` a
recompile cause's frames' guard checks; ``compare_eager(compiled, eager)`` a run's step (and
each callable ``torch.compile`` returned, per call) against the same program's eager run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import median

from dyn_inspect.engine import compile_ids
from dyn_inspect.engine.schema import BackwardTime, ProfileNoise, RegionTime, StepProfile
from dyn_inspect.inspector.analysis import spread as stats
from dyn_inspect.inspector.analysis.spread import Spread, Verdict
from dyn_inspect.inspector.model import BreakGroup, CompileInfo, FrameInfo, RunModel
from dyn_inspect.inspector.units import time_text

RESUME_PREFIX = "torch_dynamo_resume_in_"


@dataclass(frozen=True)
class RegionCost:
    """One compiled region, per step."""

    region: RegionTime
    compile: CompileInfo | None
    steps: int

    def per_step(self, us: float) -> float:
        return us / self.steps if self.steps else 0.0

    @property
    def us(self) -> float:
        return self.per_step(self.region.total_us)

    @property
    def compiled_us(self) -> float:
        return self.per_step(self.region.compiled_us)

    @property
    def eager_us(self) -> float:
        return self.per_step(self.region.eager_us)

    @property
    def lookup_us(self) -> float:
        return self.per_step(self.region.lookup_us)

    @property
    def overhead_us(self) -> float:
        return self.per_step(self.region.overhead_us)

    @property
    def device_us(self) -> float:
        return self.per_step(self.region.device_us)

    @property
    def device_wait_us(self) -> float:
        return self.per_step(self.region.device_wait_us)

    @property
    def calls_per_step(self) -> float:
        return self.region.calls / self.steps if self.steps else 0.0

    @property
    def function(self) -> str | None:
        c = self.compile
        return c.capture.co_name if c is not None and c.capture is not None else None

    @property
    def is_resume(self) -> bool:
        return (self.function or "").startswith(RESUME_PREFIX)


@dataclass(frozen=True)
class BackwardCost:
    time: BackwardTime
    compile: CompileInfo | None
    steps: int

    @property
    def us(self) -> float:
        return self.time.total_us / self.steps if self.steps else 0.0

    @property
    def compiled_us(self) -> float:
        return self.time.compiled_us / self.steps if self.steps else 0.0

    @property
    def device_us(self) -> float:
        return self.time.device_us / self.steps if self.steps else 0.0


@dataclass
class BreakCost:
    """What one graph break site costs per step: the eager code between the graphs it
    splits and the guard checks and wrappers of the resume functions it enters."""

    group: BreakGroup
    eager_us: float = 0.0
    resume_us: float = 0.0  # the resume regions' guard checks and wrappers
    # GPU runs: the host's wait in that eager code for the work queued before the break (the
    # graph before it, paid with or without the break): said beside the cost, not in it
    device_wait_us: float = 0.0
    between: list[tuple[str, str]] = field(default_factory=list)  # (region cid, resume cid)
    regions: list[str] = field(default_factory=list)  # the compiles whose eager code it is
    step_us: float = 0.0
    samples: list[float] = field(default_factory=list)  # its cost in each profiled step (µs)
    step_spread: Spread | None = None  # the profiled step's, the noise a fix must beat

    @property
    def us(self) -> float:
        return self.eager_us + self.resume_us

    @property
    def share(self) -> float | None:
        return self.us / self.step_us if self.step_us else None

    @property
    def spread(self) -> Spread | None:
        return stats.spread(self.samples)

    @property
    def verdict(self) -> Verdict | None:
        return self._said[0]

    @property
    def _said(self) -> tuple[Verdict | None, str]:
        resumes = sorted({b for _, b in self.between})
        if resumes:
            where = f" between {' / '.join(sorted({a for a, _ in self.between}))} and its resume {' or '.join(resumes)}"
        else:  # the code after the break ran eagerly in the frame (no resume function compiled)
            where = f" in {' / '.join(self.regions)}" if self.regions else ""
        verdict, text = stats.break_verdict(self.spread, self.step_spread, self.us, where, self.share)
        if self.device_wait_us >= 1.0:
            text += f" (not counted: {time_text(self.device_wait_us)}/step waiting for the GPU work queued before it)"
        return verdict, text

    @property
    def text(self) -> str:
        """The one sentence every face shows: "the break costs 110 µs/step under the profiler
        (3.6% of the step), 95% CI 104–118 µs: eager code between 0/0 and its resume 1/0"
        when the cost stands out of the step's own noise, else "... within noise (±4% of the
        step) ..." and how many steps would resolve it (the profiler slows eager code more
        than compiled code: what removing the break saves is at most this)."""
        return self._said[1]


@dataclass
class StepCosts:
    """One profiled process's steps: where the time went, and what each break costs."""

    log: str
    profile: StepProfile
    regions: list[RegionCost]
    backward: list[BackwardCost]
    breaks: list[BreakCost]  # most expensive first
    per_step: list[StepCosts] = field(default_factory=list)  # each profiled step on its own

    def spread_of(self, figure: object) -> Spread | None:
        """``figure`` (a StepCosts -> µs per step) over the profiled steps."""
        if not self.per_step:
            return None
        return stats.spread([figure(s) for s in self.per_step])  # type: ignore[operator]

    @property
    def step_spread(self) -> Spread | None:
        return stats.spread(self.profile.step_samples_us)

    @property
    def plain_spread(self) -> Spread | None:
        return stats.spread(self.profile.plain_samples_us)

    @property
    def noise(self) -> ProfileNoise | None:
        return self.profile.noise

    def in_process(self, compile_time_s: float) -> EagerComparison | None:
        """Compiled against eager in this process (the unprofiled steps' alternating
        blocks under ``set_stance("force_eager")``); None without an eager arm."""
        p = self.profile
        if not p.eager_samples_us or len(p.plain_samples_us) < 2:
            return None
        return EagerComparison(
            compiled_us=p.plain_step_us or 0.0,
            eager_us=sum(p.eager_samples_us) / len(p.eager_samples_us),
            measured="without the profiler",
            compile_time_s=compile_time_s,
            compiled_samples=tuple(p.plain_samples_us),
            eager_samples=tuple(p.eager_samples_us),
            in_process=True,
            block=p.ab_block,
        )

    @property
    def steps(self) -> int:
        return self.profile.steps

    @property
    def step_us(self) -> float:
        return self.profile.step_us

    @property
    def plain_step_us(self) -> float | None:
        """A step's time without the profiler (the steps right after the window)."""
        return self.profile.plain_step_us

    def _per_step(self, us: float) -> float:
        return us / self.steps if self.steps else 0.0

    @property
    def compiled_us(self) -> float:
        """In compiled graphs: forward regions' graph calls and the backward graphs."""
        return sum(r.compiled_us for r in self.regions) + sum(b.compiled_us for b in self.backward)

    @property
    def device_us(self) -> float:
        """GPU time of the compiled graphs' kernels, forward and backward (0 on CPU)."""
        return sum(r.device_us for r in self.regions) + sum(b.device_us for b in self.backward)

    @property
    def eager_in_regions_us(self) -> float:
        return sum(r.eager_us for r in self.regions)

    @property
    def device_wait_us(self) -> float:
        """GPU runs: host time the eager code in compiled frames waited for the device."""
        return sum(r.device_wait_us for r in self.regions)

    @property
    def guards_us(self) -> float:
        return sum(r.lookup_us for r in self.regions) + self._per_step(self.profile.missed_lookup_us)

    @property
    def overhead_us(self) -> float:
        """Dynamo's and AOTAutograd's wrappers, and the backward's beside its graph."""
        return sum(r.overhead_us for r in self.regions) + sum(b.us - b.compiled_us for b in self.backward)

    @property
    def outside_us(self) -> float:
        return self._per_step(self.profile.outside_us)

    def cost_of(self, group: BreakGroup) -> BreakCost | None:
        return next((b for b in self.breaks if b.group is group), None)

    def cost_of_key(self, key: str) -> BreakCost | None:
        return next((b for b in self.breaks if b.group.key == key), None)


def _compile_for(model: RunModel, log: str, region: RegionTime, at: float) -> CompileInfo | None:
    """The compile a region runs: torch's id names it within a reset epoch (``0/0`` names
    another function's compile after ``torch._dynamo.reset()``); among epochs, the one whose
    FX graph the region called, else the last that began before the profile. (A graph key
    alone is not enough: a recompile that made the same graph shares its key.)"""
    same = [c for c in model.compiles_in_order() if c.log == log and c.torch_id == region.cid]
    keys = set(region.graphs)
    called = [c for c in same if any(ce.cache == "fx_graph" and ce.key in keys for ce in c.caches)]
    before = [c for c in called or same if not at or c.start is None or c.start.t <= at]
    return max(before or called or same, key=lambda c: compile_ids.epoch_of(c.cid), default=None)


def _backward_compile(model: RunModel, log: str, graph: str | None, ran: list[CompileInfo]) -> CompileInfo | None:
    """The compile whose backward graph it is: by its FX-graph cache key, among the
    compiles whose forward ran in the window first (a recompile that made the same graphs
    shares their keys)."""
    if graph is None:
        return None
    having = [c for c in model.compiles_in_order() if c.log == log and any(ce.cache == "fx_graph" and ce.key == graph for ce in c.caches)]
    return next((c for c in having if any(c is r for r in ran)), having[-1] if having else None)


def _break_of(model: RunModel, compile: CompileInfo) -> BreakGroup | None:
    """The break site that ended ``compile``'s graph: its last break (earlier ones were
    inside functions it then stopped inlining)."""
    hits = [(e.t, group) for group in model.breaks.values() for log, e in group.hits if log == compile.log and e.cid == compile.cid]
    return max(hits, key=lambda h: h[0])[1] if hits else None


def costs_for(
    model: RunModel,
    log: str,
    profile: StepProfile,
    joined: dict[str, CompileInfo | None] | None = None,
    joined_backward: dict[str | None, CompileInfo | None] | None = None,
    breaks_of: dict[str, BreakGroup | None] | None = None,
) -> StepCosts:
    """``joined``/``joined_backward``: the window's joins of region cids / backward graph
    keys to compiles, reused for each of its steps (one step runs the window's compiles)."""
    steps = profile.steps
    regions = [
        RegionCost(r, joined[r.cid] if joined is not None and r.cid in joined else _compile_for(model, log, r, profile.t), steps)
        for r in profile.regions
    ]
    by_cid = {r.region.cid: r for r in regions}
    ran = [r.compile for r in regions if r.compile is not None]
    backward = [
        BackwardCost(
            b,
            joined_backward[b.graph]
            if joined_backward is not None and b.graph in joined_backward
            else _backward_compile(model, log, b.graph, ran),
            steps,
        )
        for b in profile.backward
    ]
    breaks: dict[str, BreakCost] = {}
    breaks_of = {} if breaks_of is None else breaks_of
    for r in regions:
        if r.compile is None:
            continue
        if r.compile.cid + "|" + r.compile.log not in breaks_of:
            breaks_of[r.compile.cid + "|" + r.compile.log] = _break_of(model, r.compile)
        group = breaks_of[r.compile.cid + "|" + r.compile.log]
        if group is None:
            continue
        cost = breaks.get(group.key)
        if cost is None:
            cost = breaks[group.key] = BreakCost(group, step_us=profile.step_us)
        cost.eager_us += r.eager_us
        cost.device_wait_us += r.device_wait_us
        cost.regions.append(r.region.cid)
        for cid in r.region.nested:
            resume = by_cid.get(cid)
            if resume is not None and resume.is_resume:
                cost.resume_us += resume.lookup_us + resume.overhead_us
                cost.between.append((r.region.cid, cid))
    ordered = sorted(breaks.values(), key=lambda b: -b.us)
    return StepCosts(log, profile, regions, backward, ordered)


def _with_steps(model: RunModel, log: str, profile: StepProfile) -> StepCosts:
    """The window's costs, and each profiled step's own (``per_step``), each break's cost in
    every step and the step's spread beside it (its verdict's noise)."""
    breaks_of: dict[str, BreakGroup | None] = {}
    window = costs_for(model, log, profile, breaks_of=breaks_of)
    joined = {r.region.cid: r.compile for r in window.regions}
    joined_backward = {b.time.graph: b.compile for b in window.backward}
    for s in profile.per_step:
        one = StepProfile(
            t=profile.t,
            steps=1,
            step_us=s.step_us,
            device=profile.device,
            regions=s.regions,
            backward=s.backward,
            outside_us=s.outside_us,
            missed_lookup_us=s.missed_lookup_us,
        )
        window.per_step.append(costs_for(model, log, one, joined, joined_backward, breaks_of))
    step = window.step_spread
    for b in window.breaks:
        if window.per_step:
            b.samples = [(c.us if (c := s.cost_of_key(b.group.key)) is not None else 0.0) for s in window.per_step]
        b.step_spread = step
    return window


def step_costs(model: RunModel) -> list[StepCosts]:
    """One ``StepCosts`` per profiled process, in log order (empty without ``--profile``).

    Kept until the run grows: ``causes`` asks once for the breaks and once per recompile
    cause (its guard checks), each a join of every region with the run's compiles. The
    answers are shared: callers read them, never change them."""
    found = model.memo.get("step_costs")
    if found is None or found[0] != model.event_count:
        found = model.memo["step_costs"] = (model.event_count, [_with_steps(model, log, p) for log, p in model.step_profiles])
    return list(found[1])


def break_costs(model: RunModel) -> dict[str, BreakCost]:
    """Break group key -> what it costs per step, over every profiled process (a break hit
    in several processes: the most expensive)."""
    out: dict[str, BreakCost] = {}
    for sc in step_costs(model):
        for b in sc.breaks:
            if b.group.key not in out or b.us > out[b.group.key].us:
                out[b.group.key] = b
    return out


@dataclass(frozen=True)
class FunctionSpeed:
    """One callable ``torch.compile`` returned, per call, in both runs (under the profiler:
    the only window where each call is timed). The profiler slows eager code more than
    compiled code, so a callable slower compiled even so is slower compiled."""

    function: str  # "Net.forward (train.py:33)"
    compiled_us: float
    eager_us: float
    compiled_samples: tuple[float, ...] = ()  # per call, in each profiled step
    eager_samples: tuple[float, ...] = ()

    @property
    def ratio(self) -> stats.Interval | None:
        return stats.ratio(list(self.eager_samples), list(self.compiled_samples))

    @property
    def slower_compiled(self) -> bool:
        """With per-step samples, only when the interval of eager / compiled is below 1."""
        r = self.ratio
        if r is not None:
            return r.high < 1.0
        return self.compiled_us > self.eager_us

    @property
    def text(self) -> str:
        """Only "slower compiled" is a verdict: faster under the profiler may be the
        profiler's doing (it slows eager code more), so the step times above decide that;
        and it is said only when its interval excludes no change."""
        head = f"{self.function}: compiled {time_text(self.compiled_us)}, eager {time_text(self.eager_us)} per call under the profiler"
        if self.slower_compiled:
            return f"{head} — slower compiled"
        r = self.ratio
        if r is not None and r.low <= 1.0 and self.compiled_us > self.eager_us:
            return f"{head} — within noise ({r.confidence:.0%} CI of eager / compiled {r.low:.2f}–{r.high:.2f}×)"
        return head


@dataclass(frozen=True)
class EagerComparison:
    """The compiled run's step against the same program run eagerly (``--disable-compile
    --profile N``): the speedup, and after how many steps the compile time is paid back.
    Step times are the unprofiled ones where both runs have them (``measured`` says which)."""

    compiled_us: float
    eager_us: float
    measured: str  # "without the profiler" | "under the profiler"
    compile_time_s: float
    functions: tuple[FunctionSpeed, ...] = ()  # the callables both runs called, slowest-compiled first
    compiled_samples: tuple[float, ...] = ()  # each step (µs): the verdict's interval comes from these
    eager_samples: tuple[float, ...] = ()
    in_process: bool = False  # True: interleaved in one process; False: another run, another time
    block: int = 0  # (in process) steps per block of the alternation

    @property
    def verdict(self) -> Verdict | None:
        if self.in_process:
            how = f"{self.block}-step blocks in turn in one process"
        else:
            how = f"{self.measured}, from another run: taken at another time, under other load, less reliable"
        return stats.speed_verdict(list(self.eager_samples), list(self.compiled_samples), self.compile_time_s, how)

    @property
    def speedup(self) -> float:
        return self.eager_us / self.compiled_us if self.compiled_us else 0.0

    @property
    def saved_us(self) -> float:
        return self.eager_us - self.compiled_us

    @property
    def pays_back_after(self) -> int | None:
        """Steps until compiling has saved its own time: with per-step samples, only when
        the verdict says compiled is faster (from the medians), else None; without them
        (an older recording), from the means, None when it saves nothing per step."""
        v = self.verdict
        if v is not None:
            if not (v.resolved and v.low > 1.0):
                return None
            saved = median(self.eager_samples) - median(self.compiled_samples)
            return math.ceil(self.compile_time_s * 1e6 / saved) if saved > 0 else None
        if self.saved_us <= 0:
            return None
        return math.ceil(self.compile_time_s * 1e6 / self.saved_us)

    @property
    def text(self) -> str:
        """The verdict (only when its interval excludes 1.0); without per-step samples (a run
        recorded before they were kept) the means, said as such."""
        v = self.verdict
        if v is not None:
            return v.text
        head = f"compiled {time_text(self.compiled_us)}/step, eager {time_text(self.eager_us)}/step ({self.measured}; no per-step samples: no interval)"
        if not self.in_process:
            head += ", from another run: less reliable"
        if self.saved_us <= 0:
            return f"{head}: the compiled step is {time_text(-self.saved_us)} slower — compiling does not pay here"
        return (
            f"{head}: {self.speedup:.2f}× faster; compiling took {self.compile_time_s:.1f} s and saves "
            f"{time_text(self.saved_us)}/step: it pays back after {self.pays_back_after:,} steps"
        )


def _per_call(profile: StepProfile, function: str) -> tuple[float, ...]:
    """One callable's time per call in each profiled step that called it."""
    out = []
    for s in profile.per_step:
        calls = [t for t in s.calls if t.function == function and t.calls]
        if calls:
            out.append(sum(t.total_us for t in calls) / sum(t.calls for t in calls))
    return tuple(out)


def compare_eager(compiled: RunModel, eager: RunModel) -> EagerComparison | None:
    """None when either run has no profiled steps."""
    if not compiled.step_profiles or not eager.step_profiles:
        return None
    c, e = compiled.step_profiles[0][1], eager.step_profiles[0][1]
    plain = c.plain_step_us is not None and e.plain_step_us is not None
    eager_calls = {t.function: t for t in e.calls if t.calls}
    functions = [
        FunctionSpeed(
            t.function,
            t.total_us / t.calls,
            eager_calls[t.function].total_us / eager_calls[t.function].calls,
            _per_call(c, t.function),
            _per_call(e, t.function),
        )
        for t in c.calls
        if t.calls and t.function in eager_calls
    ]
    return EagerComparison(
        compiled_us=(c.plain_step_us if plain else c.step_us) or 0.0,
        eager_us=(e.plain_step_us if plain else e.step_us) or 0.0,
        measured="without the profiler" if plain else "under the profiler",
        compile_time_s=compiled.total_compile_time(),
        functions=tuple(sorted(functions, key=lambda f: f.eager_us / f.compiled_us if f.compiled_us else 0.0)),
        compiled_samples=tuple(c.plain_samples_us if plain else c.step_samples_us),
        eager_samples=tuple(e.plain_samples_us if plain else e.step_samples_us),
    )


@dataclass(frozen=True)
class GuardCost:
    """The guard checks of a recompile cause's frames per profiled step: what checking their
    cache entries costs each step (not what a fix saves: one entry stays checked)."""

    us: float
    frames: int
    entries: int  # the most cache entries one of the frames had
    step_us: float
    samples: tuple[float, ...] = ()  # in each profiled step (µs)

    @property
    def spread(self) -> Spread | None:
        return stats.spread(self.samples)

    @property
    def text(self) -> str:
        share = f" ({self.us / self.step_us:.1%} of the step)" if self.step_us else ""
        what = f"its {self.frames} frames" if self.frames != 1 else "its frame"
        s = self.spread
        spread = f" ({s.text})" if s is not None and s.n > 1 else ""
        return (
            f"guard checks of {what}: {time_text(self.us)}/step under the profiler{share}{spread}, up to {self.entries} cache entries each"
        )


def guard_cost(model: RunModel, frames: list[FrameInfo]) -> GuardCost | None:
    """None without ``--profile`` or when none of ``frames`` ran in the profiled window."""
    keys = {(f.log, f.frame_id) for f in frames}
    for sc in step_costs(model):
        ran = [r for r in sc.regions if r.compile is not None and (r.compile.log, r.compile.frame_id) in keys]
        if ran:
            entries = max(len(f.compiles) for f in frames if f.log == sc.log) if any(f.log == sc.log for f in frames) else 1
            cids = {r.region.cid for r in ran}
            samples = tuple(sum(r.lookup_us for r in one.regions if r.region.cid in cids) for one in sc.per_step)
            return GuardCost(
                sum(r.lookup_us for r in ran),
                len({(r.compile.log, r.compile.frame_id) for r in ran if r.compile}),
                entries,
                sc.step_us,
                samples,
            )
    return None


@dataclass(frozen=True)
class NoiseNote:
    """What the machine did while the steps were timed, said once for every face: whether
    other processes (or a hypervisor's steal) took CPUs, whether torch's threads outnumber
    the CPUs left free, and the fix."""

    noise: ProfileNoise

    @property
    def free_cpus(self) -> float | None:
        o = self.noise.others_busy_cpus
        return max(0.0, self.noise.cpus - o) if o is not None else None

    @property
    def busy(self) -> bool:
        n = self.noise
        if n.others_busy_cpus is not None:
            return n.others_busy_cpus >= 0.5 or (n.steal_share or 0.0) >= 0.05
        return n.load_avg is not None and n.load_avg > n.cpus  # (no /proc/stat: the load average says it)

    @property
    def oversubscribed(self) -> bool:
        free = self.free_cpus
        return free is not None and self.noise.threads > max(1, round(free))

    @property
    def text(self) -> str:
        n = self.noise
        parts = []
        if n.others_busy_cpus is not None:
            parts.append(f"other processes kept {n.others_busy_cpus:.1f} of {n.host_cpus or n.cpus} CPUs busy")
        if n.load_avg is not None:
            parts.append(f"load average {n.load_avg:.2f}")
        if n.steal_share is not None:
            parts.append(f"CPU steal {n.steal_share:.0%}")
        threads = f"torch used {n.threads} thread{'s' if n.threads != 1 else ''} on {n.cpus} CPU{'s' if n.cpus != 1 else ''}"
        if n.omp_num_threads:
            threads += f" (OMP_NUM_THREADS={n.omp_num_threads})"
        if n.compile_threads:
            threads += f"; Inductor's compile workers: {n.compile_threads} (idle between compiles)"
        head = "the machine was busy while the steps were timed" if self.busy else "the machine was quiet while the steps were timed"
        said = f"{head}: {', '.join(parts)}; {threads}" if parts else f"{head}: {threads}"
        if self.oversubscribed:
            free = self.free_cpus or 0.0
            said += f" with about {free:.0f} CPU{'s' if round(free) != 1 else ''} free: oversubscribed (threads wait for each other)"
        return said

    @property
    def fix(self) -> str | None:
        if self.oversubscribed:
            fit = max(1, round(self.free_cpus or 1))
            return (
                f"set OMP_NUM_THREADS={fit} (or call torch.set_num_threads({fit}) first) so torch's threads fit the free CPUs, "
                "or profile on an idle machine: the times below swing with the other load"
            )
        if self.busy:
            return "profile on an idle machine, or with more steps: the other load widens every interval below"
        return None
