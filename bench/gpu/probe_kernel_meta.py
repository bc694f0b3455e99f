"""What this torch/Triton hands us for kernel metadata (bench/gpu/run_all.sh kernels): one
small compiled function, its CachingAutotuner's launchers, the Triton cache files, and
the profiler's view of one launch. For checking engine/kernel_meta.py on a new version."""

import gc
import os

import torch


def f(x: torch.Tensor) -> torch.Tensor:
    return (x.sin() + 1).sum(-1)


x = torch.randn(64, 300, device="cuda")
g = torch.compile(f)
g(x)
torch.cuda.synchronize()
from torch._inductor.runtime.triton_heuristics import CachingAutotuner  # noqa: E402


def is_tuner(o: object) -> bool:
    try:
        return isinstance(o, CachingAutotuner)
    except ReferenceError:  # a dead weak proxy among gc's objects
        return False


tuners = [o for o in gc.get_objects() if is_tuner(o)]
print("autotuners", len(tuners), "TRITON_CACHE_DIR", os.environ.get("TRITON_CACHE_DIR"))
for t in tuners[:2]:
    print("tuner", type(t).__name__, "compile_id", getattr(t, "compile_id", "?"), "fn", getattr(getattr(t, "fn", None), "__name__", "?"))
    print("  inductor_meta keys", sorted((getattr(t, "inductor_meta", None) or {}).keys())[:40])
    for lch in getattr(t, "launchers", [])[:1]:
        print(
            "  launcher",
            type(lch),
            {k: repr(getattr(lch, k, "<none>"))[:100] for k in ("n_regs", "n_spills", "shared", "cache_hash", "bin", "config")},
        )
        h = getattr(lch, "cache_hash", None)
        if h:
            from triton.runtime.cache import get_cache_manager

            try:
                d = get_cache_manager(h).cache_dir
                print("  cache manager dir", d, os.path.isdir(d), sorted(os.listdir(d))[:12] if os.path.isdir(d) else None)
            except ValueError as err:  # Triton's manager wants the hex hash; launchers carry the path key
                print("  cache manager:", err)
            root = os.environ.get("TRITON_CACHE_DIR", "")
            print(
                "  root/hash",
                os.path.isdir(os.path.join(root, h)),
                sorted(os.listdir(os.path.join(root, h)))[:12] if os.path.isdir(os.path.join(root, h)) else None,
            )
from torch.profiler import ProfilerActivity, profile  # noqa: E402

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
    g(x)
    torch.cuda.synchronize()
for fe in prof.events():
    if fe.kernels and fe.name.startswith("triton"):
        print(
            "op",
            fe.name,
            "id",
            fe.id,
            "shapes",
            fe.input_shapes,
            "dtypes",
            getattr(fe, "input_dtypes", "?"),
            "concrete",
            getattr(fe, "concrete_inputs", "?"),
            "kw",
            getattr(fe, "kwinputs", "?"),
        )
for e in prof.profiler.kineto_results.events():
    if str(e.device_type()).endswith("CUDA"):
        print("device", e.name()[:60], "linked", e.linked_correlation_id(), "meta", (e.metadata_json() or "")[:400])
        break
