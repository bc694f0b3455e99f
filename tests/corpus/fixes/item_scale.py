"""``.item()`` breaks the graph and its float crosses into the resume function, which is
guarded on the value: every new mean recompiles. The advice: let Dynamo capture ``.item()``."""

import torch


@torch.compile
def scale_by_mean(x):
    s = x.mean().item()  # BREAK:item
    return x * s


for v in (1.0, 2.0, 3.0):
    print(scale_by_mean(torch.full((4,), v)).tolist(), flush=True)  # FIX:item
