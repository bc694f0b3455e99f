"""Run plainly and under dyn-inspect with one TORCHINDUCTOR_CACHE_DIR
(tests/engine/test_cache_keys.py): two tiny graphs, and torch's own FX graph cache counts at the
end, which must not depend on whether dyn-inspect recorded the run."""

import torch
from torch._dynamo.utils import counters


@torch.compile
def scaled(x):
    return (x.sin() * 2).sum()


@torch.compile
def shifted(x):
    return x.cos() + 1


x = torch.randn(8)
scaled(x)
shifted(x)
fx = counters["inductor"]
print(f"fxgraph hit={fx['fxgraph_cache_hit']} miss={fx['fxgraph_cache_miss']}", flush=True)
