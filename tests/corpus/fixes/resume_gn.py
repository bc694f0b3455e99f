"""Two compiled functions, ``fn`` and ``gn``; ``gn`` breaks the graph and its resume
function recompiles when the length changes: its advice names ``gn``, not ``fn``."""

import torch


@torch.compile
def fn(x):
    return x + 1


@torch.compile
def gn(x):
    y = x * 2
    print("gn break")  # BREAK:gn
    return y.sin()


for n in (4, 6):
    fn(torch.randn(3))
    gn(torch.randn(n))
print("resume done", flush=True)
