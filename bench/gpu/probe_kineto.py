"""Which KinetoEvent fields this torch has for a GPU kernel (grid, block, registers): the
check behind engine/profiler.py's device_meta (bench/gpu/run_all.sh kineto)."""

import torch
from torch.profiler import ProfilerActivity, profile


@torch.compile
def f(x: torch.Tensor) -> torch.Tensor:
    return (x.sin() + 1).sum(-1)


x = torch.randn(64, 300, device="cuda")
f(x)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
    f(x)
    torch.cuda.synchronize()
results = prof.profiler.kineto_results
print("kineto_results", type(results))
for e in results.events():
    if str(e.device_type()).endswith("CUDA"):
        print("fields", [a for a in dir(e) if not a.startswith("_")])
        for a in ("linked_correlation_id", "correlation_id", "metadata_json", "name"):
            try:
                print(a, repr(getattr(e, a)())[:500])
            except Exception as err:  # noqa: BLE001
                print(a, "error", repr(err))
        break
for fe in prof.events():
    if str(fe.device_type).endswith("CUDA"):
        print("device FunctionEvent fields", [a for a in vars(fe)][:60])
        break
from dyn_inspect.engine.profiler import device_meta  # noqa: E402

print("device_meta", list(device_meta(prof).items())[:2])
