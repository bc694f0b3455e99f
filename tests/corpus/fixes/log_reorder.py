"""A progress print inside a compiled step breaks the graph on every call. The fix: let
Dynamo reorder ``print`` (it runs after the graph, with the same values: output kept)."""

import torch


@torch.compile
def step(x):
    y = x.cos() * 2
    print("step", y.shape[0])  # BREAK:print
    return y + 1


for i in range(3):
    print("out", step(torch.full((4,), float(i))).tolist(), flush=True)
