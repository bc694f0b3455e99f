"""The ``--json`` reports of the CLI, one Struct (or a small set) per command. Field order
is the key order printed; docs/cli.md says what each key means."""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from dyn_inspect.inspector.outputs.common import Counts, Divergence, Environment, NodeStatus, Output, RankGroup, SourceLoc

# -- summary (also `run --json`, and inside `import --json` / `merge --json`) -------------


class LimitHit(Output):
    function: str | None
    file: str | None
    line: int | None
    reason: str


class SummaryBreak(Output):
    """A break site: the user line first (``user_loc``: the nearest user frame, torch's own
    ``loc`` when that is user code), then what torch reported."""

    user_loc: SourceLoc | None
    in_library: bool
    key: str
    headline: str
    type: str
    gb_id: str | None
    url: str | None
    count: int
    loc: SourceLoc | None
    reason: str
    explanation: str
    context: str  # torch's developer debug context: what it hit (GB0112: the exception text)
    hints: list[str]
    compile_ids: list[str]
    user_stack: list[SourceLoc | None]
    ranks: list[int]
    # its time per profiled step (``--profile``) and the sentence every face shows
    us_per_step: float | None = None
    step_cost: str | None = None


class DdpBucketRow(Output):
    """One graph of a DDP split: the bucket of parameters it holds, where it begins."""

    graph: str  # torch's submodule name (submod_0, …), in graph order
    param_bytes: int | None  # null: a parameter's shape was not concrete
    params: int
    loc: SourceLoc | None


class DdpSplitSite(Output):
    """A frame DDPOptimizer cut into several graphs at DDP's bucket boundaries, the same way
    on ``ranks``: a split the user's code did not cause (``analysis/ddp_splits.py``)."""

    headline: str
    function: str
    file: str
    line: int  # the function's def line
    called_at: SourceLoc | None  # the user's call, when the function split is torch's own
    graphs: int
    bucket_cap_mb: float | None  # null: not recorded (a run imported from TORCH_TRACE)
    first_bucket_mb: float | None
    buckets: list[DdpBucketRow]
    boundaries: list[SourceLoc]  # where each graph after the first begins
    ranks: list[int]
    compile_ids: list[str]


class FailureSite(Output):
    """Failed compiles (a ``fullgraph=True`` error, a backend exception) at one place."""

    type: str
    function: str | None
    count: int
    user_loc: SourceLoc | None  # ``code``: the line's text, read from the file
    at_def: bool
    headline: str
    reason: str | None
    compile_ids: list[str]


class RecompileRow(Output):
    compile_id: str
    function: str | None
    file: str | None
    line: int | None
    reasons: list[str]
    cache_size: int | None


class RecompileStep(Output):
    """One recompile of a function as the text summary lists it with ``--all``."""

    compile_id: str
    reason: str  # the first guard that failed
    try_code: str | None  # the suggestion, one line; None where a root cause explains the function


class RecompiledFunction(Output):
    """A function that recompiled, as the text summary lists it."""

    function: str
    file: str
    def_line: int
    compiles: int
    limit_hit: bool
    reason: str | None  # the first recompile's failed guard
    other_guards: int  # further distinct guards that failed on its later recompiles
    explained: bool  # a root cause listed above it has the fix
    try_code: str | None  # the first recompile's suggestion, one line (when not explained)
    steps: list[RecompileStep]  # every recompile (only when every function is listed)
    ranks: list[int] = msgspec.field(default_factory=list)  # the ranks it recompiled alike on


class RootCauseLine(Output):
    title: str
    fix: str  # ``describe_fix`` text


class RecompiledFunctions(Output):
    """The text summary's recompile section: root causes with a fix first (the same cause
    on every rank once), then the functions, most recompiled first."""

    recompiles: int
    functions: int  # how many recompiled
    causes: list[RootCauseLine]
    more_causes: int  # distinct causes with a fix beyond those listed
    shown: list[RecompiledFunction]
    hidden: int  # functions not listed (without --all)
    hidden_recompiles: int


