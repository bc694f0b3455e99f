"""Steady-state steps under torch.profiler: ``dyn-inspect run --profile N`` (``--profile-kernels``).

Off unless the launcher sets ``DYN_INSPECT_PROFILE_KERNELS=N``: without it this module is
never imported and nothing is patched, so recording costs nothing extra.

**Which steps are profiled.** A *step* is one call of the *anchor*: the first callable
returned by ``torch.compile`` (a compiled module or function) that the program calls at
the outermost level. Each call of any compiled callable passes through the
``enter_exit_hooks`` of its Dynamo context; we add one hook there (and keep a per-thread
depth so nested compiled calls do not count). A step is *quiet* when torch emitted no
structured-trace record during it — no compile, recompile, lazy backward compile or
autotuning; the recorder counts records. After the first quiet step, the next N steps are
profiled with ``torch.profiler`` (CPU, plus CUDA when the program uses it): the window
opens at the anchor's entry and closes at its entry N calls later, so each profiled step
covers the forward, the backward and the optimizer step that follow it. If torch compiles
anything inside the window, the window is thrown away and the next quiet step starts a new
one. A program that ends inside a window keeps the steps it completed.

**What is recorded.** One ``KernelProfile`` event per (kernel, compiled graph, forward or
backward) — only kernels that run inside compiled code: Inductor's Triton kernels (GPU
time from CUPTI), Inductor's C++ kernels (wall time of the kernel, from the
``RECORD_FUNCTION`` Inductor emits with ``cpp.enable_kernel_profile``, which we turn on),
and library kernels Inductor calls (``extern_kernels.mm`` → cuBLAS on GPU, ``aten::mm``
on CPU) with the ATen op in ``op``. The graph comes from the profiler's
``## Call CompiledFxGraph <key> ##`` range (its FX-graph cache key), the compile id from
``Torch-Compiled Region: <cid>`` (forward only), backward from the
``CompiledFunctionBackward`` autograd node. Bytes per call are Inductor's own estimate
(``estimate_kernel_num_bytes``, which Inductor computes for ``benchmark_kernel``; we add it
to each Triton kernel's metadata without the benchmark harness) or, when that is missing,
the bytes of the kernel's tensor arguments; FLOPs come from the profiler's count for
matmuls and convolutions. Peaks are datasheet figures for known GPUs
(``DYN_INSPECT_PEAK_GBPS`` / ``DYN_INSPECT_PEAK_TFLOPS`` override them). Each Triton
kernel's profile also keeps its launches by argument signature (``launches``: the shapes,
dtypes, strides and scalar values the profiler records with ``record_shapes`` — torch 2.11
records shapes and scalars only — with calls and time each, up to 16 signatures, the 8 most
frequent written) and, where the Kineto events carry CUPTI's kernel metadata, the grid,
block, registers and shared memory (``device_meta``).

The same window gives one ``StepProfile`` (engine/region_profile.py): where each step's
host time went — compiled regions, their eager code, guard checks, backward graphs, the
rest — over the window and in each step on its own (``per_step``, ``step_samples_us``:
every figure's spread, issue 57). After the window one step settles (the profiler's
teardown), then N steps are timed without the profiler (``plain_samples_us``; their mean
``plain_step_us``: the profiler slows eager ops more than compiled code) and, interleaved
with them in alternating blocks (N/5 steps, 1 to 5), N steps of the same program under
``torch.compiler.set_stance("force_eager")`` (``eager_samples_us``): compiled against eager
in one process, so drift and load hit both arms. The stance is set in our enter hook, which
Dynamo runs before it reads the stance for that call, and put back at the next entry; a
force_eager step compiles nothing and emits no trace record, so it is neither a compile nor
a recompile. No eager arm under ``--disable-compile``, with ``DYN_INSPECT_PROFILE_EAGER=0``,
or when the program set a stance of its own (``ab_note`` says which). On CUDA each
unprofiled step's end waits for the device (a synchronize at each entry), so a step's time
holds its GPU work. The machine's load, CPU steal and threads over the whole measurement go
in ``noise`` (engine/noise.py). The breakdown is written when those steps are done, or at
exit with the steps that completed. Under ``--disable-compile`` there is no compiled
callable: the callable ``torch.compile`` hands back is the anchor (torch_compat's
``install_eager_step_hooks``), so the eager run's steps compare with the compiled run's.

Reader side: ``RunModel.line_profile()`` (inspector/model.py) joins these events to the
kernels' provenance lines: time per source line per step; inspector/analysis/step_costs.py
gives each graph break its time per step.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from dyn_inspect.engine.eventlog import process_log_name
from dyn_inspect.engine.region_profile import CALL_PREFIX, step_profile
from dyn_inspect.engine.schema import KernelLaunch, KernelProfile, StepProfile

PROFILE_ENV = "DYN_INSPECT_PROFILE_KERNELS"
AB_ENV = "DYN_INSPECT_PROFILE_EAGER"  # "0": no eager arm in the unprofiled steps
PEAK_GBPS_ENV = "DYN_INSPECT_PEAK_GBPS"
PEAK_TFLOPS_ENV = "DYN_INSPECT_PEAK_TFLOPS"

_GRAPH_RE = re.compile(r"^## Call CompiledFxGraph (?P<key>\S+) ##$")
_REGION_PREFIX = "Torch-Compiled Region: "
_CPP_KERNEL_RE = re.compile(r"^(?:graph_\d+_)?(?P<name>cpp_\w+)$")
# CPU ops the wrapper calls that only allocate or re-view memory: not kernels.
_NOT_KERNELS = frozenset(
    {
        "aten::empty",
        "aten::empty_strided",
        "aten::as_strided",
        "aten::view",
        "aten::reshape",
        "aten::_reshape_alias",
        "aten::alias",
        "aten::detach",
        "aten::t",
        "aten::transpose",
        "aten::permute",
        "aten::expand",
        "aten::resize_",
        "aten::set_",
        "aten::lift_fresh",
        "aten::_unsafe_view",
    }
)

# Dense datasheet peaks (TFLOP/s by dtype; GB/s). SXM parts; a PCIe/NVL part reads lower.
_PEAKS: list[tuple[str, dict[str, float], float]] = [
    ("H200", {"bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9, "fp64": 66.9}, 4800.0),
    ("H100", {"bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9, "fp64": 66.9}, 3350.0),
    ("A100", {"bf16": 312.0, "fp16": 312.0, "tf32": 156.0, "fp32": 19.5, "fp64": 19.5}, 2039.0),
]
_DTYPES = {
    "c10::BFloat16": "bf16",
    "c10::Half": "fp16",
    "float": "fp32",
    "double": "fp64",
}


class _RecorderLike(Protocol):
    records: int
    run_dir: Path

    def write_events(self, events: Iterable[Any]) -> None: ...


@dataclass
class DevicePeaks:
    name: str | None
    gbps: float | None
    tflops: dict[str, float] = field(default_factory=dict)

    def tflops_for(self, dtype: str | None) -> float | None:
        override = _env_float(PEAK_TFLOPS_ENV)
        if override is not None:
            return override
        if dtype is None:
            return None
        return self.tflops.get(dtype)


def device_peaks(torch: Any) -> DevicePeaks:
    """The ceilings of the GPU the program uses (None on CPU or an unknown GPU)."""
    name: str | None = None
    gbps: float | None = None
    tflops: dict[str, float] = {}
    try:
        if torch.cuda.is_initialized():
            name = torch.cuda.get_device_name(torch.cuda.current_device())
    except Exception:  # noqa: BLE001 - a broken CUDA setup must not break the program
        name = None
    if name:
        for marker, flops, bw in _PEAKS:
            if marker in name:
                tflops, gbps = dict(flops), bw
                break
        if gbps is None:
            try:  # DDR: two transfers per clock; kHz × bits → GB/s
                props = torch.cuda.get_device_properties(torch.cuda.current_device())
                gbps = 2 * props.memory_clock_rate * 1e3 * props.memory_bus_width / 8 / 1e9
            except Exception:  # noqa: BLE001 - older torch: no such properties
                gbps = None
    override = _env_float(PEAK_GBPS_ENV)
    return DevicePeaks(name, override if override is not None else gbps, tflops)


def _env_float(name: str) -> float | None:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return None
    return value if value > 0 else None


_KERNEL_DTYPE = [("tf32", "tf32"), ("bf16", "bf16"), ("bfloat16", "bf16"), ("f16", "fp16"), ("f32", "fp32")]


def _matmul_dtype(torch: Any, dtypes: list[str] | None, op: str | None, kernel: str = "") -> str | None:
    """The precision a matmul/conv ran in: fp32 inputs run as TF32 where torch allows it.
    Without recorded input dtypes, the library kernel's name says it (``..._tf32f32_...``)."""
    dtype = next((_DTYPES[d] for d in dtypes or () if d in _DTYPES), None)
    if dtype is None:
        low = kernel.lower()
        return next((d for marker, d in _KERNEL_DTYPE if marker in low), None)
    if dtype == "fp32":
        try:
            conv = op is not None and "conv" in op
            allowed = torch.backends.cudnn.allow_tf32 if conv else torch.backends.cuda.matmul.allow_tf32
            if allowed:
                return "tf32"
        except Exception:  # noqa: BLE001
            pass
    return dtype


