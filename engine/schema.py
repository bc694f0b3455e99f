"""The event-log schema: one msgspec Struct per event kind.

This module is the single definition of what a run's log may hold. Writers (the live
recorder and the TORCH_TRACE importer) produce these structs; readers decode them. A new
event kind is one Struct here plus one normalizer in ``normalizers/``. ``docs/event-log.md``
describes the same thing for humans; ``dyn-inspect schema`` prints the JSON Schema made from
this module.

Bump ``SCHEMA_VERSION`` when a field changes meaning or a required field is added; adding
an optional field or a new kind keeps the version (old readers keep unknown kinds raw).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

SCHEMA_VERSION = 1


class Loc(msgspec.Struct, omit_defaults=True, frozen=True):
    """A source location: absolute path, 1-based line, 0-based columns where known."""

    file: str
    line: int
    name: str | None = None
    col: int | None = None
    end_col: int | None = None
    code: str | None = None  # the line's text when recorded: lets readers detect stale lines


class Blob(msgspec.Struct, frozen=True):
    """A content-addressed payload stored once under ``blobs/``."""

    digest: str
    size: int


class Event(msgspec.Struct, tag_field="kind", kw_only=True, omit_defaults=True):
    """Common fields: ``t`` wall time (s since epoch); ``cid`` the compile id "frame/n"."""

    t: float = 0.0
    cid: str | None = None


# --- process and run lifetime -------------------------------------------------------


class LogHeader(Event, tag="log_header"):
    schema: int
    writer: str
    pid: int
    source: Literal["live", "import"] = "live"
    origin: str | None = None  # for imports: the TORCH_TRACE file


class InductorCacheDir(msgspec.Struct, omit_defaults=True):
    """Inductor's cache directory when the process's first compile started (engine/cache_dir.py)."""

    path: str
    exists: bool = True
    fx_graph_entries: int = 0  # counted up to cache_dir.CAP
    aotautograd_entries: int = 0


class ProcessStart(Event, tag="process_start"):
    argv: list[str]
    cwd: str
    pid: int
    ppid: int
    executable: str
    python: str
    platform: str
    hostname: str
    torch: str | None = None
    triton: str | None = None
    cuda: str | None = None
    cuda_driver: str | None = None
    devices: list[str] = []
    cpu: str | None = None
    cpu_isa: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    world_size: int | None = None
    # Multi-node jobs: torchrun's GROUP_RANK (the node) and TORCHELASTIC_RUN_ID (the job).
    node_rank: int | None = None
    job_id: str | None = None
    # Set by ``dyn-inspect merge``: seconds added to every ``t`` of this log to align the
    # node's clock with the reference rank's (docs/ranks-and-import.md).
    clock_offset_s: float | None = None
    compile_disabled: bool = False
    provenance: bool = False  # kernel → line wanted (not DYN_INSPECT_PROVENANCE=0); whether it took: hooks
    inductor_cache: InductorCacheDir | None = None  # as the first compile found it
    config: dict[str, Any] = {}
    hooks: dict[str, str] = {}  # torch_compat: hook → "active" | "off" | "degraded: what is lost (why)"


class ExceptionInfo(msgspec.Struct, omit_defaults=True):
    type: str
    message: str
    traceback: str
    loc: Loc | None = None


class ProcessEnd(Event, tag="process_end"):
    duration_s: float
    exit_code: int | None = None
    exception: ExceptionInfo | None = None
    # Read at exit, once the program itself initialized CUDA (never forced at start).
    devices: list[str] = []
    cuda_driver: str | None = None
    hooks: dict[str, str] = {}  # torch_compat's hooks at exit (one may have turned off mid-run)


class RunStart(Event, tag="run_start"):
    """Written by the launcher (the parent), never by the recorded program."""

    command: list[str]
    cwd: str
    mode: Literal["script", "module", "command", "import", "notebook"]
    tool_version: str
    compile_disabled: bool = False
    profile_steps: int = 0  # ``--profile N`` (0: not profiled): verify profiles its re-run the same
    kernel_ir: bool = False  # ``--kernel-ir``: Triton kernels' IR stages kept


class RunEnd(Event, tag="run_end"):
    exit_code: int
    duration_s: float
    signal: int | None = None


# --- compilation ----------------------------------------------------------------------


class CompileStart(Event, tag="compile_start"):
    frame_id: int | None = None
    attempt: int = 0
    stack: list[Loc] = []
    # torch._dynamo.config.recompile_limit when this compile started (live runs only): the
    # program may change it at any time, so the value at process start can be wrong.
    recompile_limit: int | None = None


class StageTimes(msgspec.Struct, omit_defaults=True, frozen=True):
    total_s: float | None = None
    dynamo_s: float | None = None
    aot_s: float | None = None
    inductor_s: float | None = None
    codegen_s: float | None = None


Outcome = Literal["graph", "graph_break", "empty", "skipped", "failed", "recompile_limit"]


class Capture(Event, tag="capture"):
    """One frame compilation finished (torch's compilation_metrics)."""

    co_name: str | None = None
    co_filename: str | None = None
    co_firstlineno: int | None = None
    outcome: Outcome = "graph"
    graph_op_count: int | None = None
    graph_node_count: int | None = None
    graph_input_count: int | None = None
    guard_count: int | None = None
    shape_env_guard_count: int | None = None
    cache_size: int | None = None
    accumulated_cache_size: int | None = None
    times: StageTimes = StageTimes()
    fail_type: str | None = None
    fail_reason: str | None = None
    fail_loc: Loc | None = None
    restart_reasons: list[str] = []
    recompile_reason: str | None = None
    graph_breaks: int = 0
    fx_cache_hits: int = 0
    fx_cache_misses: int = 0
    aot_cache_hits: int = 0
    aot_cache_misses: int = 0
    metrics: Blob | None = None  # the whole compilation_metrics record, nothing dropped


class BackwardCapture(Event, tag="bwd_capture"):
    times: StageTimes = StageTimes()
    metrics: Blob | None = None


class GraphBreak(Event, tag="graph_break"):
    key: str  # stable dedup key: gb type + innermost file + line
    gb_type: str
    loc: Loc  # innermost location (may be inside an inlined function or a library)
    gb_id: str | None = None
    url: str | None = None
    reason: str = ""
    explanation: str = ""
    context: str = ""  # torch's "Developer debug context": what it hit (GB0112: the exception)
    hints: list[str] = []
    user_stack: list[Loc] = []  # outermost first, through inlined calls
    text: Blob | None = None


class Recompile(Event, tag="recompile"):
    reasons: list[str]  # one per failed cache entry, "0/0: tensor 'x' size mismatch ..."
    text: Blob | None = None  # torch's whole payload (with user stacks on 2.11+)


class RecompileLimit(Event, tag="recompile_limit"):
    """The frame hit the recompile limit and runs eagerly from now on (torch says no more)."""

    co_name: str | None = None
    co_filename: str | None = None
    co_firstlineno: int | None = None
    reason: str = ""


class Guards(Event, tag="guards"):
    count: int
    text: Blob
    latency_us: float | None = None


GraphStage = Literal[
    "dynamo",
    "aot_joint",
    "aot_fw",
    "aot_bw",
    "aot_inference",
    "pre_grad_before",
    "pre_grad",
    "joint_before",
    "joint",
    "post_grad_before",
    "post_grad",
]


class Graph(Event, tag="graph"):
    stage: str  # one of GraphStage; str so that a new torch stage is kept, not rejected
    code: Blob
    node_count: int = 0
    op_counts: dict[str, int] = {}


class OutputCode(Event, tag="output_code"):
    code: Blob
    path: str | None = None
    backward: bool = False
    kernels: list[str] = []


class Kernel(Event, tag="kernel"):
    name: str
    backend: Literal["cpp", "triton", "cuda", "other"]
    source: Blob
    backward: bool = False
    fused_ops: list[str] = []  # ATen ops Inductor names in "Original ATen: [...]"
    source_nodes: list[str] = []  # "Topologically Sorted Source Nodes: [...]"
    vectorized: str | None = None  # CPU: "avx512", "avx2", "neon", "vec" or None when scalar
    lines: int = 0


class KernelLaunch(msgspec.Struct, omit_defaults=True):
    """The arguments of a kernel's launches that shared one signature: per argument its
    shape, stride and dtype (tensors) or value (scalars, in ``scalars``; None for a tensor),
    the grid and block the GPU ran (CUPTI), and how many launches and how long they took."""

    shapes: list[list[int]] = []
    strides: list[list[int]] = []
    dtypes: list[str] = []
    scalars: list[Any] = []
    grid: list[int] = []
    block: list[int] = []
    calls: int = 0
    total_us: float = 0.0


class KernelConfig(msgspec.Struct, omit_defaults=True):
    """One Triton config of a kernel (Inductor's ``triton.Config``): its block sizes
    (``kwargs``: XBLOCK, R0_BLOCK, ...), warps and stages, and what the compiled binary
    uses: registers per thread, spilled registers, shared memory in bytes. ``time_ms`` is
    the autotuner's benchmark of this config (None: not benchmarked; ``failed``: it could not
    run, e.g. out of resources)."""

    kwargs: dict[str, Any] = {}
    num_warps: int | None = None
    num_stages: int | None = None
    n_regs: int | None = None
    n_spills: int | None = None
    shared: int | None = None
    time_ms: float | None = None
    failed: bool = False


class KernelMeta(Event, tag="kernel_meta"):
    """A Triton kernel's compile metadata, from Inductor's ``CachingAutotuner`` in this
    process (engine/kernel_meta.py): the config it runs with (``chosen``), the configs the
    autotuner tried with their timings (``tried``; ``autotune``: "benchmark" when it timed
    several configs, "coordesc" for coordinate-descent tuning, None for a single config),
    the compile target ("cuda sm_90"), the Triton cache hash, and the size in bytes of
    each IR stage in Triton's cache (``ir_bytes``). ``ir`` holds the stages' text
    (ttir, ttgir, llir, ptx, sass) when the run asked for them (``--kernel-ir``). Written
    after the kernel's first launch, once its autotuning is done; a later event for the
    same (cid, name, backward) replaces an earlier one. ``first_launch``: that launch's
    arguments (shapes, strides, dtypes, scalars), what a repro builds its inputs from."""

    name: str
    backward: bool = False
    target: str | None = None
    warp_size: int | None = None
    chosen: KernelConfig | None = None
    tried: list[KernelConfig] = []
    autotune: str | None = None
    triton_hash: str | None = None
    module_path: str | None = None  # the kernel's Python module in Inductor's cache
    ir_bytes: dict[str, int] = {}
    ir: dict[str, Blob] = {}
    first_launch: KernelLaunch | None = None


class KernelProvenance(Event, tag="kernel_provenance"):
    """Which user source lines each kernel came from (Inductor provenance tracking)."""

    kernels: dict[str, list[Loc]]
    backward: bool = False
    # "provenance": Inductor's provenance tracking; "graph": the post-grad graph's
    # "# File:" comments of each kernel's source nodes (when provenance has none, e.g.
    # the backward never compiled). Provenance, when it comes, replaces the graph's lines.
    origin: str = "provenance"


class PathAlias(Event, tag="path_alias"):
    """A path that a cached artifact (warm Inductor cache) named, and this run's file it
    stands for: readers show ``here`` wherever ``recorded`` appears (graph node sources)."""

    recorded: str
    here: str


class NotebookCell(Event, tag="notebook_cell"):
    """A notebook cell this run executed (``%load_ext dyn_inspect``): the file name IPython
    compiled it under (``/tmp/ipykernel_<pid>/<hash>.py``, ``<ipython-input-N-…>``), its
    execution count, and its source (the file is not on disk). Readers show ``file`` as
    ``cell [N]``."""

    file: str
    cell: int
    source: str


class Symbol(Event, tag="symbol"):
    symbol: str
    value: str | None = None
    range: str | None = None
    source: str | None = None
    loc: Loc | None = None


class Specialization(Event, tag="specialization"):
    symbol: str
    value: str | None = None
    reason: str | None = None
    source: str | None = None
    loc: Loc | None = None


class ShapeGuard(Event, tag="shape_guard"):
    expr: str
    loc: Loc | None = None


class Bytecode(Event, tag="bytecode"):
    function: str
    which: Literal["original", "modified"]
    code: Blob


class CacheEvent(Event, tag="cache"):
    cache: str  # "fx_graph", "aotautograd", ...
    hit: bool
    bypass: bool = False  # torch did not use the cache at all (neither hit nor miss)
    key: str | None = None
    detail: Blob | None = None


class Artifact(Event, tag="artifact"):
    """A named artifact without a dedicated kind (fx_graph_runnable, configs, ...)."""

    name: str
    encoding: str | None = None
    payload: Blob | None = None


class Chromium(Event, tag="chromium"):
    name: str
    ph: str
    ts: float  # µs since the epoch (torch's clock for these events)
    cat: str | None = None
    args: dict[str, Any] = {}
    dur: float | None = None  # µs, for complete ("X") events


class DdpSplit(Event, tag="ddp_split"):
    """DDPOptimizer split a captured graph at DDP's gradient-bucket boundaries
    (``optimize_ddp_split_graph``): one compiled graph per bucket, a split the user's code
    did not cause. The caps are DDP's, read live off the active DDP module (None when
    imported from a TORCH_TRACE, which does not hold them)."""

    graph: Blob | None = None  # the split graph, calling submod_0 … submod_N
    bucket_bytes_cap: int | None = None  # DDP(bucket_cap_mb=…) in bytes
    first_bucket_bytes: int | None = None  # DDP's smaller cap for the first bucket to all-reduce


class DdpBucket(Event, tag="ddp_bucket"):
    """One graph of a ``ddp_split`` (``optimize_ddp_split_child``), in graph order."""

    name: str  # torch's submodule name: submod_0, submod_1, …
    graph: Blob | None = None
    param_bytes: int | None = None  # its parameters' bytes from their shapes; None: a shape unknown
    params: list[str] = []  # the parameter inputs as Dynamo named them
    loc: Loc | None = None  # the first source line of its code: where the bucket begins


class Raw(Event, tag="raw"):
    """Anything torch emitted that has no normalizer: kept whole, nothing dropped."""

    torch_kind: str
    metadata: dict[str, Any] = {}
    payload: Blob | None = None


class KernelProfile(Event, tag="kernel_profile"):
    """Per-kernel steady-state time from torch.profiler (``--profile-kernels``).

    One event per (kernel name, compiled graph, forward/backward) over ``steps`` profiled
    steps. ``cid`` is set when the profiler saw the graph's compile id (forward graphs);
    ``graph`` is the FX graph cache key of the enclosing ``CompiledFxGraph`` call, which
    also identifies backward graphs. ``op`` is the ATen op that launched a library
    (extern) kernel — cuBLAS/cuDNN on GPU, ``aten::mm`` etc. on CPU; None for kernels
    Inductor generated. ``gb``/``flop`` are per call (Inductor's byte estimate; the
    profiler's FLOP count for matmuls and convolutions); the rates are achieved over
    ``total_us``, and the peaks are the device's ceilings they compare against.
    """

    name: str
    calls: int
    total_us: float
    steps: int
    device: str | None = None
    backward: bool = False
    graph: str | None = None
    op: str | None = None
    gb: float | None = None
    flop: float | None = None
    bandwidth_gbps: float | None = None
    tflops: float | None = None
    peak_gbps: float | None = None
    peak_tflops: float | None = None
    step_us: float | None = None  # wall time of one profiled step (mean), the same on every event
    launch: str | None = None  # Triton: the launch config the autotuner picked ("XBLOCK=128 num_warps=4 ...")
    launches: list[KernelLaunch] = []  # Triton: the launches by argument signature, most frequent first
    n_regs: int | None = None  # registers per thread and static shared memory, from CUPTI
    shared: int | None = None


class RegionTime(msgspec.Struct, omit_defaults=True):
    """One compiled region (``Torch-Compiled Region: <cid>``) over a ``StepProfile``'s window.

    ``total_us`` is inclusive; it splits into ``compiled_us`` (the compiled graph's call),
    ``overhead_us`` (Dynamo's and AOTAutograd's wrappers around it), the regions entered
    from inside it (``nested``: resume functions and frames the code calls, with the guard
    checks before them) and ``eager_us``, the rest: Python bytecode Dynamo left to run
    eagerly in this frame (the instruction a graph break stopped at, and what it runs), less
    ``device_wait_us`` (on a GPU: its wait for the work queued before). ``lookup_us`` is
    the guard checks (``TorchDynamo Cache Lookup``) before each entry."""

    cid: str
    calls: int
    total_us: float
    compiled_us: float = 0.0
    overhead_us: float = 0.0
    eager_us: float = 0.0
    lookup_us: float = 0.0
    lookups: int = 0
    nested: list[str] = []  # cids entered from inside, in first-seen order
    top_level: bool = True  # False: only ever entered from inside another region
    graphs: list[str] = []  # FX-graph cache keys of the graphs it called
    device_us: float = 0.0  # GPU time of the kernels its graph launched (CUDA runs)
    # CUDA runs: host time its eager code waited for the device (a `.item()`'s copy, a
    # synchronize): the queued GPU work of the graph before, not part of ``eager_us``
    device_wait_us: float = 0.0


class BackwardTime(msgspec.Struct, omit_defaults=True):
    """One compiled backward graph (``CompiledFunctionBackward``) over the window."""

    graph: str | None  # its FX-graph cache key (None: the profiler did not name one)
    calls: int
    total_us: float
    compiled_us: float = 0.0  # in the graph's call, the rest is AOTAutograd's wrapper
    device_us: float = 0.0  # GPU time of the kernels it launched (CUDA runs)


class CallTime(msgspec.Struct, omit_defaults=True):
    """The outermost calls of one callable ``torch.compile`` returned, over the window."""

    function: str  # "Net.forward (train.py:33)"
    calls: int
    total_us: float


class StepSlice(msgspec.Struct, omit_defaults=True):
    """One profiled step on its own (``StepProfile.per_step``): the same split as the
    window's, over the profiler events that began in this step (from one entry of the anchor
    to the next). ``step_us`` is the step's wall time; the rest are its own totals (µs)."""

    step_us: float
    regions: list[RegionTime] = []
    backward: list[BackwardTime] = []
    outside_us: float = 0.0
    missed_lookup_us: float = 0.0
    calls: list[CallTime] = []


class ProfileNoise(msgspec.Struct, omit_defaults=True):
    """What else the machine did while the steps were timed (``--profile N``, from the
    profiled window's start to the unprofiled steps' end): the load and the threads that
    decide whether two step times compare (engine/profiler.py)."""

    cpus: int  # CPUs this process may run on (its affinity)
    threads: int  # torch.get_num_threads(): the intra-op (OpenMP) threads a kernel uses
    omp_num_threads: str | None = None  # OMP_NUM_THREADS as set ("": not set)
    compile_threads: int | None = None  # Inductor's compile workers (config.compile_threads)
    load_avg: float | None = None  # 1-minute load average at the end (this process included)
    host_cpus: int | None = None  # CPUs /proc/stat counts (the host's, in some containers)
    others_busy_cpus: float | None = None  # CPUs other processes kept busy, on average (/proc/stat less our CPU time)
    steal_share: float | None = None  # CPU steal (a hypervisor ran someone else), of all CPU time
    wall_s: float = 0.0  # how long the measurement lasted


class StepProfile(Event, tag="step_profile"):
    """Where a profiled step's time went (``--profile N``, engine/region_profile.py): the
    compiled regions, compiled backward graphs, guard checks, and everything else. Every
    ``*_us`` is a total over ``steps`` steps of host (CPU) time; ``step_us`` is one step's
    mean wall time. ``outside_us`` is the step's time in no region, backward or lookup (the
    loss, the optimizer, data loading, any eager Python); ``missed_lookup_us`` the guard
    checks that entered no compiled code (a frame that runs eagerly)."""

    steps: int
    step_us: float
    device: str = "cpu"  # "cuda" when the profiler also traced CUDA
    regions: list[RegionTime] = []
    backward: list[BackwardTime] = []
    outside_us: float = 0.0
    missed_lookup_us: float = 0.0
    missed_lookups: int = 0
    # The steps right after the window, timed without the profiler (which slows eager ops
    # more than compiled code): their mean, and how many (None/0: the program ended first).
    plain_step_us: float | None = None
    plain_steps: int = 0
    calls: list[CallTime] = []  # each compiled (or, eagerly, to-be-compiled) callable's calls
    # Each profiled step's wall time, and its own split (the window's figures' spread).
    step_samples_us: list[float] = []
    per_step: list[StepSlice] = []
    # The unprofiled steps, each timed: compiled ones (``plain_step_us`` is their mean) and,
    # interleaved with them in alternating blocks of ``ab_block`` steps, the same program run
    # under ``torch.compiler.set_stance("force_eager")``: compiled against eager in one
    # process, under the same load. ``ab_note``: why there is no eager arm.
    plain_samples_us: list[float] = []
    eager_samples_us: list[float] = []
    ab_block: int = 0
    ab_note: str | None = None
    noise: ProfileNoise | None = None


AnyEvent = (
    LogHeader
    | ProcessStart
    | ProcessEnd
    | RunStart
    | RunEnd
    | CompileStart
    | Capture
    | BackwardCapture
    | GraphBreak
    | Recompile
    | RecompileLimit
    | Guards
    | Graph
    | OutputCode
    | Kernel
    | KernelProvenance
    | KernelMeta
    | PathAlias
    | NotebookCell
    | Symbol
    | Specialization
    | ShapeGuard
    | Bytecode
    | CacheEvent
    | Artifact
    | DdpSplit
    | DdpBucket
    | Chromium
    | Raw
    | KernelProfile
    | StepProfile
)

EVENT_TYPES: dict[str, type[Event]] = {
    t.__struct_config__.tag: t
    for t in AnyEvent.__args__  # type: ignore[attr-defined]
}


class UnknownEvent(msgspec.Struct):
    """A line whose kind this reader does not know (a newer writer): kept, not fatal."""

    kind: str
    data: dict[str, Any]
    t: float = 0.0
    cid: str | None = None


def json_schema() -> dict[str, Any]:
    """The JSON Schema of every event kind (what ``dyn-inspect schema`` prints)."""
    return msgspec.json.schema(AnyEvent)
