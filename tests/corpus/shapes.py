"""Dynamic shapes: symbols for every dim (dynamic=True), a shape guard from a comparison,
a dim specialized by a shape-dependent branch, and automatic dynamic after a recompile."""

import torch


def scale(x):
    return x * 2


@torch.compile(dynamic=True)
def dyn(x, y):
    n = x.shape[0]  # SHAPES:symbol
    out = scale(x) + 1
    if y.shape[0] > 8:  # SHAPES:guard
        out = out + y.sum()
    if x.shape[1] == 3:  # SHAPES:specialize
        out = out * 3
    return out.sum(dim=0) * n


@torch.compile
def auto(x):
    return (x.cos() + 1).sum()  # SHAPES:auto


for n in (5, 9):
    dyn(torch.randn(n, 3), torch.randn(10))
for n in (4, 7):  # the second call recompiles with dim 0 dynamic (automatic dynamic)
    auto(torch.randn(n))
