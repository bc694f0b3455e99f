"""What Triton made of each kernel, and how it was launched: the answers every face shows.

From a kernel's ``KernelMeta`` (engine/kernel_meta.py): the config it runs with, what the
autotuner tried, registers, spills, shared memory, the target and the IR stages kept. From
its ``KernelProfile`` (``--profile``): the launches by argument signature, and which ones
differ from what the kernel was compiled for. "Compiled for" is what the kernel's source
says (its ``triton_meta`` signature and ``size_hints``): a pointer argument launched with
another dtype, or a size argument past the size hint the autotuner chose the config for
(a dynamic kernel tuned on a small example and run on large inputs).

Public API: ``config_text(cfg)``, ``autotune_text(meta)``, ``KernelSignature.of(source)``,
``launches(k, source)``, ``launch_findings(k, source)``, ``ir_text(reader, k, stage)``, ``IR_STAGES``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import msgspec

from dyn_inspect.engine.schema import KernelConfig, KernelLaunch, KernelMeta
from dyn_inspect.inspector.model import KernelInfo
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.run import Run

IR_STAGES = ("source", "ttir", "ttgir", "llir", "ptx", "sass")

# The profiler's C++ dtype names and torch's, as Triton's signature spells them.
_TRITON_DTYPE = {
    "float": "fp32",
    "float32": "fp32",
    "double": "fp64",
    "float64": "fp64",
    "c10::Half": "fp16",
    "float16": "fp16",
    "c10::BFloat16": "bf16",
    "bfloat16": "bf16",
    "long int": "i64",
    "int64": "i64",
    "int": "i32",
    "int32": "i32",
    "short int": "i16",
    "int16": "i16",
    "signed char": "i8",
    "int8": "i8",
    "unsigned char": "u8",
    "uint8": "u8",
    "bool": "i1",
    "c10::Float8_e4m3fn": "fp8e4nv",
    "float8_e4m3fn": "fp8e4nv",
    "c10::Float8_e5m2": "fp8e5",
    "float8_e5m2": "fp8e5",
}
TORCH_DTYPE = {
    "float": "float32",
    "double": "float64",
    "c10::Half": "float16",
    "c10::BFloat16": "bfloat16",
    "long int": "int64",
    "int": "int32",
    "short int": "int16",
    "signed char": "int8",
    "unsigned char": "uint8",
    "bool": "bool",
    "c10::Float8_e4m3fn": "float8_e4m3fn",
    "c10::Float8_e5m2": "float8_e5m2",
}
# Triton's type names (a signature's "*fp32", "i32") as torch's dtype names: the inverse
# of _TRITON_DTYPE over torch's own names.
_TORCH_OF_TRITON = {triton: name for name, triton in _TRITON_DTYPE.items() if name in set(TORCH_DTYPE.values())}


def config_text(cfg: KernelConfig | None) -> str:
    """``XBLOCK=128 R0_BLOCK=8 num_warps=4 num_stages=1`` (what Inductor's logs print)."""
    if cfg is None:
        return "-"
    parts = [f"{k}={v}" for k, v in cfg.kwargs.items()]
    parts += [f"{k}={v}" for k, v in (("num_warps", cfg.num_warps), ("num_stages", cfg.num_stages)) if v is not None]
    return " ".join(parts) or "-"


def autotune_text(meta: KernelMeta) -> str:
    """How the config was chosen, in one line."""
    timed = [c for c in meta.tried if c.time_ms is not None]
    failed = sum(1 for c in meta.tried if c.failed)
    if meta.autotune is None:
        if meta.chosen is None and meta.tried:
            return f"{len(meta.tried)} configs, not autotuned yet (the kernel never launched)"
        return "one config (no autotuning)"
    how = "coordinate descent" if meta.autotune == "coordesc" else "benchmarked"
    text = f"{how} {len(meta.tried)} configs"
    if timed:
        best, worst = min(c.time_ms for c in timed if c.time_ms is not None), max(c.time_ms for c in timed if c.time_ms is not None)
        text += f": best {best * 1e3:.1f} µs, slowest {worst * 1e3:.1f} µs"
    if failed:
        text += f", {failed} could not run"
    return text


@dataclass
class KernelSignature:
    """What a Triton kernel's source says it was compiled for."""

    args: list[str] = field(default_factory=list)  # what a launch passes, in order
    types: dict[str, str] = field(default_factory=dict)  # "in_ptr0" → "*fp32", "xnumel" → "i32"
    size_hints: dict[str, int] = field(default_factory=dict)  # "x" → 1024, "r0_" → 256
    grid_type: str | None = None  # Inductor's launch grid: "Grid1D", "Grid2D", ...

    @classmethod
    def of(cls, source: str) -> KernelSignature:
        out = cls()
        m = re.search(r"'signature': (\{[^}]*\})", source)
        if m:
            try:
                sig = ast.literal_eval(m[1])
            except (ValueError, SyntaxError):
                sig = {}
            if isinstance(sig, dict):
                out.types = {str(k): str(v) for k, v in sig.items()}
                out.args = list(out.types)
        # What a launch passes: the def line's parameters but the ``tl.constexpr`` ones (the
        # config's XBLOCK...). A size Inductor made constant (``'xnumel': 'constexpr'`` in
        # the signature) is still passed.
        d = re.search(r"^def \w+\(([^)]*)\):", source, re.MULTILINE)
        if d:
            params = [p.strip() for p in d[1].split(",") if p.strip()]
            out.args = [p for p in params if ":" not in p]
        g = re.search(r"'grid_type': '(\w+)'", source)
        out.grid_type = g[1] if g else None
        h = re.search(r"size_hints=(\{[^}]*\}|\[[^\]]*\])", source)
        if h:
            try:
                hints = ast.literal_eval(h[1])
            except (ValueError, SyntaxError):
                hints = None
            if isinstance(hints, dict):
                out.size_hints = {str(k): int(v) for k, v in hints.items() if isinstance(v, int)}
            elif isinstance(hints, list):  # older Inductor: [x, r]
                out.size_hints = {p: int(v) for p, v in zip(("x", "r0_"), hints, strict=False) if isinstance(v, int)}
        return out


def launches(k: KernelInfo, source: str | None = None) -> list[KernelLaunch]:
    """The kernel's launches by signature, most frequent first: the profile's, else the
    kernel's first launch (recorded by the engine without a profile). A profiled launch
    whose dtypes or strides this torch's profiler does not record (2.11 records shapes
    only) takes them from the first launch where the shapes agree, else dtypes from the
    source's signature (``source`` given). A launch without CUPTI's grid gets the one
    Inductor computes for a one-dimensional grid (``grid_computed`` says which)."""
    first = k.meta.first_launch if k.meta is not None else None
    sig = KernelSignature.of(source) if source else None
    if k.profile is not None and k.profile.launches:
        found = [_complete(launch, first, sig) for launch in k.profile.launches]
    else:
        found = [first] if first is not None else []
    return [_with_grid(launch, sig, k.meta) for launch in found]


def grid_computed(launch: KernelLaunch, k: KernelInfo) -> bool:
    """Whether ``launch``'s grid is ours (``_with_grid``), not CUPTI's record."""
    recorded = [p.grid for p in (k.profile.launches if k.profile is not None else [])]
    return bool(launch.grid) and launch.grid not in recorded


def _with_grid(launch: KernelLaunch, sig: KernelSignature | None, meta: KernelMeta | None) -> KernelLaunch:
    """Inductor's ``Grid1D``: ``ceil(xnumel / XBLOCK)`` programs of ``num_warps × warp
    size`` threads. Other grid types (2D, cooperative, split reductions) stay unknown:
    no guess."""
    if launch.grid or sig is None or sig.grid_type != "Grid1D" or meta is None or meta.chosen is None:
        return launch
    xblock = meta.chosen.kwargs.get("XBLOCK")
    try:
        xnumel = launch.scalars[sig.args.index("xnumel")]
    except (ValueError, IndexError):
        return launch
    if not isinstance(xblock, int) or not isinstance(xnumel, int) or xblock <= 0:
        return launch
    threads = (meta.chosen.num_warps or 0) * (meta.warp_size or 32)
    return msgspec.structs.replace(launch, grid=[-(-xnumel // xblock), 1, 1], block=[threads, 1, 1] if threads else [])


def same_signature(launch: KernelLaunch, first: KernelLaunch) -> bool:
    """The profiled launch is the first launch's signature, as far as the profiler saw it."""
    if len(launch.shapes) != len(first.shapes):
        return False
    for i, shape in enumerate(launch.shapes):
        if shape and shape != first.shapes[i]:
            return False
        value = launch.scalars[i] if i < len(launch.scalars) else None
        if value is not None and value != (first.scalars[i] if i < len(first.scalars) else None):
            return False
    return True


def _complete(launch: KernelLaunch, first: KernelLaunch | None, sig: KernelSignature | None) -> KernelLaunch:
    if launch.dtypes and len(launch.dtypes) == len(launch.shapes):
        return launch
    if first is not None and same_signature(launch, first):
        # The first launch's arguments, this signature's counts, times and grid.
        return msgspec.structs.replace(first, grid=launch.grid, block=launch.block, calls=launch.calls, total_us=launch.total_us)
    if sig is not None and len(sig.args) == len(launch.shapes):
        dtypes = [_TORCH_OF_TRITON.get(sig.types.get(a, "").lstrip("*"), "") for a in sig.args]
        return msgspec.structs.replace(launch, dtypes=dtypes)
    return launch


def _numel_prefix(arg: str) -> str | None:
    """``xnumel`` → ``x``, ``r0_numel`` → ``r0_``, ``rnumel`` → ``r0_`` (older name)."""
    if not arg.endswith("numel"):
        return None
    head = arg[: -len("numel")]
    return "r0_" if head == "r" else head


def launch_findings(k: KernelInfo, source: str | None) -> list[str]:
    """Launches that differ from what the kernel was compiled for, one sentence each."""
    if source is None:
        return []
    sig = KernelSignature.of(source)
    out: list[str] = []
    seen_dtype: set[tuple[str, str]] = set()
    found = launches(k, source)
    for launch in found:
        for i, arg in enumerate(sig.args):
            if i >= len(launch.dtypes):
                break
            compiled = sig.types.get(arg, "")
            if compiled.startswith("*") and launch.shapes[i : i + 1] and launch.scalars[i : i + 1] == [None]:
                got = _TRITON_DTYPE.get(launch.dtypes[i])
                if got is not None and got != compiled[1:] and (arg, got) not in seen_dtype:
                    seen_dtype.add((arg, got))
                    out.append(f"{arg} launched as {got}, compiled for {compiled}")
            prefix = _numel_prefix(arg)
            value = launch.scalars[i] if i < len(launch.scalars) else None
            hint = sig.size_hints.get(prefix or "")
            if prefix and isinstance(value, int) and hint and value > hint:
                out.append(f"{arg}={value} in {launch.calls} launch(es): past the size hint {prefix}={hint} its config was tuned for")
    shapes = {repr(launch.shapes) for launch in found}
    if len(shapes) > 1:
        out.append(f"launched with {len(shapes)} different argument shapes (a dynamic-shape kernel)")
    return list(dict.fromkeys(out))


def ir_text(run: Run, k: KernelInfo, stage: str) -> str | None:
    """One IR stage of a kernel (``source``: its Triton/C++ source), or None when not kept."""
    if stage == "source":
        return run.blob_text(k.event.source) or None
    blob = k.meta.ir.get(stage) if k.meta is not None else None
    return (run.blob_text(blob) or None) if blob is not None else None


def stages_kept(k: KernelInfo) -> list[str]:
    """The stages ``ir_text`` can show for this kernel, in compile order."""
    kept = set(k.meta.ir) if k.meta is not None else set()
    return ["source", *(s for s in IR_STAGES[1:] if s in kept)]


def compile_headline(target: str | None, config: str, registers: int | None, spills: int | None, shared_bytes: int | None) -> str:
    """``cuda sm_90 · XBLOCK=16 num_warps=4 num_stages=1 · 32 registers, 0 spills, 256 B
    shared memory``: one line every face prints for a kernel's compile metadata."""
    res = ", ".join(
        part
        for part in (
            f"{registers} registers" if registers is not None else "",
            f"{spills} spills" if spills is not None else "",
            f"{shared_bytes} B shared memory" if shared_bytes is not None else "",
        )
        if part
    )
    return f"{target or '-'} · {config}" + (f" · {res}" if res else "")


def compile_output(k: KernelInfo) -> typed.KernelCompile | None:
    """The typed answer every face renders (None: no metadata, e.g. a C++ kernel)."""
    m = k.meta
    if m is None:
        return None
    c = m.chosen
    tried = sorted(m.tried, key=lambda t: (t.failed, t.time_ms if t.time_ms is not None else float("inf")))
    config = config_text(c)
    return typed.KernelCompile(
        headline=compile_headline(m.target, config, c.n_regs if c else None, c.n_spills if c else None, c.shared if c else None),
        target=m.target,
        config=config,
        block=dict(c.kwargs) if c else {},
        num_warps=c.num_warps if c else None,
        num_stages=c.num_stages if c else None,
        registers=c.n_regs if c else None,
        spills=c.n_spills if c else None,
        shared_bytes=c.shared if c else None,
        autotune=autotune_text(m),
        tried=[
            typed.KernelTriedConfig(
                config=config_text(t),
                time_ms=t.time_ms,
                failed=t.failed,
                registers=t.n_regs,
                spills=t.n_spills,
                shared_bytes=t.shared,
            )
            for t in tried
        ],
        triton_hash=m.triton_hash,
        ir_bytes=dict(m.ir_bytes),
        ir_kept=[s for s in IR_STAGES[1:] if s in m.ir],
    )


def launch_outputs(k: KernelInfo, source: str | None = None) -> list[typed.KernelLaunchRecord]:
    return [
        typed.KernelLaunchRecord(
            shapes=launch.shapes,
            strides=launch.strides,
            dtypes=launch.dtypes,
            scalars=launch.scalars,
            grid=launch.grid,
            block=launch.block,
            grid_computed=grid_computed(launch, k),
            calls=launch.calls,
            us_per_launch=round(launch.total_us / launch.calls, 3) if launch.calls and launch.total_us else None,
        )
        for launch in launches(k, source)
    ]


def launch_text(launch: KernelLaunch, names: list[str] | None = None) -> str:
    """``in_ptr0 fp32[64, 256], xnumel=16384`` for one launch signature."""
    parts = []
    for i, dtype in enumerate(launch.dtypes):
        name = names[i] if names and i < len(names) else f"arg{i}"
        scalar = launch.scalars[i] if i < len(launch.scalars) else None
        if scalar is not None:
            parts.append(f"{name}={scalar}")
        else:
            shape = launch.shapes[i] if i < len(launch.shapes) else []
            parts.append(f"{name} {_TRITON_DTYPE.get(dtype, dtype)}{shape}")
    if launch.grid:
        parts.append(f"grid {tuple(launch.grid)}" + (f" × {launch.block[0]} threads" if launch.block else ""))
    return ", ".join(parts) or "(arguments not recorded)"