class Summary(Output):
    """``dyn-inspect summary --json``: the run at a glance."""

    run: str
    status: str
    exit_code: int | None
    # Set when the run's compiles captured no graph at all (every frame skipped or fell
    # back to eager): said before any count, with torch's reasons; else null.
    no_graph: str | None
    command: list[str]
    duration_s: float | None
    environment: Environment
    processes: int
    ranks: list[int]
    nodes: list[NodeStatus]  # multi-node runs: each node's end
    frames: int
    compiles: int
    graphs: int
    kernels: int
    graph_breaks: Counts
    recompiles: int
    recompile_limit_hit: list[LimitHit]
    compile_time_s: float
    compile_time_by_stage_s: dict[str, float]
    cache: dict[str, int]
    breaks: list[SummaryBreak]
    ddp_splits: list[DdpSplitSite]  # graphs DDPOptimizer split at bucket boundaries (not breaks)
    compile_failures: list[FailureSite]
    stderr_tail: str | None
    recompile_list: list[RecompileRow]
    problems: list[str]
    compile_disabled: bool
    degraded: list[str]  # hooks the recorder could not use in this torch
    divergence: list[Divergence]
    rank_groups: list[RankGroup]  # the ranks grouped by what they compiled
    # ``--profile``: a profiled step's time, and without the profiler (``dyn-inspect cost``)
    step_us: float | None = None
    plain_step_us: float | None = None


# -- breaks ------------------------------------------------------------------------------


class BreakSite(Output):
    key: str
    headline: str
    type: str
    gb_id: str | None
    url: str | None
    count: int
    loc: SourceLoc | None
    in_library: bool
    user_frame: SourceLoc | None
    user_frames: list[SourceLoc | None]
    reason: str
    explanation: str
    context: str  # torch's developer debug context: what it hit (GB0112: the exception text)
    hints: list[str]
    compile_ids: list[str]
    stack: list[SourceLoc | None]


class BreaksReport(Output):
    """``dyn-inspect breaks --json``."""

    run: str
    root: str | None
    unique: int
    total: int
    breaks: list[BreakSite]
    ddp_splits: list[DdpSplitSite]  # listed apart: DDPOptimizer's cuts are no break of the user's code


# -- causes ------------------------------------------------------------------------------


class CauseSite(Output):
    file: str
    line: int
    name: str | None


class CauseFix(Output):
    code: str
    one_line: str  # ``code`` on one line (``a; b``), as the lists print it
    file: str
    after_line: int
    insert: str  # the text to insert (indented), after ``after_line``
    why: str
    keeps_behaviour: bool
    # a fix that rewrites part of line ``after_line`` instead (a tensor lr): nothing is inserted
    replaces: str | None = None
    replacement: str | None = None


class Cause(Output):
    kind: str  # "recompile" | "graph_break"
    title: str
    detail: str
    recompiles: int
    compile_time_s: float
    graph_fragments: int
    compile_ids: list[str]
    frames: list[str]
    values: list[str]
    sites: list[CauseSite]
    fix: CauseFix | None
    # where a recompile cause has no fix, the sentence that says so (every face shows it)
    no_fix: str | None = None
    # its time per profiled step (``--profile``: a break's eager code, a recompile's frames'
    # guard checks) and the sentence every face shows
    us_per_step: float | None = None
    step_cost: str | None = None


class CausesReport(Output):
    """``dyn-inspect causes --json``."""

    run: str
    causes: list[Cause]


class FixPlan(Output):
    """One fix the inspector offers for a cause (its ``fix``), as an edit an agent can apply
    and have checked: the unified diff against the file as it is now, whether the program
    keeps its behaviour, the test that proves fixes of this kind, and how this one is
    verified (``verify``: the program re-run before → after)."""

    cause: int  # the cause's number, 1-based, as ``causes`` lists them
    title: str  # the cause's title
    fix_kind: str  # inspector/analysis/fix_kinds.py: mark_dynamic, tensor_lr
    file: str  # the file the edit changes, as recorded
    path: str  # the same, relative to ``cwd`` (what the diff names: a/<path>, b/<path>)
    cwd: str  # the run's recorded directory: ``git apply`` / ``patch -p1`` the diff there (or in a copy)
    line: int  # the line the edit goes after (or rewrites, ``replaces``)
    code: str
    why: str
    keeps_behaviour: bool
    diff: str | None  # null when the file cannot be read now (``no_diff`` says why)
    no_diff: str | None
    verified_by: str | None  # the test that applies fixes of this kind to a real program and re-runs it
    verify: str  # how this edit is verified


class SitePlan(Output):
    """One fix plan of a cause (``causes --fix``): the inspector's plan for a finding of it
    (``Plan`` in inspector/reports/fix_plans.py, what the editor offers as a quick fix)
    made on its file as it is now, as a unified diff."""

    cause: int  # the cause's number, 1-based, as ``causes`` lists them
    fix_kind: str  # inspector/analysis/fix_kinds.py
    title: str  # what the edit does to the program ("…: output kept", "…: output lost", "moves the break")
    file: str  # the file the edit changes
    path: str  # the same, relative to the run's directory (what the diff names: a/<path>, b/<path>)
    line: int  # the line the fix is about
    keeps_behaviour: bool
    preferred: bool  # the finding's preferred fix (keeps the behaviour, needs no review)
    diff: str
    verified_by: str  # the test that applies fixes of this kind to a real program and re-runs it


