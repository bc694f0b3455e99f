"""What the recorded process runs on: python, torch, triton, CUDA, devices, CPU ISA, rank.

Collected without initializing CUDA at start (that would change the user's program);
device names are read at exit, when the program has initialized CUDA itself. What needs
torch's internals is probed in ``torch_compat`` (a failing probe leaves a field empty).
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import socket
import sys
import warnings
from typing import Any


def dist_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def static_info() -> dict[str, Any]:
    """Fields of ProcessStart that need no torch."""
    return {
        "argv": list(sys.argv),
        "cwd": os.getcwd(),
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "executable": sys.executable,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "hostname": socket.gethostname(),
        "cpu": cpu_model(),
        "rank": _env_int("RANK"),
        "local_rank": _env_int("LOCAL_RANK"),
        "world_size": _env_int("WORLD_SIZE"),
        # Only under torchrun (the agent sets both for its workers).
        "node_rank": _env_int("GROUP_RANK") if "TORCHELASTIC_RUN_ID" in os.environ else None,
        "job_id": os.environ.get("TORCHELASTIC_RUN_ID"),
    }


def torch_info() -> dict[str, Any]:
    """The fields that need torch: probed and fenced in torch_compat (private API)."""
    from dyn_inspect.engine import torch_compat

    return torch_compat.torch_info()


def compile_config() -> dict[str, Any]:
    """The torch.compile settings that most often explain what a run did."""
    import torch._dynamo.config as dynamo_config
    import torch._inductor.config as inductor_config

    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated config names warn on access
        _collect(out, dynamo_config, inductor_config)
    return {k: v for k, v in out.items() if isinstance(v, (bool, int, float, str, type(None)))}


def _collect(out: dict[str, Any], dynamo_config: Any, inductor_config: Any) -> None:
    for name in (
        "recompile_limit",
        "cache_size_limit",
        "accumulated_recompile_limit",
        "automatic_dynamic_shapes",
        "assume_static_by_default",
        "suppress_errors",
        "inline_inbuilt_nn_modules",
        "capture_scalar_outputs",
    ):
        if hasattr(dynamo_config, name):
            out[f"dynamo.{name}"] = getattr(dynamo_config, name)
    for name in ("max_autotune", "coordinate_descent_tuning", "freezing", "fx_graph_cache", "cpp_wrapper"):
        if hasattr(inductor_config, name):
            out[f"inductor.{name}"] = getattr(inductor_config, name)
    try:
        out["inductor.triton.cudagraphs"] = inductor_config.triton.cudagraphs
        out["inductor.cpp.simdlen"] = inductor_config.cpp.simdlen
    except AttributeError:
        pass


def cuda_devices() -> tuple[list[str], str | None]:
    """Device names and driver version, only if the program initialized CUDA itself."""
    from dyn_inspect.engine import torch_compat

    return torch_compat.cuda_devices()
