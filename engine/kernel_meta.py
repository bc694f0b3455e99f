"""Each Triton kernel's compile metadata and IR, read from Inductor's ``CachingAutotuner``.

Torch's structured trace says which Triton kernels a graph made (their source, in the
output code) but not what Triton made of them: the config the autotuner chose, the
configs it tried and their timings, registers, spills, shared memory, the IR stages.
Those live on the ``CachingAutotuner`` object of each kernel in the process that runs it,
so we read them there. Three methods that run once per kernel (never per launch) are
wrapped: ``precompile`` (the launchers exist), ``benchmark_all_configs`` (the timings it
returns) and ``coordinate_descent_tuning`` (that it ran). ``precompile`` arms a one-shot
``run`` on the instance: the kernel's first launch goes through it (the generated code
looks ``kernel.run`` up at every call), it removes itself, calls the class's ``run``
(which autotunes, if the kernel does) and then notes the kernel: the config that won, what
was tried, registers, spills, shared memory, and that launch's argument shapes, strides
and dtypes (what a repro needs). Later launches find no instance attribute and call the
class's method directly: nothing is added on the launch path. ``__getstate__`` is wrapped
too: an armed kernel that Inductor pickles into its cache before its first launch pickles
as it does without us (the one-shot ``run`` left out). Each wrapper calls torch's
original with the same arguments and only reads attributes after it returns, so what
compiles, runs and is cached does not change. A kernel that never launches through
``run`` (never called, or launched from C++ under ``cpp_wrapper``) is not noted.

The wrappers are installed when ``torch._inductor.runtime.triton_heuristics`` is imported
(a one-shot import hook; a process that never compiles for a GPU never imports it, and
we do not import it for it). One ``KernelMeta`` per kernel goes to the recorder's writer
thread, which also reads the IR sizes from Triton's cache directory (the files Triton
writes for every compile: ``.ttir``, ``.ttgir``, ``.llir``, ``.ptx``, ``.cubin``) and,
under ``--kernel-ir`` (``DYN_INSPECT_KERNEL_IR=1``), keeps their text in the run's blobs,
with SASS from ``cuobjdump`` where Triton or CUDA ships one; ``DYN_INSPECT_KERNEL_IR_MB``
bounds the total kept (default 256 MB), and a stage over a fifth of it is not kept.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import math
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dyn_inspect.engine import compile_ids
from dyn_inspect.engine.schema import Blob, KernelConfig, KernelLaunch, KernelMeta

TARGET_MODULE = "torch._inductor.runtime.triton_heuristics"
IR_ENV = "DYN_INSPECT_KERNEL_IR"
IR_MB_ENV = "DYN_INSPECT_KERNEL_IR_MB"
STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")
_FILE_STAGES = ("ttir", "ttgir", "llir", "ptx", "cubin")
_MARK = "_dyn_inspect"

# What the recorder gives us: submit(build) runs build(blobs_put) on its writer thread and
# writes the events it returns; epoch() is the current Dynamo reset epoch.
Submit = Callable[[Callable[[Callable[[str | bytes], Blob]], list[Any]]], None]


class _State:
    def __init__(self, submit: Submit, epoch: Callable[[], int], keep_ir: bool) -> None:
        self.submit = submit
        self.epoch = epoch
        self.keep_ir = keep_ir
        self.ir_budget = _budget_bytes()  # what is left to keep
        self.ir_stage_cap = self.ir_budget // 5  # no stage over a fifth of the whole budget
        self.timings: dict[int, dict[Any, float]] = {}  # id(autotuner) → its last benchmark
        self.coordesc: set[int] = set()  # id(autotuner) of those coordinate descent tuned
        self.lock = threading.Lock()


_state: _State | None = None


def _budget_bytes() -> int:
    try:
        return int(float(os.environ.get(IR_MB_ENV, "256")) * 1e6)
    except ValueError:
        return 256_000_000


def install(submit: Submit, epoch: Callable[[], int], on_error: Callable[[str], None]) -> bool:
    """Wrap the autotuner now if Inductor's Triton runtime is imported, else when it is.
    False where Triton is not installed (nothing to read)."""
    global _state
    if importlib.util.find_spec("triton") is None:
        return False
    _state = _State(submit, epoch, os.environ.get(IR_ENV) == "1")
    module = sys.modules.get(TARGET_MODULE)
    if module is not None:
        return _patch(module, on_error)
    if not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport(on_error))
    return True


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches ``triton_heuristics`` right after it executes, then leaves ``sys.meta_path``."""

    def __init__(self, on_error: Callable[[str], None]) -> None:
        self.on_error = on_error

    def find_spec(self, name: str, path: Sequence[str] | None, target: Any = None) -> Any:
        if name != TARGET_MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None) if spec is not None else None
        original = getattr(loader, "exec_module", None)
        if spec is None or original is None:
            return spec
        run: Callable[[Any], None] = original
        on_error = self.on_error

        class _Loader(importlib.abc.Loader):
            """The module's own loader, which patches after executing it (``get_source`` and
            the rest are the original's)."""

            def create_module(self, spec: Any) -> Any:
                return loader.create_module(spec)  # type: ignore[union-attr]

            def exec_module(self, module: Any) -> None:
                run(module)
                _patch(module, on_error)

            def __getattr__(self, name: str) -> Any:
                return getattr(loader, name)

        spec.loader = _Loader()
        return spec