class SitePlansReport(Output):
    """``causes --fix --json``: every fix plan for the run's causes."""

    run: str
    plans: list[SitePlan]


class FixPlansReport(Output):
    """The MCP server's ``fix_plans``: the plans of one cause, or of every cause."""

    run: str
    plans: list[FixPlan]
    # the causes asked about that have no fix, and what every face says of them
    without_fix: list[CauseTitle]


class FailuresReport(Output):
    """The MCP server's ``failures``: every compile failure site (the summary's ``failures``)."""

    run: str
    failures: list[FailureSite]


class GraphDotReport(Output):
    """The MCP server's ``graph`` with ``format="dot"``: the Graphviz text ``graph --dot`` prints."""

    run: str
    compile_id: str
    stage: str
    dot: str


# -- check -------------------------------------------------------------------------------


class CheckBreak(Output):
    type: str
    file: str
    line: int
    count: int
    user_file: str | None
    user_line: int | None


class CheckRecompile(Output):
    compile_id: str
    function: str | None
    file: str | None
    reasons: list[str]


class CheckCause(Output):
    title: str
    recompiles: int
    fix: str | None


class CheckCompileFailure(Output):
    compile_id: str
    function: str | None
    type: str
    message: str
    reason: str | None
    file: str | None
    line: int | None
    code: str | None


class CheckNewBreak(Output):
    type: str
    file: str
    line: int
    function: str
    count: int


class CheckNewRecompile(Output):
    function: str
    file: str
    kind: str
    source: str
    dim: int | None
    reason: str
    count: int


class _Check(Output, tag_field="check"):
    """One failed check; ``check`` says which (the other keys follow from it)."""


class MaxGraphBreaks(_Check, tag="max_graph_breaks"):
    limit: int
    actual: int
    items: list[CheckBreak]


class MaxRecompiles(_Check, tag="max_recompiles"):
    limit: int
    actual: int
    items: list[CheckRecompile]


class MaxCauses(_Check, tag="max_causes"):
    limit: int
    actual: int
    items: list[CheckCause]


class MaxFailures(_Check, tag="max_failures"):
    limit: int
    actual: int
    items: list[CheckCompileFailure]


class NewGraphBreaks(_Check, tag="new_graph_breaks"):
    baseline: str
    actual: int
    items: list[CheckNewBreak]


class NewRecompiles(_Check, tag="new_recompiles"):
    baseline: str
    actual: int
    items: list[CheckNewRecompile]


class MaxDivergences(_Check, tag="max_divergences"):
    limit: int
    actual: int
    items: list[Divergence]


CheckFailure = MaxGraphBreaks | MaxRecompiles | MaxCauses | MaxFailures | NewGraphBreaks | NewRecompiles | MaxDivergences


class CheckLimits(Output):
    max_graph_breaks: int | None
    max_recompiles: int | None
    max_failures: int
    max_causes: int | None


class CheckReport(Output):
    """``dyn-inspect check --json``."""

    run: str
    baseline: str | None
    ok: bool
    graph_breaks: int
    recompiles: int
    compile_failures: int
    limits: CheckLimits
    failures: list[CheckFailure]
    divergence: list[Divergence]


# -- kernels -----------------------------------------------------------------------------


class KernelProfile(Output):
    calls: int
    total_us: float
    steps: int
    us_per_step: float
    calls_per_step: float
    share_of_step: float | None
    bandwidth_gbps: float | None
    tflops: float | None
    peak_gbps: float | None
    peak_tflops: float | None


class KernelTriedConfig(Output):
    """One config the autotuner tried (``time_ms``: its benchmark; None when not timed)."""

    config: str
    time_ms: float | None
    failed: bool
    registers: int | None
    spills: int | None
    shared_bytes: int | None


class KernelCompile(Output):
    """What Triton made of a kernel (``inspector/analysis/kernel_compile.py``)."""

    # the one line every face prints: "cuda sm_90 · XBLOCK=16 num_warps=4 · 32 registers, 0 spills"
    headline: str
    target: str | None
    config: str
    block: dict[str, Any]
    num_warps: int | None
    num_stages: int | None
    registers: int | None
    spills: int | None
    shared_bytes: int | None
    autotune: str
    tried: list[KernelTriedConfig]
    triton_hash: str | None
    ir_bytes: dict[str, int]
    ir_kept: list[str]


class KernelLaunchRecord(Output):
    """Launches of one argument signature (``--profile``; else the one that autotuned)."""

    shapes: list[list[int]]
    strides: list[list[int]]
    dtypes: list[str]
    scalars: list[Any]
    grid: list[int]
    block: list[int]
    calls: int
    us_per_launch: float | None
    grid_computed: bool = False  # Inductor's Grid1D formula, where CUPTI's record is absent