# --- aggregating profiler events --------------------------------------------------------


@dataclass
class _Where:
    graph: str | None = None
    cid: str | None = None
    backward: bool = False
    graph_call: Any = None  # the "## Call CompiledFxGraph" event


def _where(event: Any) -> _Where:
    """Which compiled graph an event ran in, from its ancestors."""
    out = _Where()
    parent = event.cpu_parent
    while parent is not None:
        name = parent.name
        if out.graph is None:
            m = _GRAPH_RE.match(name)
            if m:
                out.graph = None if m["key"] == "None" else m["key"]
                out.graph_call = parent
        if out.cid is None and name.startswith(_REGION_PREFIX):
            out.cid = name[len(_REGION_PREFIX) :].strip()
        if "CompiledFunctionBackward" in name:
            out.backward = True
        parent = parent.cpu_parent
    return out


@dataclass
class _Agg:
    name: str
    where: _Where
    device: str
    op: str | None = None
    calls: int = 0
    total_us: float = 0.0
    gb_total: float = 0.0
    gb_calls: int = 0
    flop_total: float = 0.0
    dtype: str | None = None
    launch: str | None = None
    launches: dict[tuple[Any, ...], KernelLaunch] = field(default_factory=dict)
    n_regs: int | None = None
    shared: int | None = None


