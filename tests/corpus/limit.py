"""The recompile limit: every call specializes on a new dtype until torch gives up."""

import torch

torch._dynamo.config.recompile_limit = 2


@torch.compile
def limited(x):  # RECOMPILE:limit
    return x + 1


for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32):
    limited(torch.ones(4, dtype=dtype))
print("limited ran", flush=True)