class Kernel(Output):
    name: str
    compile_id: str
    log: str
    backend: str
    backward: bool
    fused_ops: list[str]
    source_nodes: list[str]
    vectorized: str | None
    isa: str | None
    lines_of_code: int | None
    source_lines: list[SourceLoc | None]
    profile: KernelProfile | None
    compile: KernelCompile | None = None
    launches: list[KernelLaunchRecord] = []
    launch_findings: list[str] = []


class Vectorization(Output):
    cpp_kernels: int
    vectorized: int
    share: float | None
    by_isa: dict[str, int]
    cpu_isa: str | None
    scalar_kernels: list[str]


class KernelReport(Output):
    """``dyn-inspect kernel NAME --json``: one kernel, the IR stages kept, one stage's text."""

    run: str
    kernel: Kernel
    stages_kept: list[str]
    stage: str | None
    text: str | None


class LibraryKernel(Output):
    """A library kernel Inductor called (``extern_kernels.mm`` → aten::mm / cuBLAS):
    profiled with its FLOPs, but not generated, so in no compile's kernel list."""

    name: str  # the demangled name without return type and parameters: "sgemm<true, 5>"
    compile_id: str | None
    backward: bool
    op: str | None
    profile: KernelProfile


class KernelsReport(Output):
    """``dyn-inspect kernels --json``."""

    run: str
    at: str | None
    sort: str | None
    kernels: list[Kernel]
    vectorization: Vectorization
    # most time per step first; only for a profiled run's whole list (not ``--at``)
    library_kernels: list[LibraryKernel] = []


# -- cost (--profile) ----------------------------------------------------------------------


class Spread(Output):
    """A figure over the steps it was measured in (µs): min, quartiles, median, and the
    median's exact order-statistic confidence interval (``confidence``: its coverage)."""

    n: int
    median_us: float
    min_us: float
    q1_us: float
    q3_us: float
    max_us: float
    low_us: float
    high_us: float
    confidence: float
    text: str  # "median 1.46 ms (IQR 1.43 ms–1.55 ms; 98% CI 1.40 ms–1.68 ms; 10 steps)"


class Verdict(Output):
    """A claim and its interval: ``resolved`` only when the interval excludes no-change
    (a ratio of 1.0, a saving of 0, a cost inside the step's own noise); ``text`` is the
    sentence every face shows."""

    resolved: bool
    value: float  # a ratio (eager / compiled) or µs (a break's cost, a fix's saving)
    low: float
    high: float
    confidence: float
    noise: float  # the interval's half-width, as a share
    steps_to_resolve: int | None  # (not resolved) about how many steps would resolve it; None: no difference found
    text: str


class Figure(Output):
    """One row of the step's split with its spread over the profiled steps."""

    what: str  # "step (profiled)", "compiled graphs", ...
    us_per_step: float  # the window's mean
    spread: Spread | None  # None: a run recorded before per-step samples were kept
    text: str  # the sentence every face shows: "compiled graphs: 1.30 ms/step, median ..."


class NoiseReport(Output):
    """The machine while the steps were timed (``--profile``): other load, steal, threads."""

    cpus: int
    threads: int
    omp_num_threads: str | None
    compile_threads: int | None
    load_avg: float | None
    others_busy_cpus: float | None
    steal_share: float | None
    busy: bool
    oversubscribed: bool
    text: str
    fix: str | None


class RegionCost(Output):
    """One compiled region's host time per step (µs): its graph, the eager code Dynamo left
    in the frame, the guard check before it and the wrappers around the graph."""

    compile_id: str
    function: str | None
    resume: bool  # a resume function (the code after a graph break)
    calls_per_step: float
    us_per_step: float  # inclusive: regions nested in it too
    compiled_us: float
    eager_us: float
    guards_us: float
    overhead_us: float
    nested: list[str]  # compile ids of the regions entered from inside it
    device_us: float = 0.0  # GPU time of its graph's kernels (CUDA runs)
    spread: Spread | None = None  # its time (us_per_step) over the profiled steps
    device_wait_us: float = 0.0  # CUDA runs: its eager code's wait for the device (not in eager_us)


class BackwardCost(Output):
    compile_id: str | None  # the compile whose backward graph it is
    function: str | None
    us_per_step: float
    compiled_us: float
    device_us: float = 0.0  # GPU time of its kernels (CUDA runs)
    spread: Spread | None = None