_MAX_SIGNATURES = 16  # distinct launch signatures kept per kernel (a dynamic kernel's sizes)


def device_meta(prof: Any) -> dict[int, dict[str, Any]]:
    """CUPTI's metadata of each GPU kernel (grid, block, registers per thread, shared
    memory), by the correlation id of the CPU op that launched it (its FunctionEvent's id).
    Read from the Kineto events themselves, the way torch links kernels to ops: the
    FunctionEvent's own fields for it differ across versions (and ``metadata_json`` warns)."""
    out: dict[int, dict[str, Any]] = {}
    try:
        kineto = prof.profiler.kineto_results.events()
    except Exception:  # noqa: BLE001 - no Kineto results (a CPU-only or older profiler)
        return out
    for e in kineto:
        try:
            if not str(e.device_type()).endswith("CUDA"):
                continue
            corr = int(e.linked_correlation_id() or 0)
            raw = e.metadata_json()
        except Exception:  # noqa: BLE001 - a field this torch's KinetoEvent lacks
            return out
        if not corr or not raw or corr in out:
            continue
        try:
            text = str(raw).strip()
            data = json.loads(text if text.startswith("{") else "{" + text + "}")
        except ValueError:
            continue
        if isinstance(data, dict):
            out[corr] = data
    return out


def _signature(event: Any, meta: dict[str, Any] | None) -> KernelLaunch:
    """One Triton launch's arguments as the profiler recorded them (``record_shapes``):
    shapes and dtypes, strides where torch records them, scalar values; grid and block
    from CUPTI."""
    shapes = [list(map(int, s)) if isinstance(s, list | tuple) else [] for s in (getattr(event, "input_shapes", None) or [])]
    dtypes = [str(d) for d in (getattr(event, "input_dtypes", None) or [])]
    strides_raw = getattr(event, "structured_input_strides", None) or []
    strides = [list(map(int, s)) if isinstance(s, list | tuple) and all(isinstance(x, int) for x in s) else [] for s in strides_raw]
    concrete = list(getattr(event, "concrete_inputs", None) or [])
    scalars: list[Any] = [c if isinstance(c, int | float | bool) or (isinstance(c, str) and c) else None for c in concrete]
    meta = meta or {}
    grid = [int(x) for x in meta.get("grid") or [] if isinstance(x, int)]
    block = [int(x) for x in meta.get("block") or [] if isinstance(x, int)]
    return KernelLaunch(shapes=shapes, strides=strides, dtypes=dtypes, scalars=scalars, grid=grid, block=block)


