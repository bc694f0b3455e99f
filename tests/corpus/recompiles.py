"""Recompiles: a shape change (then dynamic) and a dtype change."""

import torch


@torch.compile
def by_shape(x):  # RECOMPILE:shape
    return (x * 2).sum(dim=0)


@torch.compile
def by_dtype(x):  # RECOMPILE:dtype
    return x.sin() + 1


for n in (4, 8, 16):
    by_shape(torch.randn(n, 8))
for dtype in (torch.float32, torch.float64):
    by_dtype(torch.randn(8, dtype=dtype))