def _patch(module: Any, on_error: Callable[[str], None]) -> bool:
    cls = getattr(module, "CachingAutotuner", None)
    if cls is None:
        on_error("torch._inductor.runtime.triton_heuristics.CachingAutotuner not found")
        return False
    if not callable(cls.__dict__.get("precompile")) or not callable(cls.__dict__.get("run")):
        # Without these nothing is noted; the autotuning wrappers alone would record nothing.
        on_error("CachingAutotuner has no precompile/run of its own in this torch")
        return False

    def fenced(what: str, fn: Callable[..., None]) -> Callable[..., None]:
        def call(*args: Any) -> None:
            try:
                fn(*args)
            except Exception as err:  # noqa: BLE001 - metadata is optional; the kernel is not
                on_error(f"{what}: {err!r}")

        return call

    arm = fenced("kernel metadata", _arm)
    keep_timings = fenced("autotune timings", _keep_timings)
    coordesc_ran = fenced("autotune timings", _coordesc_ran)

    def wrap(name: str, after: Callable[[Any, Any, tuple[Any, ...]], None]) -> None:
        original = cls.__dict__.get(name)
        if original is None or getattr(original, _MARK, False):
            return

        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            out = original(self, *args, **kwargs)
            after(self, out, args)
            return out

        method.__name__ = original.__name__
        method.__qualname__ = original.__qualname__
        method.__doc__ = original.__doc__
        setattr(method, _MARK, True)
        setattr(cls, name, method)

    wrap("precompile", lambda self, out, args: arm(self, on_error))
    wrap("benchmark_all_configs", lambda self, out, args: keep_timings(self, out))
    wrap("coordinate_descent_tuning", lambda self, out, args: coordesc_ran(self))
    _unarmed_when_pickled(cls)
    return True


def _unarmed_when_pickled(cls: Any) -> None:
    """Wraps ``__getstate__`` so that a kernel armed but not yet launched pickles without
    our one-shot ``run``. Inductor pickles autotuners into its FX-graph cache (the split
    graphs of DDPOptimizer hold theirs): with our local function in the state the save
    failed ("fx graph cache unable to serialize compiled graph"), a warning and a cache miss
    the plain run does not have; and a cache entry must not name our code. The state is
    torch's own, less that one key."""
    original = getattr(cls, "__getstate__", None)
    if not callable(original) or getattr(original, _MARK, False):
        return

    def __getstate__(self: Any) -> Any:
        state = original(self)
        if isinstance(state, dict) and getattr(state.get("run"), _MARK, False):
            state = {k: v for k, v in state.items() if k != "run"}
        return state

    __getstate__.__qualname__ = getattr(original, "__qualname__", "__getstate__")
    setattr(__getstate__, _MARK, True)
    cls.__getstate__ = __getstate__


def _arm(tuner: Any, on_error: Callable[[str], None]) -> None:
    """The one-shot ``run`` on this instance (see the module docstring)."""
    if _state is None or not getattr(tuner, "launchers", None) or "run" in vars(tuner):
        return  # a compile worker's precompile (no launchers), or armed already

    def first_run(*args: Any, **kwargs: Any) -> Any:
        vars(tuner).pop("run", None)  # from now on the class's run, directly
        out = type(tuner).run(tuner, *args, **kwargs)
        try:
            _note(tuner, args)
        except Exception as err:  # noqa: BLE001 - metadata is optional; the launch is not
            on_error(f"kernel metadata: {err!r}")
        return out

    setattr(first_run, _MARK, True)  # (left out of the pickled state: _unarmed_when_pickled)
    tuner.run = first_run


def _coordesc_ran(tuner: Any) -> None:
    if _state is not None:
        with _state.lock:
            _state.coordesc.add(id(tuner))


def _keep_timings(tuner: Any, timings: Any) -> None:
    if _state is not None and isinstance(timings, dict):
        with _state.lock:
            _state.timings[id(tuner)] = dict(timings)