def _launch_config(kwinputs: Any) -> str | None:
    """The config a Triton launch ran with (Inductor passes it to the profiler)."""
    if not isinstance(kwinputs, dict) or "num_warps" not in kwinputs:
        return None
    parts = [str(kwinputs.get("kernel_kwargs") or "").replace(",", " ").strip()]
    parts += [f"{k}={kwinputs[k]}" for k in ("num_warps", "num_stages") if k in kwinputs]
    return " ".join(p for p in parts if p) or None


def _arg_gb(event: Any) -> float | None:
    """Bytes of a kernel launch's tensor arguments (each once), from record_shapes."""
    shapes = getattr(event, "input_shapes", None) or []
    dtypes = getattr(event, "input_dtypes", None) or []
    sizes = {
        "float": 4,
        "c10::BFloat16": 2,
        "c10::Half": 2,
        "double": 8,
        "long int": 8,
        "int": 4,
        "bool": 1,
        "signed char": 1,
        "unsigned char": 1,
        "short int": 2,
        "c10::Float8_e4m3fn": 1,
        "c10::Float8_e5m2": 1,
    }
    total = 0
    for shape, dtype in zip(shapes, dtypes, strict=False):
        if not shape or dtype not in sizes:
            continue
        n = 1
        for d in shape:
            n *= int(d)
        total += n * sizes[dtype]
    return total / 1e9 if total else None


def _flop_source(event: Any) -> Any:
    """The op whose FLOPs the profiler counted for a launch: the event itself or the
    nearest ancestor below the graph call (``aten::convolution`` above ``cudnn_convolution``)."""
    e = event
    while e is not None and not _GRAPH_RE.match(e.name):
        if getattr(e, "flops", 0):
            return e
        e = e.cpu_parent
    return None


def aggregate(events: Iterable[Any], torch: Any, use_cuda: bool, launch_meta: dict[int, dict[str, Any]] | None = None) -> list[_Agg]:
    """Sum the profiler's events per (kernel, graph, direction); only compiled code.
    ``launch_meta``: CUPTI's metadata per launching op (``device_meta``), for grids,
    blocks, registers and shared memory."""
    aggs: dict[tuple[str, str | None, str | None, bool], _Agg] = {}
    events = list(events)

    def agg_for(name: str, where: _Where, device: str, op: str | None) -> _Agg:
        key = (name, where.graph, where.cid if where.graph is None else None, where.backward)
        a = aggs.get(key)
        if a is None:
            a = aggs[key] = _Agg(name, where, device, op)
        return a

    # An op's FLOPs are shared among the device kernels it launched, by their time, so each
    # kernel's rate is the op's rate (cuDNN's backward launches dgrad, wgrad and helpers).
    launched: dict[int, float] = {}
    device_meta = launch_meta or {}
    for fe in events:
        kernels = getattr(fe, "kernels", None)
        if kernels and str(getattr(fe, "device_type", "")).endswith("CPU"):
            src = _flop_source(fe)
            if src is not None:
                launched[id(src)] = launched.get(id(src), 0.0) + sum(float(k.duration) for k in kernels)

    for fe in events:
        where: _Where | None  # set in both branches below
        if str(getattr(fe, "device_type", "")).split(".")[-1] != "CPU":
            continue
        kernels = list(getattr(fe, "kernels", None) or [])
        if kernels:
            where = _where(fe)
            if where.graph_call is None:
                continue  # eager code (optimizer, loss): not a compiled kernel
            op = None if fe.name == kernels[0].name else fe.name
            src = _flop_source(fe)
            kwinputs = getattr(fe, "kwinputs", None) or {}
            gb = kwinputs.get("kernel_num_gb") if isinstance(kwinputs, dict) else None
            if gb is None and op is None:
                gb = _arg_gb(fe)
            launch = _launch_config(kwinputs)
            meta = device_meta.get(getattr(fe, "id", -1))
            for k in kernels:
                a = agg_for(k.name, where, f"cuda:{k.device}", op)
                a.calls += 1
                a.total_us += float(k.duration)
                a.launch = launch or a.launch
                if meta:
                    a.n_regs = _int_or(meta.get("registers per thread"), a.n_regs)
                    a.shared = _int_or(meta.get("shared memory"), a.shared)
                if op is None:
                    sig = _signature(fe, meta)
                    key = (repr(sig.shapes), repr(sig.strides), repr(sig.dtypes), repr(sig.scalars), repr(sig.grid), repr(sig.block))
                    kept = a.launches.get(key)
                    if kept is None and len(a.launches) < _MAX_SIGNATURES:
                        kept = a.launches[key] = sig
                    if kept is not None:
                        kept.calls += 1
                        kept.total_us = round(kept.total_us + float(k.duration), 3)
                if gb:
                    a.gb_total += float(gb)
                    a.gb_calls += 1
                if src is not None and launched.get(id(src)):
                    a.flop_total += float(src.flops) * float(k.duration) / launched[id(src)]
                    a.dtype = a.dtype or _matmul_dtype(torch, getattr(src, "input_dtypes", None), src.name, k.name)
            continue
        m = _CPP_KERNEL_RE.match(fe.name)
        where = None
        if m:
            where = _where(fe)
            name, op = m["name"], None
        elif not use_cuda and fe.name.startswith("aten::") and fe.name not in _NOT_KERNELS:
            parent = fe.cpu_parent
            if parent is None or not _GRAPH_RE.match(parent.name):
                continue  # only ops the Inductor wrapper calls directly
            where = _where(fe)
            name, op = fe.name, fe.name
        else:
            continue
        if where.graph_call is None:
            continue
        a = agg_for(name, where, "cpu", op)
        a.calls += 1
        a.total_us += float(fe.time_range.elapsed_us())
        src = _flop_source(fe)
        if src is not None:
            a.flop_total += float(src.flops)
    return list(aggs.values())


