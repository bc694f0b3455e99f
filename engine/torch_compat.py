"""Every place dyn-inspect changes torch's private API, probed by feature and fenced.

Torch changes its internals every release, and the recorder runs *inside* the user's
compile: a renamed attribute or a new parameter must never turn into an exception in the
user's program. So each touchpoint is a named hook with a state in ``HOOKS``:

- ``trace``: the lean ``trace_structured`` replacement (``tracehook.py`` builds records);
  when it cannot be installed, or our code in it fails, torch's original runs again and a
  logging handler on ``torch.__trace`` records instead (same data, slower);
- ``graph_breaks``: the wrapper on Dynamo's ``log_graph_break`` that hands us the
  ``Unsupported`` exception (graph-break type, stack with columns);
- ``provenance``: the wrapper on Inductor's ``set_kernel_post_grad_provenance_tracing``
  that hands us each kernel's source stacks (kernel → source line) with Inductor's config,
  output code and cache keys left as they are;
- ``profiler``: ``--profile-kernels``' patches (compiled-call hook, C++ kernel ranges,
  Triton byte estimates);
- ``kernel_meta``: the wrappers on Triton's autotuner that keep each kernel's configs,
  registers and IR (``kernel_meta.py``, installed when Inductor's Triton runtime is imported);
- ``environment``: torch/triton/CUDA/config probes written into ``process_start``.

Reads that change nothing in torch are made where they are used, each answering "unknown"
when torch moved what it reads: the frame counter (``recorder._frames_ok``), the recompile
limit in force (``normalizers.on_torch_thread``) and Inductor's default cache directory
(``cache_dir.py``).

Each is probed by feature (attribute present, signature as the code expects), not by
version. A probe that fails leaves torch untouched; a wrapper whose own code raises turns
itself off for the rest of the process and calls torch's original with the same
arguments. ``report()`` is what ``process_start`` / ``process_end`` carry as ``hooks``:
``{"trace": "active", "graph_breaks": "degraded: no graph-break types (...)", ...}``;
the first degradation is said once on stderr.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# The releases recorded for the compatibility matrix (docs/compatibility.md).
TESTED_VERSIONS = ("2.9.1", "2.11.0", "2.13.0", "2.14.1", "2.15.0")
NEWEST_TESTED = (2, 15)
QUIET_ENV = "DYN_INSPECT_QUIET_COMPAT"  # "1": no stderr note (process_start still says it)

# What the user loses when a hook is down (shown by summary, TUI header, LSP status).
LOSES = {
    "trace": "lean trace hook off, recording through a logging handler (slower)",
    "graph_breaks": "no graph-break types or Dynamo stacks (text only)",
    "provenance": "no kernel → source lines",
    "profiler": "no kernel profile",
    "kernel_meta": "no Triton kernel metadata (configs, registers, IR)",
    "environment": "environment partly unknown",
}


@dataclass
class HookState:
    state: str = "off"  # "active" | "off" (not asked for) | "degraded"
    reason: str = ""


class Hooks:
    """The state of every touchpoint in this process; thread-safe, each change said once."""

    def __init__(self) -> None:
        self.states: dict[str, HookState] = {name: HookState() for name in LOSES}
        self._lock = threading.Lock()
        self.announce = False  # set by the recorder: this process speaks on stderr
        self._said: set[str] = set()

    def active(self, name: str) -> None:
        with self._lock:
            if self.states[name].state != "degraded":
                self.states[name] = HookState("active")

    def off(self, name: str, reason: str = "") -> None:
        with self._lock:
            self.states[name] = HookState("off", reason)

    def degrade(self, name: str, reason: str) -> None:
        """Turn a hook's recording off for good (first reason wins)."""
        with self._lock:
            if self.states[name].state == "degraded":
                return
            self.states[name] = HookState("degraded", reason)
            late = "start" in self._said  # after the start-up note: say this one alone
        if late:
            self._say(f"degraded: {name}: {self.describe(name)}")

    def is_active(self, name: str) -> bool:
        return self.states[name].state == "active"

    def describe(self, name: str) -> str:
        s = self.states[name]
        return f"{LOSES[name]} (torch {torch_version()}: {s.reason})" if s.reason else LOSES[name]

    def report(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, s in self.states.items():
            out[name] = f"degraded: {self.describe(name)}" if s.state == "degraded" else s.state
        note = version_note()
        if note:
            out["torch"] = note
        return out

    def degraded(self) -> list[str]:
        return [name for name, s in self.states.items() if s.state == "degraded"]

    def say_start(self) -> None:
        """Once per process, after install: the newer torch and the hooks that are down."""
        with self._lock:
            if "start" in self._said:
                return
            self._said.add("start")
        parts = []
        note = version_note()
        if note:
            parts.append(f"{note}: recording anyway")
        down = [f"{n}: {self.describe(n)}" for n in self.degraded()]
        if note:
            active = [n for n, s in self.states.items() if s.state == "active"]
            parts.append("active: " + (", ".join(active) or "none"))
        if down:
            parts.append("degraded: " + "; ".join(down))
        if note or down:
            self._say("; ".join(parts))

    def _say(self, text: str) -> None:
        if self.announce and os.environ.get(QUIET_ENV) != "1":
            try:
                sys.stderr.write(f"dyn-inspect: {text}\n")
            except Exception:  # noqa: BLE001 - a closed stderr must not break the program
                pass


HOOKS = Hooks()


def torch_version() -> str:
    torch = sys.modules.get("torch")
    return str(getattr(torch, "__version__", "?")) if torch is not None else "?"


def _release(version: str) -> tuple[int, ...]:
    m = re.match(r"(\d+)\.(\d+)", version)
    return (int(m[1]), int(m[2])) if m else ()


def version_note() -> str | None:
    """'torch 2.16.0 is newer than the newest tested (2.15)' or None."""
    version = torch_version()
    release = _release(version)
    if release and release > NEWEST_TESTED:
        return f"torch {version} is newer than the newest tested ({'.'.join(map(str, NEWEST_TESTED))})"
    return None


def _keyword_params(fn: Any) -> set[str] | None:
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None


# --- trace: torch._logging._internal.trace_structured ----------------------------------

TRACE_PARAMS = {
    "name",
    "metadata_fn",
    "payload_fn",
    "suppress_context",
    "expect_trace_id",
    "record_logging_overhead",
    "compile_id",
}


def install_trace(feed: Callable[[Any], None], fallback: Callable[[], None]) -> bool:
    """The lean path (tracehook.py) or, when torch's function is not what it expects,
    ``fallback()`` (the logging handler). Returns whether the lean path is in place."""
    from dyn_inspect.engine import tracehook

    try:
        import torch._logging._internal as internal

        original = getattr(internal, "trace_structured", None)
        if original is None or getattr(internal, "trace_log", None) is None:
            return _trace_fallback(fallback, "torch._logging._internal.trace_structured/trace_log not found")
        params = _keyword_params(original)
        if params is None or params != TRACE_PARAMS:
            extra = sorted((params or set()) ^ TRACE_PARAMS)
            return _trace_fallback(fallback, f"trace_structured's parameters changed ({', '.join(extra) or '?'})")

        def on_failure(why: str) -> None:
            _trace_fallback(fallback, why)

        ok = tracehook.install(feed, on_failure=on_failure)
        if ok:
            HOOKS.active("trace")
            return True
        return _trace_fallback(fallback, "trace_structured already replaced")
    except Exception as exc:  # noqa: BLE001 - never break the import of torch
        return _trace_fallback(fallback, f"install failed: {exc!r}")


def _trace_fallback(fallback: Callable[[], None], reason: str) -> bool:
    HOOKS.degrade("trace", reason)
    try:
        fallback()
    except Exception:  # noqa: BLE001
        pass
    return False


def _before_wrapping(hook: str, cls: Any, original: Any, missing: str) -> bool | None:
    """What an installer returns before it wraps ``original``, a method of torch's ``cls``:
    False where torch lacks either (``hook`` degraded, saying ``missing``), True where ours is
    in place already; None when there is ``original`` to wrap."""
    if cls is None or original is None:
        HOOKS.degrade(hook, missing)
        return False
    if getattr(original, "_dyn_inspect", False):
        return True
    return None


# --- graph_breaks: InstructionTranslatorBase.log_graph_break -----------------------------

GRAPH_BREAK_PARAMS = ["self", "code_options", "reason", "exc"]


def install_graph_breaks(on_exc: Callable[[Any], None], on_done: Callable[[], None]) -> bool:
    """Wrap Dynamo's ``log_graph_break(self, code_options, reason, exc)``: ``on_exc(exc)``
    before torch logs the break, ``on_done()`` after. Our part failing turns it off."""
    try:
        from torch._dynamo import symbolic_convert

        cls: Any = getattr(symbolic_convert, "InstructionTranslatorBase", None)
        original: Any = cls.__dict__.get("log_graph_break") if cls is not None else None
        # Not found in torch 2.9: a module-level function without the exception; the text is parsed.
        if (done := _before_wrapping("graph_breaks", cls, original, "InstructionTranslatorBase.log_graph_break not found")) is not None:
            return done
        try:
            params = list(inspect.signature(original).parameters)
        except (TypeError, ValueError):
            params = []
        if params != GRAPH_BREAK_PARAMS:
            HOOKS.degrade("graph_breaks", f"log_graph_break{tuple(params)} is not {tuple(GRAPH_BREAK_PARAMS)}")
            return False
    except Exception as exc:  # noqa: BLE001
        HOOKS.degrade("graph_breaks", f"install failed: {exc!r}")
        return False

    def log_graph_break(self: Any, *args: Any, **kwargs: Any) -> Any:
        ours = HOOKS.is_active("graph_breaks")
        if ours:
            try:
                exc = kwargs["exc"] if "exc" in kwargs else args[2]
                on_exc(exc)
            except Exception as err:  # noqa: BLE001 - our code: off for good, torch's runs
                HOOKS.degrade("graph_breaks", f"our handler failed: {err!r}")
                ours = False
        try:
            return original(self, *args, **kwargs)
        finally:
            if ours:
                try:
                    on_done()
                except Exception as err:  # noqa: BLE001
                    HOOKS.degrade("graph_breaks", f"our handler failed: {err!r}")

    log_graph_break._dyn_inspect = True  # type: ignore[attr-defined]
    log_graph_break.__wrapped__ = original  # type: ignore[attr-defined]
    cls.log_graph_break = log_graph_break
    HOOKS.active("graph_breaks")
    return True


# --- provenance: torch._inductor.debug.set_kernel_post_grad_provenance_tracing ----------
#
# Inductor's codegen calls this function for every kernel it names (C++, Triton, extern
# calls), with the scheduler nodes fused into it, whatever ``trace.provenance_tracking_level``
# says: with the level at 0 (the default) it returns None at once and the output code gets
# no debug handle. We do not turn the level on: it changes what the program sees (two more
# trace artifacts per compile for every handler on ``torch.__trace``, a
# ``# [Provenance debug handles]`` comment per kernel call in the output code that goes into
# Inductor's cache, ``inductor_provenance`` in the compilation metrics, pattern-matcher node
# metadata, an AOTI package's extra file; issue 56). Instead we wrap the function: the
# wrapper reads the same stack traces torch would (``IRNode.get_stack_traces`` of each
# node's IR), hands them to the recorder, and returns torch's own result unchanged.

_PROVENANCE_FN = "set_kernel_post_grad_provenance_tracing"


def _stack_traces(node_schedule: Any, is_extern: bool) -> list[str]:
    """The user stacks of the FX nodes behind one kernel, as torch's provenance collects them."""
    irs = [node_schedule] if is_extern else [getattr(n, "node", None) for n in node_schedule]
    out: dict[str, None] = {}
    for ir in irs:
        if ir is None:
            continue  # EnableReduction / DisableReduction markers in a Triton node schedule
        get = getattr(ir, "get_stack_traces", None)
        if callable(get):
            traces = get()
        else:  # an IR without the method (older torch): the origins' own metadata
            traces = [o.meta.get("stack_trace") for o in getattr(ir, "origins", ()) or ()]
        for trace in traces:
            if isinstance(trace, str) and trace:
                out[trace] = None
    return list(out)


def install_provenance(take: Callable[[str, list[str]], None]) -> bool:
    """Hand ``take(kernel_name, stack_traces)`` every kernel Inductor's codegen names, without
    changing Inductor's config or output. Call before the first compile (it imports
    ``torch._inductor.debug``, which every Inductor compile imports). False if torch lacks
    the function."""
    try:
        from torch._inductor import debug
    except Exception as exc:  # noqa: BLE001 - no Inductor: nothing to map
        HOOKS.degrade("provenance", f"torch._inductor.debug not importable: {exc!r}")
        return False
    original = getattr(debug, _PROVENANCE_FN, None)
    if original is None:
        HOOKS.degrade("provenance", f"torch._inductor.debug.{_PROVENANCE_FN} not found")
        return False
    if getattr(original, "_dyn_inspect", False):
        return True
    try:
        params = list(inspect.signature(original).parameters)
    except (TypeError, ValueError):
        params = []
    if params[:2] != ["node_schedule", "kernel_name"]:
        HOOKS.degrade("provenance", f"{_PROVENANCE_FN} takes {params}, not (node_schedule, kernel_name, ...)")
        return False
    working = [True]

    def wrapper(node_schedule: Any, kernel_name: Any, *args: Any, **kwargs: Any) -> Any:
        if working[0]:
            try:
                is_extern = bool(kwargs.get("is_extern", args[0] if args else False))
                traces = _stack_traces(node_schedule, is_extern)
                if traces and isinstance(kernel_name, str):
                    take(kernel_name, traces)
            except Exception as exc:  # noqa: BLE001 - our code: off for good, torch's call goes on
                working[0] = False
                HOOKS.degrade("provenance", f"our kernel → line hook failed: {exc!r}")
        return original(node_schedule, kernel_name, *args, **kwargs)

    wrapper._dyn_inspect = True  # type: ignore[attr-defined]
    wrapper.__wrapped__ = original  # type: ignore[attr-defined]
    wrapper.__name__ = original.__name__
    wrapper.__qualname__ = getattr(original, "__qualname__", original.__name__)
    wrapper.__doc__ = original.__doc__
    setattr(debug, _PROVENANCE_FN, wrapper)
    # Codegen modules imported before us took the function by name (`from ..debug import`).
    for name, module in list(sys.modules.items()):
        if name.startswith("torch._inductor") and getattr(module, _PROVENANCE_FN, None) is original:
            try:
                setattr(module, _PROVENANCE_FN, wrapper)
            except Exception:  # noqa: BLE001
                pass
    HOOKS.active("provenance")
    return True


def user_provenance_on() -> bool:
    """Whether the program turned Inductor's own provenance tracking on (then torch writes
    its kernel → stack artifacts itself and ours would repeat them)."""
    config = sys.modules.get("torch._inductor.config")
    trace = getattr(config, "trace", None)
    try:
        return bool(getattr(trace, "provenance_tracking_level", None) or getattr(trace, "provenance_tracking", None))
    except Exception:  # noqa: BLE001
        return False


# --- profiler: OptimizeContext.enter_exit_hooks, cpp.enable_kernel_profile, TritonKernel --


def install_step_hooks(hook_for: Callable[[int], Callable[[], Callable[[], None]]], named: Callable[[int, Any], None]) -> bool:
    """Add ``hook_for(id(ctx))`` to every torch.compile context's ``enter_exit_hooks``
    (called on each entry of a compiled callable), tell ``named(id(ctx), fn)`` which
    callable each context compiles, and make Inductor's kernels visible to torch.profiler.
    False (profiler degraded) where torch lacks what it needs."""
    try:
        import torch._inductor.config as inductor_config
        from torch._dynamo import eval_frame

        cls: Any = getattr(eval_frame, "OptimizeContext", None)
        original_init: Any = getattr(cls, "__init__", None)
        if (done := _before_wrapping("profiler", cls, original_init, "torch._dynamo.eval_frame.OptimizeContext not found")) is not None:
            return done
    except Exception as exc:  # noqa: BLE001
        HOOKS.degrade("profiler", f"install failed: {exc!r}")
        return False

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807 - patching
        original_init(self, *args, **kwargs)
        if not HOOKS.is_active("profiler"):
            return
        try:
            hooks = getattr(self, "enter_exit_hooks", None)
            if not isinstance(hooks, list):
                HOOKS.degrade("profiler", "OptimizeContext has no enter_exit_hooks list")
                return
            hooks.append(_fenced_enter(hook_for(id(self))))
        except Exception as err:  # noqa: BLE001
            HOOKS.degrade("profiler", f"our hook failed: {err!r}")

    original_call = cls.__call__

    def __call__(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N807 - patching
        out = original_call(self, fn, *args, **kwargs)
        try:
            named(id(self), fn)
        except Exception as err:  # noqa: BLE001
            HOOKS.degrade("profiler", f"our hook failed: {err!r}")
        return out

    __init__._dyn_inspect = True  # type: ignore[attr-defined]
    cls.__init__ = __init__  # type: ignore[method-assign]
    cls.__call__ = __call__  # type: ignore[method-assign]
    HOOKS.active("profiler")
    # C++ kernels are invisible to the profiler unless Inductor wraps them in a
    # RECORD_FUNCTION; this also keys the FX-graph cache apart from unprofiled runs.
    try:
        inductor_config.cpp.enable_kernel_profile = True
    except Exception:  # noqa: BLE001 - no such key: C++ kernels show as their ATen ops only
        pass
    _add_kernel_bytes_to_triton_metadata()
    return True


def install_eager_step_hooks(hook_for: Callable[[int], Callable[[], Callable[[], None]]], named: Callable[[int, Any], None]) -> bool:
    """``--disable-compile --profile N``: torch.compile hands back the callable itself
    (``_NullDecorator``), so there is no compile context to hook. A module gets a forward
    pre-hook and an always-called forward hook (the module itself is still what the program
    holds); a function is wrapped (``functools.wraps``: same name, docstring, signature).
    False (profiler degraded) where torch lacks ``_NullDecorator``."""
    import functools

    try:
        import torch
        from torch._dynamo import eval_frame

        cls: Any = getattr(eval_frame, "_NullDecorator", None)
        original: Any = cls.__dict__.get("__call__") if cls is not None else None
        if (done := _before_wrapping("profiler", cls, original, "torch._dynamo.eval_frame._NullDecorator not found")) is not None:
            return done
    except Exception as exc:  # noqa: BLE001
        HOOKS.degrade("profiler", f"install failed: {exc!r}")
        return False

    def __call__(self: Any, fn: Any) -> Any:  # noqa: N807 - patching
        out = original(self, fn)
        if out is not fn or not HOOKS.is_active("profiler"):
            return out
        hook = _fenced_enter(hook_for(id(fn)))
        named(id(fn), fn)
        if isinstance(fn, torch.nn.Module):
            leaves: list[Callable[[], None]] = []
            fn.register_forward_pre_hook(lambda *_: leaves.append(hook()))
            fn.register_forward_hook(lambda *_: leaves.pop()() if leaves else None, always_call=True)
            return fn

        @functools.wraps(fn)
        def stepped(*args: Any, **kwargs: Any) -> Any:
            leave = hook()
            try:
                return fn(*args, **kwargs)
            finally:
                leave()

        return stepped

    __call__._dyn_inspect = True  # type: ignore[attr-defined]
    cls.__call__ = __call__  # type: ignore[method-assign]
    HOOKS.active("profiler")
    return True


def force_eager() -> tuple[Callable[[], None] | None, str | None]:
    """``torch.compiler.set_stance("force_eager")`` from here on (every ``torch.compile``
    directive ignored: the original Python runs, nothing is compiled, no guard is checked),
    for the eager arm of ``--profile``'s compiled-against-eager steps. Returns the call that
    puts the stance back, or None and why not: torch lacks it, or the program chose a stance
    of its own (that is left alone). Called only outside compiled code (a step's entry)."""
    try:
        import torch

        setter: Any = getattr(getattr(torch, "compiler", None), "set_stance", None)
        if setter is None:
            return None, f"torch {torch_version()} has no torch.compiler.set_stance"
        ctx = setter("force_eager")
        prev = getattr(getattr(ctx, "prev", None), "stance", None)
        restore: Callable[[], None] = lambda: ctx.__exit__(None, None, None)  # noqa: E731
        if prev != "default":
            restore()
            return None, f"the program set the compiler's stance ({prev or 'unknown'}): left as it is"
        return restore, None
    except Exception as exc:  # noqa: BLE001 - a torch whose stance API differs: no eager arm
        return None, f"set_stance failed: {exc!r}"


def _noop() -> None:
    return None


def _fenced_enter(enter: Callable[[], Callable[[], None]]) -> Callable[[], Callable[[], None]]:
    """An enter_exit hook whose failure turns the profiler off instead of failing the call."""

    def hook() -> Callable[[], None]:
        if not HOOKS.is_active("profiler"):
            return _noop
        try:
            leave = enter()
        except Exception as err:  # noqa: BLE001
            HOOKS.degrade("profiler", f"our hook failed: {err!r}")
            return _noop

        def fenced_leave() -> None:
            try:
                leave()
            except Exception as err:  # noqa: BLE001
                HOOKS.degrade("profiler", f"our hook failed: {err!r}")

        return fenced_leave

    return hook


def _add_kernel_bytes_to_triton_metadata() -> None:
    """Put Inductor's byte estimate into every Triton kernel's metadata (what
    ``benchmark_kernel`` does, without the benchmark harness and its stderr line): the
    launcher hands it to the profiler as ``kernel_num_gb``. torch ≥ 2.12 builds the
    metadata in ``inductor_meta_per_kernel``; older Inductor writes it inline into the
    kernel's source (``inductor_meta={...}``), where we add the key."""
    try:
        from torch._inductor.codegen.triton import TritonKernel
    except Exception:  # noqa: BLE001 - no Triton backend in this build
        return

    def estimate(kernel: Any) -> float | None:
        try:
            return float(kernel.estimate_kernel_num_bytes()) / 1e9
        except Exception:  # noqa: BLE001 - the estimate is optional
            return None

    per_kernel = getattr(TritonKernel, "inductor_meta_per_kernel", None)
    if per_kernel is not None and not getattr(per_kernel, "_dyn_inspect", False):

        def inductor_meta_per_kernel(self: Any, *args: Any, **kwargs: Any) -> Any:
            out = per_kernel(self, *args, **kwargs)
            try:
                if isinstance(out, dict) and "kernel_num_gb" not in out and (gb := estimate(self)) is not None:
                    out["kernel_num_gb"] = gb
            except Exception:  # noqa: BLE001 - the estimate is optional
                pass
            return out

        inductor_meta_per_kernel._dyn_inspect = True  # type: ignore[attr-defined]
        TritonKernel.inductor_meta_per_kernel = inductor_meta_per_kernel  # type: ignore[method-assign]
        return
    codegen = getattr(TritonKernel, "codegen_kernel", None)
    if codegen is None or getattr(codegen, "_dyn_inspect", False):
        return

    def codegen_kernel(self: Any, *args: Any, **kwargs: Any) -> Any:
        code = codegen(self, *args, **kwargs)
        try:
            if isinstance(code, str) and "kernel_num_gb" not in code and "inductor_meta={" in code:
                gb = estimate(self)
                if gb is not None:
                    code = code.replace("inductor_meta={", f"inductor_meta={{'kernel_num_gb': {gb!r}, ", 1)
        except Exception:  # noqa: BLE001 - the estimate is optional
            pass
        return code

    codegen_kernel._dyn_inspect = True  # type: ignore[attr-defined]
    TritonKernel.codegen_kernel = codegen_kernel  # type: ignore[method-assign]


# --- environment: versions, CPU ISA, compile config, CUDA devices -------------------------


def torch_info() -> dict[str, Any]:
    """The ProcessStart fields that need torch; what a probe cannot read stays None."""
    from dyn_inspect.engine import environment

    info: dict[str, Any] = {"torch": None, "triton": None, "cuda": None, "cpu_isa": None, "config": {}}
    failed: list[str] = []
    try:
        import torch

        info["torch"] = str(torch.__version__)
        info["cuda"] = getattr(getattr(torch, "version", None), "cuda", None)
    except Exception as exc:  # noqa: BLE001
        failed.append(f"version: {exc!r}")
    info["triton"] = environment.dist_version("triton") or environment.dist_version("pytorch-triton")
    try:
        import torch

        info["cpu_isa"] = torch.backends.cpu.get_cpu_capability()
    except Exception as exc:  # noqa: BLE001 - older builds
        failed.append(f"cpu capability: {exc!r}")
    try:
        info["config"] = environment.compile_config()
    except Exception as exc:  # noqa: BLE001
        failed.append(f"compile config: {exc!r}")
    if failed:
        HOOKS.degrade("environment", "; ".join(failed))
    else:
        HOOKS.active("environment")
    return info


def cuda_devices() -> tuple[list[str], str | None]:
    """Device names and driver version, only if the program initialized CUDA itself."""
    torch = sys.modules.get("torch")
    if torch is None:
        return [], None
    try:
        if not torch.cuda.is_initialized():
            return [], None
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        driver = None
        get_driver = getattr(torch._C, "_cuda_getDriverVersion", None)
        if get_driver is not None:
            v = int(get_driver())
            driver = f"{v // 1000}.{(v % 1000) // 10}"
        return names, driver
    except Exception:  # noqa: BLE001 - a broken CUDA setup must not break the program
        return [], None


# --- reader side: what the faces (summary, TUI header, LSP status) say -----------------


def degraded_notes(processes: Any) -> list[str]:
    """'no kernel → source lines (torch 2.16.0: why)' per hook that was down in any
    process of a run, and the newer-than-tested note; from each process's ``hooks``
    (process_end's, written later, win). Imports no torch: the inspector calls it."""
    notes: list[str] = []
    for p in processes:
        hooks: dict[str, str] = dict(getattr(p.start, "hooks", None) or {})
        hooks.update(getattr(p.end, "hooks", None) or {})
        for name, value in hooks.items():
            note = value if name == "torch" else value.removeprefix("degraded: ") if value.startswith("degraded: ") else None
            if note and note not in notes:
                notes.append(note)
    return notes
