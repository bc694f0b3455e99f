"""A compiled row sum called on a matrix and on its transpose: the stride guard fails and
``by_layout`` recompiles. The advice: ``x = x.contiguous()`` before the call (same values)."""

import torch


@torch.compile
def by_layout(x):  # RECOMPILE:stride
    return (x * 2).sum(dim=1)


base = torch.arange(64.0).reshape(8, 8)
for x in (base, base.t()):
    print(by_layout(x)[:3].tolist(), flush=True)  # FIX:layout