def to_events(aggs: list[_Agg], steps: int, step_us: float | None, peaks: DevicePeaks) -> list[KernelProfile]:
    out: list[KernelProfile] = []
    for a in sorted(aggs, key=lambda a: -a.total_us):
        gb = a.gb_total / a.gb_calls if a.gb_calls else None
        flop = a.flop_total / a.calls if a.flop_total else None
        seconds = a.total_us / 1e6
        on_gpu = a.device.startswith("cuda")
        out.append(
            KernelProfile(
                t=time.time(),
                cid=a.where.cid,
                name=a.name,
                calls=a.calls,
                total_us=round(a.total_us, 3),
                steps=steps,
                device=a.device,
                backward=a.where.backward,
                graph=a.where.graph,
                op=a.op,
                gb=gb,
                flop=flop,
                bandwidth_gbps=round(gb * a.calls / seconds, 2) if gb and seconds > 0 else None,
                tflops=round(a.flop_total / seconds / 1e12, 3) if a.flop_total and seconds > 0 else None,
                peak_gbps=peaks.gbps if on_gpu and gb else None,
                peak_tflops=peaks.tflops_for(a.dtype) if on_gpu and a.flop_total else None,
                step_us=round(step_us, 3) if step_us else None,
                launch=a.launch,
                launches=sorted(a.launches.values(), key=lambda x: -x.calls)[:8],
                n_regs=a.n_regs,
                shared=a.shared,
            )
        )
    return out


def _int_or(value: Any, default: int | None) -> int | None:
    return int(value) if isinstance(value, int | float) else default


# --- the step window -------------------------------------------------------------------