class BreakCost(Output):
    """What a graph break costs per step: the eager code between the graphs it splits and
    its resume functions' guard checks and wrappers. ``text`` is the sentence every face shows."""

    type: str
    reason: str
    file: str
    line: int
    us_per_step: float
    eager_us: float
    resume_us: float
    share_of_step: float | None
    between: list[list[str]]  # [region compile id, resume compile id]
    text: str
    spread: Spread | None = None  # its cost in each profiled step
    verdict: Verdict | None = None  # against the step's own noise (None: no per-step samples)
    device_wait_us: float = 0.0  # CUDA runs: the wait for the work queued before it (not in us_per_step)


class StepBreakdown(Output):
    """One profiled process: a step's wall time and where it went (µs per step)."""

    log: str
    rank: int | None  # the process's rank in a torchrun job
    steps: int
    step_us: float  # under the profiler
    plain_step_us: float | None  # the steps right after, without the profiler (None: the program ended first)
    plain_steps: int
    profiler_slowdown: float | None  # step_us / plain_step_us
    device: str
    compiled_us: float  # in compiled graphs, forward and backward
    device_us: float  # GPU time of those graphs' kernels (0 on CPU)
    eager_in_regions_us: float  # eager code inside compiled frames (graph breaks), less device_wait_us
    guards_us: float  # guard checks (cache lookups)
    overhead_us: float  # Dynamo's and AOTAutograd's wrappers
    outside_us: float  # in no compiled region: loss, optimizer, data, eager Python
    regions: list[RegionCost]
    backward: list[BackwardCost]
    breaks: list[BreakCost]
    figures: list[Figure] = []  # the step and its split, each with its spread
    ab: EagerComparison | None = None  # compiled against eager in this process (interleaved blocks)
    ab_note: str | None = None  # why there is no in-process comparison
    noise: NoiseReport | None = None
    device_wait_us: float = 0.0  # CUDA runs: eager code in compiled frames waiting for the device


class FunctionSpeed(Output):
    """One callable ``torch.compile`` returned, per call in both runs (µs, under the profiler)."""

    function: str
    compiled_us: float
    eager_us: float
    slower_compiled: bool
    text: str


class EagerComparison(Output):
    """``cost --eager RUN``: the step against the same program run eagerly (µs per step)."""

    eager_run: str
    compiled_us: float
    eager_us: float
    measured: str  # "without the profiler" | "under the profiler"
    speedup: float
    saved_us: float
    compile_time_s: float
    pays_back_after_steps: int | None  # None: compiling saves nothing per step
    text: str
    functions: list[FunctionSpeed] = []  # slowest compiled (against eager) first
    in_process: bool = False  # True: interleaved with the compiled steps in one process; False: another run (less reliable)
    compiled_spread: Spread | None = None
    eager_spread: Spread | None = None
    verdict: Verdict | None = None  # the ratio eager / compiled and its interval


class CostReport(Output):
    """``dyn-inspect cost --json``: empty ``processes`` (and ``message``) for a run
    recorded without ``--profile``."""

    run: str
    processes: list[StepBreakdown]
    message: str | None = None
    eager: EagerComparison | None = None


# -- diff --------------------------------------------------------------------------------


class DiffBreak(Output):
    gb_type: str
    file: str
    function: str
    code: str
    line: int


class DiffRecompile(Output):
    file: str
    function: str
    kind: str
    source: str
    dim: int | None
    example: str


class DiffKernel(Output):
    backend: str
    name: str
    fused_ops: list[str]


class DiffBreakCount(DiffBreak):
    count: int


class DiffBreakChange(DiffBreak):
    count_a: int
    count_b: int


class DiffRecompileCount(DiffRecompile):
    count: int


class DiffRecompileChange(DiffRecompile):
    count_a: int
    count_b: int


class DiffKernelCount(DiffKernel):
    count: int


class DiffKernelChange(DiffKernel):
    count_a: int
    count_b: int


class BreakChanges(Output):
    added: list[DiffBreakCount]
    removed: list[DiffBreakCount]
    changed: list[DiffBreakChange]
    unchanged: int


class RecompileChanges(Output):
    added: list[DiffRecompileCount]
    removed: list[DiffRecompileCount]
    changed: list[DiffRecompileChange]
    unchanged: int


class DiffKernelFacts(Output):
    """One run's side of a kernel's change: the config it ran with (``config_text``),
    registers per thread, spilled registers, shared memory, bytes per IR stage, the target
    and the profiled time per step; null (``ir_bytes``: {}) where that run did not record it."""

    config: str | None
    registers: int | None
    spills: int | None
    shared_bytes: int | None
    ir_bytes: dict[str, int]
    target: str | None
    us_per_step: float | None


