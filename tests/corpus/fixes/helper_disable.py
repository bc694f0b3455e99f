"""A helper that logs is inlined into a compiled function and breaks its graph. The fix:
``@torch.compiler.disable`` on the helper (it runs eagerly and keeps its output; torch then
breaks at the call instead, GB0098: the break moves, it is not removed)."""

import torch


def report(t):
    print("report", t.shape[0])  # BREAK:helper
    return t + 1


@torch.compile
def model(x):
    y = x.exp()
    y = report(y)  # CALLS:helper
    return y - 1


for n in (3, 3):
    print("out", round(model(torch.zeros(n)).sum().item(), 4), flush=True)