class StepProfiler:
    """Counts anchor calls, opens the profiler after the first quiet step, writes events."""

    def __init__(self, recorder: _RecorderLike, steps: int) -> None:
        self.recorder = recorder
        self.steps = steps
        self.anchor: int | None = None
        self.calls = 0
        self._local = threading.local()
        self._thread: int | None = None
        self._records_at_step = -1
        self._prof: Any = None
        self._window_start_call = 0
        self._window_records = 0
        self._window_t0 = 0.0
        self.done = False
        self.discarded = 0
        self.message: str | None = None
        # After the profiled window, the same number of steps timed without the profiler
        # (it slows eager ops more than compiled code): the breakdown waits for them.
        self._breakdown: StepProfile | None = None
        self._timing_start_call = 0
        self._timing_records = 0
        self._timing_t0 = 0.0
        self._last_entry = 0.0
        self._entries: list[float] = []  # each profiled step's entry (perf_counter)
        # The unprofiled steps: each entry, and which arm each step ran in (False: compiled,
        # True: eager under force_eager); the call that restores the stance while eager.
        self._timing_entries: list[float] = []
        self._arms: list[bool] = []
        self._ab_block = 0
        self._ab_note: str | None = None
        self._restore_stance: Callable[[], None] | None = None
        self._noise_start: Any = None
        self.names: dict[int, str] = {}  # compile context (or eager callable) id → its callable

    # Called by Dynamo on every entry of a compiled callable (enter_exit_hooks).
    def hook_for(self, ctx_id: int) -> Callable[[], Callable[[], None]]:
        def enter() -> Callable[[], None]:
            depth = getattr(self._local, "depth", 0)
            self._local.depth = depth + 1
            if depth == 0 and (not self.done or self._breakdown is not None):
                self._on_outer_call(ctx_id)
            if depth == 0 and self._prof is not None:
                return self._span(ctx_id)
            return self._leave

        return enter

    def named(self, ctx_id: int, fn: Any) -> None:
        """Which callable a compile context (or, eagerly, a callable) stands for."""
        self.names[ctx_id] = callable_name(fn)

    def _span(self, ctx_id: int) -> Callable[[], None]:
        """A ``dyn-inspect call: <callable>`` range around an outermost call inside the
        window, so the same callable's time compares between a compiled and an eager run."""
        import torch

        span = torch.autograd.profiler.record_function(CALL_PREFIX + self.names.get(ctx_id, "?"))
        span.__enter__()

        def leave() -> None:
            span.__exit__(None, None, None)
            self._leave()

        return leave

    def _leave(self) -> None:
        self._local.depth = max(0, getattr(self._local, "depth", 1) - 1)

    def _on_outer_call(self, ctx_id: int) -> None:
        if self.anchor is None:
            self.anchor = ctx_id
            self._thread = threading.get_ident()
        if ctx_id != self.anchor or threading.get_ident() != self._thread:
            return
        try:
            self._step()
        except Exception as exc:  # noqa: BLE001 - profiling must never break the program
            self.done = True
            self.message = f"kernel profiling failed: {exc!r}"
            self._prof = None
            from dyn_inspect.engine import torch_compat

            torch_compat.HOOKS.degrade("profiler", f"profiling failed: {exc!r}")

    def _step(self) -> None:
        records = self.recorder.records
        quiet = self.calls > 0 and records == self._records_at_step
        self.calls += 1
        self._records_at_step = records
        if self._breakdown is not None:
            self._time_step(records)
            return
        if self._prof is not None:
            if records != self._window_records:
                self._stop(keep=False)  # torch compiled inside the window: not steady state
                self.discarded += 1
            elif self.calls - self._window_start_call >= self.steps:
                self._stop(keep=True)
                return
            else:
                self._entries.append(time.perf_counter())
                return
        if quiet and self._prof is None and not self.done:
            self._start()

    def _start(self) -> None:
        import torch
        from torch.profiler import ProfilerActivity, profile

        self._cuda = bool(torch.cuda.is_available() and torch.cuda.is_initialized())
        # Kineto prints "USDT: ... profiler_start/stop" on the program's stderr at every
        # start and stop, whatever its log level, unless the level is above its last one
        # (6). It reads the variable when the profiler first starts: set it just before,
        # and never over a value the user chose.
        os.environ.setdefault("KINETO_LOG_LEVEL", "6")
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self._cuda else [])
        if self._cuda:
            torch.cuda.synchronize()
        from dyn_inspect.engine import noise

        self._noise_start = noise.read()
        prof = profile(activities=activities, record_shapes=True, with_flops=True)
        prof.__enter__()
        self._prof = prof
        self._window_start_call = self.calls
        self._window_records = self.recorder.records
        self._window_t0 = time.perf_counter()
        self._entries = [self._window_t0]

    def _stop(self, keep: bool, completed: int | None = None) -> None:
        import torch

        prof, self._prof = self._prof, None
        if prof is None:
            return
        if self._cuda:
            torch.cuda.synchronize()
        end = time.perf_counter()
        wall = end - self._window_t0
        prof.__exit__(None, None, None)
        if not keep:
            return
        steps = completed if completed is not None else self.steps
        self.done = True
        events = list(prof.events())
        launch_meta = device_meta(prof) if self._cuda else {}
        if os.environ.get("DYN_INSPECT_PROFILE_DUMP"):
            _dump(events, os.environ["DYN_INSPECT_PROFILE_DUMP"], launch_meta)
        aggs = aggregate(events, torch, self._cuda, launch_meta)
        out: list[Any] = to_events(aggs, steps, wall / steps * 1e6 if steps else None, device_peaks(torch))
        entries = [*self._entries[:steps], end]
        samples = [(b - a) * 1e6 for a, b in zip(entries, entries[1:], strict=False)]
        anchor = CALL_PREFIX + self.names.get(self.anchor, "?") if self.anchor is not None else None
        breakdown = step_profile(events, steps, wall * 1e6, self._cuda, anchor, samples if len(samples) == steps else None)
        breakdown.t = time.time()
        self.recorder.write_events(out)
        self.message = None
        self._breakdown = breakdown  # written once the unprofiled steps are timed
        self._timing_start_call = self.calls
        self._timing_records = self.recorder.records
        self._timing_t0 = self._last_entry = time.perf_counter()
        self._timing_entries = []  # the step that starts now settles (the profiler's teardown); timed from the next
        self._arms = []
        # Compiled against eager in this process: blocks of steps in turn, so drift and the
        # machine's load hit both arms (none under --disable-compile: nothing is compiled).
        if os.environ.get("TORCHDYNAMO_DISABLE") == "1":
            self._ab_block, self._ab_note = 0, "the run is eager (--disable-compile)"
        elif os.environ.get(AB_ENV, "1") == "0":
            self._ab_block, self._ab_note = 0, f"{AB_ENV}=0"
        else:
            self._ab_block, self._ab_note = max(1, min(5, self.steps // 5)), None

    @property
    def _plain_total(self) -> int:
        """How many unprofiled steps are timed: N compiled, and N eager with the eager arm."""
        return self.steps * (2 if self._ab_block else 1)

    def _begin_plain_step(self) -> None:
        """At a step's entry (before Dynamo reads the stance for this call): its arm."""
        k = len(self._arms)
        eager = bool(self._ab_block) and (k // self._ab_block) % 2 == 1
        if eager and self._restore_stance is None:
            from dyn_inspect.engine import torch_compat

            restore, why = torch_compat.force_eager()
            if restore is None:
                self._ab_block, self._ab_note, eager = 0, why, False
            self._restore_stance = restore
        elif not eager:
            self._back_to_default()
        self._arms.append(eager)

    def _back_to_default(self) -> None:
        restore, self._restore_stance = self._restore_stance, None
        if restore is not None:
            restore()

    def _time_step(self, records: int) -> None:
        """One anchor entry of the unprofiled steps that follow the profiled window: the
        previous step ended here; this one starts in its arm."""
        if self._cuda:  # each step's device work done before its end is taken
            import torch

            torch.cuda.synchronize()
        now = time.perf_counter()
        if records != self._timing_records:  # torch compiled again: not the same steady state
            self._back_to_default()
            self._write_breakdown(None)
            return
        self._last_entry = now
        if not self._timing_entries:  # the settling step ended: the timed steps begin
            self._timing_t0 = now
        self._timing_entries.append(now)
        if len(self._timing_entries) - 1 >= self._plain_total:
            self._back_to_default()
            self._write_breakdown(self._plain_total)
            return
        self._begin_plain_step()

    def _write_breakdown(self, completed: int | None) -> None:
        breakdown, self._breakdown = self._breakdown, None
        if breakdown is None:
            return
        if completed:
            ends = self._timing_entries[: completed + 1]
            walls = [(b - a) * 1e6 for a, b in zip(ends, ends[1:], strict=False)]
            compiled = [round(w, 3) for w, eager in zip(walls, self._arms, strict=False) if not eager]
            eager = [round(w, 3) for w, e in zip(walls, self._arms, strict=False) if e]
            if compiled:
                breakdown.plain_steps = len(compiled)
                breakdown.plain_step_us = round(sum(compiled) / len(compiled), 3)
                breakdown.plain_samples_us = compiled
            breakdown.eager_samples_us = eager
            breakdown.ab_block = self._ab_block if eager else 0
        breakdown.ab_note = self._ab_note if not breakdown.eager_samples_us else None
        if breakdown.ab_note is None and not breakdown.eager_samples_us:
            breakdown.ab_note = (
                "the program ended before the eager steps" if completed is not None else "torch compiled during the unprofiled steps"
            )
        if self._noise_start is not None:
            import torch

            from dyn_inspect.engine import noise

            breakdown.noise = noise.noise(self._noise_start, noise.read(), torch)
        self.recorder.write_events([breakdown])

    def finish(self) -> None:
        """At exit: keep a window the program ended inside, or say why nothing was profiled."""
        if self._prof is not None:
            completed = self.calls - self._window_start_call
            clean = self.recorder.records == self._window_records
            if completed > 0 and clean:
                self._stop(keep=True, completed=completed)
            else:
                self._stop(keep=False)
        if self._breakdown is not None:  # the unprofiled steps that completed, if any
            self._back_to_default()
            clean = self.recorder.records == self._timing_records
            self._write_breakdown(max(0, len(self._timing_entries) - 1) if clean else None)
        if not self.done and self.message is None:
            if self.anchor is None and self.recorder.records == 0 and _other_processes_logged(self.recorder.run_dir):
                return  # torchrun's agent, a DataLoader worker: the processes that compiled answer
            if self.anchor is None:
                self.message = "no compiled callable was called: nothing to profile"
            else:
                self.message = (
                    f"no steady-state steps to profile: {self.calls} compiled calls, "
                    "torch was still compiling in the last ones (run more steps)"
                )
        if self.message:
            sys.stderr.write(f"dyn-inspect: --profile: {self.message}\n")


def _other_processes_logged(run_dir: Path) -> bool:
    """Whether another process of this run keeps a log (``eventlog.process_log_name``): one
    that compiled nothing here is then not the run's answer to "was anything profiled?"."""
    own = process_log_name(os.getpid())
    try:
        # (the launcher's own log is launcher.jsonl, or launcher-<node>.jsonl on several nodes)
        return any(p.name != own and not p.name.startswith("launcher") for p in run_dir.glob("*.jsonl"))
    except OSError:
        return False


# --- installation ---------------------------------------------------------------------


def callable_name(fn: Any) -> str:
    """``Net.forward (train.py:33)``: a module by its forward, a function by itself — the
    same text in a compiled and in an eager run of one program."""
    import torch

    target = type(fn).forward if isinstance(fn, torch.nn.Module) else fn
    qualname = getattr(target, "__qualname__", None) or type(fn).__name__
    code = getattr(target, "__code__", None)
    if code is None:
        return str(qualname)
    return f"{qualname} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"


def requested() -> int:
    """N from the environment (0: off)."""
    try:
        return max(0, int(os.environ.get(PROFILE_ENV, "0") or 0))
    except ValueError:
        return 0


def _dump(events: list[Any], path: str, launch_meta: dict[int, dict[str, Any]]) -> None:
    """DYN_INSPECT_PROFILE_DUMP=FILE: what the profiler handed us, for checking a new torch."""
    import json

    rows: list[dict[str, Any]] = [{"device_meta_sample": dict(list(launch_meta.items())[:4])}]
    for fe in events:
        if not str(getattr(fe, "device_type", "")).endswith("CPU"):
            continue
        if not (getattr(fe, "kernels", None) or _CPP_KERNEL_RE.match(fe.name) or getattr(fe, "flops", 0)):
            continue
        chain: list[str] = []
        e = fe.cpu_parent
        while e is not None and len(chain) < 6:
            chain.append(e.name)
            e = e.cpu_parent
        rows.append(
            {
                "name": fe.name,
                "kernels": [(k.name, k.duration) for k in fe.kernels][:4],
                "flops": getattr(fe, "flops", None),
                "kwinputs": repr(getattr(fe, "kwinputs", None))[:300],
                "input_shapes": repr(getattr(fe, "input_shapes", None))[:300],
                "input_dtypes": repr(getattr(fe, "input_dtypes", "<no attribute>"))[:200],
                "concrete_inputs": repr(getattr(fe, "concrete_inputs", "<no attribute>"))[:200],
                "strides": repr(getattr(fe, "structured_input_strides", "<no attribute>"))[:200],
                "id": getattr(fe, "id", None),
                "parents": chain,
            }
        )
        if len(rows) >= 80:
            break
    with open(path, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)


def install(recorder: _RecorderLike, steps: int) -> StepProfiler | None:
    """Hook every torch.compile context's entry; make Inductor's kernels visible to the
    profiler (torch_compat's ``profiler`` hook: probed and fenced there). Needs torch
    imported; called by the recorder only when profiling is asked."""
    from dyn_inspect.engine import torch_compat

    profiler = StepProfiler(recorder, steps)
    # --disable-compile: torch.compile returns the callable itself; its calls are the steps
    eager = os.environ.get("TORCHDYNAMO_DISABLE") == "1"
    installed = torch_compat.install_eager_step_hooks if eager else torch_compat.install_step_hooks
    if not installed(profiler.hook_for, profiler.named):
        return None
    atexit.register(profiler.finish)
    return profiler