class DiffKernelMetaChange(DiffKernel):
    """A kernel in both runs (same identity, compile id and direction) whose compile
    metadata or cost differs; ``changed`` names what: ``config``, ``registers``,
    ``spills``, ``shared_bytes``, ``target``, ``ir_bytes.<stage>``, ``us_per_step``."""

    compile_id: str
    backward: bool
    a: DiffKernelFacts
    b: DiffKernelFacts
    changed: list[str]


class KernelChanges(Output):
    added: list[DiffKernelCount]
    removed: list[DiffKernelCount]
    changed: list[DiffKernelChange]
    unchanged: int
    meta_changed: list[DiffKernelMetaChange] = []  # informative: ``check --baseline`` does not gate on them


class StageTime(Output):
    stage: str
    a_s: float
    b_s: float
    delta_s: float


class FrameTime(Output):
    frame: str
    a_s: float
    b_s: float
    delta_s: float


class CompileTimeDiff(Output):
    a_s: float
    b_s: float
    delta_s: float
    by_stage: list[StageTime]
    by_frame: list[FrameTime]


class DiffReport(Output):
    """``dyn-inspect diff --json``."""

    a: str
    b: str
    graph_breaks: BreakChanges
    recompiles: RecompileChanges
    kernels: KernelChanges
    compile_time: CompileTimeDiff


# -- recompiles --------------------------------------------------------------------------


class GuardFailure(Output):
    kind: str  # a GuardKind: "size", "dtype", "scalar", ...
    text: str
    entry: str | None
    source: str | None
    dim: int | None
    expected: str | None
    actual: str | None
    user_code: str | None
    where: str | None
    hint: str | None


class Suggestion(Output):
    text: str
    code: str | None
    kind: str | None = None  # the fix kind of ``code`` (inspector/analysis/fix_kinds.py)


class GuardDiffLine(Output):
    sign: Literal["~", "+", "-"]  # a guard whose check changed; new in the later entry; gone from it
    text: str


class GuardDiffBrief(Output):
    """A recompile's cache-entry guards against the previous compile's, as lines."""

    before: str  # compile ids
    after: str
    problem: str | None  # one side has no recorded guards
    unchanged: int
    lines: list[GuardDiffLine]  # changed, then added, then removed


class TimelineEntry(Output):
    index: int
    compile_id: str
    t: float | None
    outcome: str | None
    compile_time_s: float
    failures: list[GuardFailure]
    suggestion: Suggestion | None
    limit_reached: bool
    is_recompile: bool = False
    # against the previous compile's guards: built for the TUI's timeline, None in `--json`
    guard_diff: GuardDiffBrief | None = None


class RecompiledFrame(Output):
    function: str
    file: str | None
    line: int | None
    def_line: int | None
    log: str
    compiles: int
    recompiles: int
    recompile_limit: int | None
    limit_reached: bool
    timeline: list[TimelineEntry]


class RecompilesReport(Output):
    """``dyn-inspect recompiles --json``."""

    run: str
    recompiles: int
    limit_hits: int
    recompile_limit_hits: int  # the same: the name `runs --json` uses
    frames: list[RecompiledFrame]


# -- graph -------------------------------------------------------------------------------


class GraphNode(Output):
    name: str
    op: str | None
    target: str | None
    dtype: str | None
    shape: str | None
    stride: str | None
    device: str | None
    file: str | None
    line: int | None
    function: str | None
    code: str | None
    inputs: list[str]


class GraphReport(Output):
    """``dyn-inspect graph --json``."""

    run: str
    compile_id: str
    log: str
    stage: str
    stages: list[str]
    nodes: list[GraphNode]
    edges: list[list[str]]
    op_histogram: dict[str, int]


class NodeChange(Output):
    node: str
    before: str
    after: str


class GraphDiffReport(Output):
    """``dyn-inspect graph --diff --json``."""

    run: str
    a: str
    b: str
    stage: str
    nodes_a: int
    nodes_b: int
    ops_added: dict[str, int]
    ops_removed: dict[str, int]
    changed: list[NodeChange]


# -- cache -------------------------------------------------------------------------------


class CacheLookup(Output):
    cache: str
    state: str
    key: str | None
    reason: str | None
    time_saved_s: float | None
    time_taken_s: float | None
    triton_kernels: list[str]
    # the one line every face prints: "FX graph: hit (saved 25.8 s)", "AOTAutograd: bypass — …"
    text: str = ""


class MissDiffers(Output):
    compile_id: str
    components: list[str]
    words: list[str] = []  # each component in words: "gm (the graph's code)"


class CompileCache(Output):
    compile_id: str
    log: str
    function: str
    verdict: str
    why_compiled: str | None
    lookups: list[CacheLookup]
    miss_differs_from: MissDiffers | None