def _config(launcher: Any, config: Any = None, time_ms: float | None = None) -> KernelConfig:
    cfg = config if config is not None else getattr(launcher, "config", None)
    failed = time_ms is not None and not math.isfinite(time_ms)
    return KernelConfig(
        kwargs={str(k): v for k, v in (getattr(cfg, "kwargs", None) or {}).items() if isinstance(v, int | float | str | bool)},
        num_warps=_int(getattr(cfg, "num_warps", None)),
        num_stages=_int(getattr(cfg, "num_stages", None)),
        n_regs=_int(getattr(launcher, "n_regs", None)) if launcher is not None else None,
        n_spills=_int(getattr(launcher, "n_spills", None)) if launcher is not None else None,
        shared=_int(getattr(launcher, "shared", None)) if launcher is not None else None,
        time_ms=round(float(time_ms), 6) if time_ms is not None and not failed else None,
        failed=failed,
    )


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def launch_of(args: Sequence[Any]) -> KernelLaunch:
    """The signature of one launch's arguments (tensors: shape, stride, dtype; else values)."""
    out = KernelLaunch(calls=1)
    for a in args:
        shape = getattr(a, "shape", None)
        if shape is not None and hasattr(a, "stride") and hasattr(a, "dtype"):
            out.shapes.append([int(d) for d in shape])
            out.strides.append([int(s) for s in a.stride()])
            out.dtypes.append(str(a.dtype).removeprefix("torch."))
            out.scalars.append(None)
        else:
            out.shapes.append([])
            out.strides.append([])
            out.dtypes.append(type(a).__name__)
            out.scalars.append(a if isinstance(a, int | float | bool | str) or a is None else repr(a))
    return out


def _note(tuner: Any, args: tuple[Any, ...]) -> None:
    """After the kernel's first launch (its autotuning, if any, done): the event."""
    state = _state
    launchers = list(getattr(tuner, "launchers", None) or [])
    if state is None or not launchers:
        return
    meta = getattr(tuner, "inductor_meta", None) or {}
    fn = getattr(tuner, "fn", None)
    name = str(meta.get("kernel_name") or getattr(fn, "__name__", "") or "")
    if not name:
        return
    torch_cid = getattr(tuner, "compile_id", None)
    cid = compile_ids.qualify(str(torch_cid), state.epoch()) if torch_cid is not None else None
    with state.lock:
        timings = state.timings.pop(id(tuner), {})
        coordesc = id(tuner) in state.coordesc
        state.coordesc.discard(id(tuner))
    autotune: str | None = None
    tried: list[KernelConfig] = []
    results = getattr(getattr(tuner, "coordesc_tuner", None), "cached_benchmark_results", None) or {}
    if coordesc and results:
        autotune = "coordesc"
        tried = [_hashable_config(key, t) for key, t in results.items()]
    elif timings:
        autotune = "benchmark"
        tried = [_config(lch, None, t) for lch, t in timings.items()]
    chosen_launcher = launchers[0]  # after autotuning, the winner is the only launcher
    chosen = _config(chosen_launcher)
    props = getattr(tuner, "device_props", None)
    target, warp = _target(chosen_launcher, props)
    triton_hash = getattr(chosen_launcher, "cache_hash", None)
    first = launch_of(args) if args else None
    event_args = {
        "name": name,
        "backward": bool(getattr(tuner, "is_backward", False)),
        "target": target,
        "warp_size": warp,
        "chosen": chosen,
        "tried": tried,
        "autotune": autotune,
        "triton_hash": str(triton_hash) if triton_hash else None,
        "module_path": getattr(tuner, "filename", None),
        "first_launch": first,
    }
    fn_name = str(getattr(fn, "__name__", "") or name)
    binary = getattr(chosen_launcher, "bin", None)  # None under the static launcher
    state.submit(lambda put: [_event(event_args, cid, fn_name, binary, put)])


def _hashable_config(key: Any, time_ms: float) -> KernelConfig:
    """Coordinate descent keys its results by ``triton_config_to_hashable``: a tuple of
    ``(kwarg, value)`` pairs plus ``num_warps``/``num_stages`` entries, in one order or
    another across versions; read what we recognize."""
    kwargs: dict[str, Any] = {}
    warps = stages = None
    items = key if isinstance(key, tuple | list) else ()
    for item in items:
        if isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[0], str):
            k, v = item
            if k == "num_warps":
                warps = _int(v)
            elif k == "num_stages":
                stages = _int(v)
            elif isinstance(v, int | float | str | bool):
                kwargs[k] = v
    failed = not math.isfinite(time_ms)
    return KernelConfig(kwargs=kwargs, num_warps=warps, num_stages=stages, time_ms=None if failed else round(time_ms, 6), failed=failed)


