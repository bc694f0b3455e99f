"""What a bundle says about where the run happened: versions, hardware, OS, and the
torch/Inductor configuration each compile ran under (from torch's own metrics record)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import msgspec

from dyn_inspect.engine.schema import ProcessEnd, ProcessStart
from dyn_inspect.inspector import outputs
from dyn_inspect.inspector.model import CompileInfo, RunModel

# The settings that change what torch.compile does with a model, as torch names them in
# compilation_metrics (dotted for nested Inductor options). The whole configuration is in
# the bundle's config/ files; these are the ones a reader looks for first.
RELEVANT_CONFIG: dict[str, tuple[str, ...]] = {
    "dynamo": (
        "recompile_limit",
        "cache_size_limit",
        "accumulated_recompile_limit",
        "automatic_dynamic_shapes",
        "assume_static_by_default",
        "specialize_int",
        "specialize_float",
        "capture_scalar_outputs",
        "capture_dynamic_output_shape_ops",
        "suppress_errors",
        "inline_inbuilt_nn_modules",
        "guard_nn_modules",
        "optimize_ddp",
        "force_parameter_static_shapes",
        "force_nn_module_property_static_shapes",
        "allow_unspec_int_on_nn_module",
        "error_on_recompile",
        "fail_on_recompile_limit_hit",
        "compiled_autograd",
        "nested_graph_breaks",
    ),
    "inductor": (
        "max_autotune",
        "max_autotune_pointwise",
        "max_autotune_gemm",
        "max_autotune_gemm_backends",
        "coordinate_descent_tuning",
        "freezing",
        "fx_graph_cache",
        "autotune_local_cache",
        "force_disable_caches",
        "cpp_wrapper",
        "triton.cudagraphs",
        "triton.cudagraph_trees",
        "cpp.simdlen",
        "cpp.threads",
        "fallback_random",
        "size_asserts",
        "split_reductions",
        "epilogue_fusion",
        "aggressive_fusion",
        "combo_kernels",
        "layout_optimization",
        "keep_output_stride",
        "emulate_precision_casts",
        "trace.provenance_tracking_level",
    ),
    "functorch": ("activation_memory_budget", "donated_buffer", "view_replay_for_aliased_outputs"),
}
# compilation_metrics key → our name; each holds a JSON-encoded dict.
CONFIG_KEYS = {"dynamo_config": "dynamo", "inductor_config": "inductor", "functorch_config": "functorch", "compiler_config": "compiler"}


def environment(start: ProcessStart | None, end: ProcessEnd | None = None) -> dict[str, Any]:
    """The manifest's environment (``outputs.Environment``: the summary's keys too)."""
    return msgspec.to_builtins(outputs.environment(start, end))


def first_start(model: RunModel) -> ProcessStart | None:
    return next((p.start for p in model.processes.values() if p.start is not None), None)


@dataclass
class ConfigSet:
    """One distinct configuration and the compiles that ran under it."""

    values: dict[str, dict[str, Any]]
    compile_ids: list[str] = field(default_factory=list)
    path: str = ""

    @property
    def relevant(self) -> dict[str, dict[str, Any]]:
        return {
            group: {k: self.values[group][k] for k in keys if k in self.values.get(group, {})}
            for group, keys in RELEVANT_CONFIG.items()
            if group in self.values
        }


def config_of(metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for key, name in CONFIG_KEYS.items():
        raw = metrics.get(key)
        if isinstance(raw, str):
            try:
                value = json.loads(raw)
            except (json.JSONDecodeError, ValueError):
                continue
        else:
            value = raw
        if isinstance(value, dict):
            out[name] = value
    return out


def config_sets(compiles: list[tuple[str, CompileInfo, dict[str, Any]]]) -> list[ConfigSet]:
    """Distinct configurations in compile order; ``compiles`` holds (label, compile, metrics)."""
    sets: dict[str, ConfigSet] = {}
    for label, _c, metrics in compiles:
        values = config_of(metrics)
        if not values:
            continue
        digest = hashlib.blake2b(json.dumps(values, sort_keys=True, default=str).encode(), digest_size=8).hexdigest()
        entry = sets.get(digest)
        if entry is None:
            entry = sets[digest] = ConfigSet(values)
        entry.compile_ids.append(label)
    return list(sets.values())