class CacheReport(Output):
    """``dyn-inspect cache --json``."""

    run: str
    warm: bool
    time_saved_s: float
    story: list[str]
    cold: str | None  # why nothing came from the cache (None when something did)
    compiles: list[CompileCache]


# -- the compile timeline (the TUI's Timeline view) -------------------------------------


class CompileTimelineRow(Output):
    """One compile as the timeline tells it."""

    log: str
    compile_id: str
    function: str
    file: str | None  # the compiled function's def
    line: int | None
    t: float  # seconds since the run started
    what: str  # "compiled", "recompiled", "compiled (graph break)", "failed → runs eagerly", …
    why: str  # the recompile's failed guard, the failure
    is_recompile: bool
    cache: str  # "hit", "miss", "bypass", "none" (from the lookups' flags: no payload read)
    seconds: float  # the compile's time (what Recompiles and the summary give)


class TimeSpan(Output):
    """One of torch's timing spans of a compile, in the order of a depth-first walk."""

    name: str  # torch's span name ("inductor_compile")
    depth: int
    seconds: float
    share: float  # of the compile's spans' total
    cache_state: str | None
    unfinished: bool  # began, never ended: the process died (or is still) mid-compile


# -- shapes ------------------------------------------------------------------------------


class ShapeSymbol(Output):
    symbol: str
    name: str
    source: str | None
    value: str | None
    range: str | None
    loc: SourceLoc | None
    specialized: bool
    # when it was specialized: the constant it became and the line that did it
    static_value: str | None = None
    static_loc: SourceLoc | None = None


class ShapeSpecialization(Output):
    symbol: str
    name: str
    source: str | None
    value: str | None
    reason: str | None
    loc: SourceLoc | None
    text: str


class ShapeGuard(Output):
    expr: str
    readable: str
    loc: SourceLoc | None
    # in the guard tree torch checks at call time; false: logged while compiling only (a
    # backward's equalities); null: no guard tree recorded to compare with
    installed: bool | None = None


class DimAccepted(Output):
    """One dim of an input with a dynamic dim, as the compile's guard tree accepts it."""

    source: str  # torch's: "L['x'].size()[0]"
    name: str  # "x.shape[0]"
    low: int
    high: int | None  # null: no upper bound
    dynamic: bool  # false: the tree fixes it (low == high)
    text: str  # "2..4096", "= 3", ">= 2"


class CompileShapes(Output):
    compile_id: str
    log: str
    function: str
    automatic_dynamic: bool
    symbols: list[ShapeSymbol]
    specializations: list[ShapeSpecialization]
    guards: list[ShapeGuard]
    # the sizes that reuse this compile (from its guard tree; empty when none was recorded)
    accepts: list[DimAccepted] = []


class ShapesReport(Output):
    """``dyn-inspect shapes --json``."""

    run: str
    compiles: list[CompileShapes]


# -- code --------------------------------------------------------------------------------


class ResumeFunction(Output):
    name: str
    function: str
    line: int
    loc: SourceLoc | None
    compiles: list[str]


class BytecodeBlock(Output):
    line: int | None
    original: list[str]  # instructions as dis prints them, ">>" marking a jump target
    modified: list[str]
    source: str | None = None  # the user line's text (None: not readable here)


class GuardGroup(Output):
    source: str | None
    guards: list[str]


class CodeReport(Output):
    """``dyn-inspect code --json``."""

    compile_id: str
    function: str
    resume: ResumeFunction | None
    creates: list[ResumeFunction]
    blocks: list[BytecodeBlock]
    guards: list[GuardGroup]
    file: str | None = None  # the compiled function's def
    line: int | None = None
    guard_count: int = 0


# -- runs --------------------------------------------------------------------------------


class RunRow(Output, kw_only=True):
    """One run of ``runs --json``. An unreadable run has only ``id``, ``path``, ``latest``,
    ``status`` ("unreadable") and ``error``; a readable one every key but ``error``."""

    id: str
    path: str
    latest: bool
    started: float | None | UnsetType = UNSET
    command: list[str] | UnsetType = UNSET
    status: str
    exit_code: int | None | UnsetType = UNSET
    duration_s: float | None | UnsetType = UNSET
    processes: int | UnsetType = UNSET
    frames: int | UnsetType = UNSET
    compiles: int | UnsetType = UNSET
    graph_breaks: Counts | UnsetType = UNSET
    recompiles: int | UnsetType = UNSET
    recompile_limit_hits: int | UnsetType = UNSET
    kernels: int | UnsetType = UNSET
    compile_time_s: float | UnsetType = UNSET
    problems: int | UnsetType = UNSET
    error: str | UnsetType = UNSET


class RunsReport(Output):
    """``dyn-inspect runs --json``."""

    runs_dir: str
    runs: list[RunRow]