def _target(launcher: Any, props: Any) -> tuple[str | None, int | None]:
    binary = getattr(launcher, "bin", None)
    t = getattr(getattr(binary, "metadata", None), "target", None)
    if t is not None:
        backend, arch, warp = getattr(t, "backend", None), getattr(t, "arch", None), getattr(t, "warp_size", None)
        arch_text = f"sm_{arch}" if backend == "cuda" and isinstance(arch, int) else str(arch)
        return f"{backend} {arch_text}", _int(warp)
    if props is not None:
        kind, cc = getattr(props, "type", None), getattr(props, "cc", None)
        cc_text = f"sm_{cc}" if kind == "cuda" and isinstance(cc, int) else str(cc)
        return (f"{kind} {cc_text}" if kind else None), _int(getattr(props, "warp_size", None))
    return None, None


def _cache_roots() -> list[Path]:
    """Where Triton writes its cache: TRITON_CACHE_DIR (Inductor sets it to its own
    ``triton/<device>`` folder before compiling), else Triton's default."""
    roots: list[Path] = []
    if os.environ.get("TRITON_CACHE_DIR"):
        roots.append(Path(os.environ["TRITON_CACHE_DIR"]))
    try:
        from triton import knobs  # Triton >= 3.4

        d = getattr(getattr(knobs, "cache", None), "dir", None)
        if d:
            roots.append(Path(d))
    except Exception:  # noqa: BLE001 - an older Triton: its default below
        pass
    roots.append(Path.home() / ".triton" / "cache")
    return roots


def _cache_dir(triton_hash: str | None, fn_name: str) -> Path | None:
    """The Triton cache folder of one compiled kernel: ``<root>/<path key>``. Inductor's
    launchers carry the path key (``cache_hash``); Triton's ``get_cache_manager`` wants
    the hex hash it is made from (it raised on the path key on the H200), so it is not
    asked."""
    if not triton_hash:
        return None
    for d in (root / triton_hash for root in _cache_roots()):
        if any((d / f"{stem}.{ext}").is_file() for stem in _stems(fn_name) for ext in ("ttir", "cubin")):
            return d
    return None


def _stems(fn_name: str) -> tuple[str, ...]:
    """The names Triton gives a kernel's cache files: its name, cut to 150 characters (its
    compiler truncates long names for the file system: GPT-2 small's fused loss backward
    has 156)."""
    return (fn_name, fn_name[:150]) if len(fn_name) > 150 else (fn_name,)


def _event(args: dict[str, Any], cid: str | None, fn_name: str, binary: Any, put: Callable[[str | bytes], Blob]) -> KernelMeta:
    """On the writer thread: the event, with IR sizes (and text under ``--kernel-ir``)."""
    stages: dict[str, str | bytes] = {}
    d = _cache_dir(args["triton_hash"], fn_name)
    asm: Any = None
    for stage in _FILE_STAGES:
        data: str | bytes | None = None
        path = next((p for stem in _stems(fn_name) if d is not None and (p := d / f"{stem}.{stage}").is_file()), None)
        if path is not None:
            raw = path.read_bytes()
            data = raw if stage == "cubin" else raw.decode("utf-8", "replace")
        else:
            if asm is None:
                asm = getattr(binary, "asm", None) or {}  # no cache files: the compiled kernel's own
            try:
                data = asm[stage] if stage in asm else None
            except Exception:  # noqa: BLE001 - a lazy asm dict that cannot load a stage
                data = None
        if data is not None:
            stages[stage] = data
    ir_bytes = {s: len(v.encode() if isinstance(v, str) else v) for s, v in stages.items()}
    ir: dict[str, Blob] = {}
    state = _state
    if state is not None and state.keep_ir:
        cubin = stages.get("cubin")
        if isinstance(cubin, bytes):
            sass = sass_of(cubin)
            if sass:
                stages["sass"] = sass
                ir_bytes["sass"] = len(sass.encode())
        for stage in STAGES:
            text = stages.get(stage)
            if not isinstance(text, str):
                continue
            size = ir_bytes[stage]
            with state.lock:
                if size > state.ir_stage_cap or size > state.ir_budget:
                    continue
                state.ir_budget -= size
            ir[stage] = put(text)
    return KernelMeta(cid=cid, ir_bytes=ir_bytes, ir=ir, **args)


def cuobjdump() -> str | None:
    """Triton's bundled cuobjdump (the one that matches its ptxas), else CUDA's on PATH."""
    try:
        import triton

        bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
        if bundled.is_file():
            return str(bundled)
    except Exception:  # noqa: BLE001
        pass
    return shutil.which("cuobjdump")


def sass_of(cubin: bytes) -> str | None:
    """SASS of a cubin (``cuobjdump -sass``), or None without the tool."""
    tool = cuobjdump()
    if tool is None:
        return None
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        try:
            done = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None