class PruneReport(Output):
    """``dyn-inspect runs --prune --json``."""

    runs_dir: str
    deleted: list[str]
    kept_live: list[str]


# -- import / merge ----------------------------------------------------------------------


class ImportedProcess(Output):
    log: str
    pid: int
    rank: int | None
    records: int
    events: int
    compiles: int


class SkippedLines(Output):
    not_glog: int
    bad_json: int


class ImportedFile(Output):
    file: str
    processes: list[ImportedProcess]
    records: int
    skipped_lines: SkippedLines
    md5_mismatches: int
    truncated: bool
    kept_raw: dict[str, int]
    normalizer_failures: int


class Import(Output):
    run: str
    source: str
    files: list[ImportedFile]
    skipped_files: list[str]
    events: int
    duration_s: float


class MergedLog(Output):
    log: str
    from_: str = msgspec.field(name="from")
    node: int
    rank: int | None
    events: int
    skipped_lines: int


class Merge(Output):
    run: str
    inputs: list[str]
    nodes: list[int]
    clock_offsets_s: dict[str, float]
    logs: list[MergedLog]
    events: int
    blobs: int
    notes: list[str]
    duration_s: float


class ImportReport(Output):
    """``dyn-inspect import --json`` of one file or directory."""

    import_: Import = msgspec.field(name="import")
    summary: Summary


class ImportNodesReport(Output):
    """``dyn-inspect import --json`` of several nodes' directories (imported, then merged)."""

    import_: list[Import] = msgspec.field(name="import")
    merge: Merge
    summary: Summary


class MergeReport(Output):
    """``dyn-inspect merge --json``."""

    merge: Merge
    summary: Summary


# -- verify (also the run's verify.json and the LSP's dynInspect.verify result) ------------


class VerifyCounts(Output):
    breaks_unique: int
    breaks_total: int
    recompiles: int
    limit_hits: int
    recompile_limit_hits: int  # the same: the name `runs --json` uses
    causes: int
    failures: int  # failed compiles
    compile_time_s: float
    step_us: float | None = None  # a profiled step's time (``--profile``; the first profiled process)


class FixedCause(Output):
    title: str
    kind: str
    recompiles: int
    us_per_step: float | None = None  # what it cost per profiled step before the fix
    # the lines an editor marks "fixed ✓", in the run before the fix: the fix's own line
    # first (where the editor showed the cause), then each line the cause showed at
    marks: list[CauseSite] = []


class CauseTitle(Output):
    title: str
    kind: str
    # a break's time per profiled step before and after (``--profile`` runs)
    us_per_step_before: float | None = None
    us_per_step_after: float | None = None


class VerifyFailure(Output):
    """A compile failure at one place, as verify compares them (``file`` as the run's
    cwd shows it)."""

    fail_type: str
    headline: str
    file: str
    line: int
    count: int


class VerifyException(Output):
    """The uncaught exception a run ended with, at its innermost user frame."""

    type: str
    message: str  # its first line
    file: str | None
    line: int | None


class VerifyReport(Output):
    """``dyn-inspect verify --json`` (the same as the new run's ``verify.json``).

    ``state`` is ``verified`` only when the re-run ended like the recorded run (exit 0, or
    the recorded run's exit code with the same uncaught exception), ran to its end (not
    stopped, killed or timed out) and had no compile failure the recorded run did not
    have; ``reason`` says why not. ``fixed`` lists the causes gone from the re-run: a face
    marks them "fixed ✓" only in a verified report."""

    before_run: str
    after_run: str
    state: Literal["verified", "not_verified"]
    reason: str | None
    rerun_cwd: str  # the directory the program was re-run in
    rerun_command: list[str]  # the program's command, as recorded (its script mapped into rerun_cwd)
    rerun_cwd_note: str | None  # why that directory, when it is not the recorded run's
    before: VerifyCounts
    after: VerifyCounts
    fixed: list[FixedCause]
    remaining: list[CauseTitle]
    new: list[CauseTitle]
    breaks_removed: int
    breaks_added: int
    failures_gone: list[VerifyFailure]
    failures_remaining: list[VerifyFailure]  # where the re-run had them
    failures_new: list[VerifyFailure]
    exit_code: int
    before_exit_code: int | None
    exception: VerifyException | None  # the re-run's uncaught exception
    stopped_when_settled: bool
    # the counts before → after in one line, as the editor's and the TUI's verdicts say it
    # ("recompiles 5 → 0, graph breaks 3 → 3, compile failures 0 → 0, step (profiled) …")
    changes: str = ""
    # the step before → after with its interval: "saves …" only when it excludes no change
    step_change: Verdict | None = None
