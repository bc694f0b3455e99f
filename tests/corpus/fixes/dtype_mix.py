"""Inputs arrive as float32, then float64 (an upstream cast nobody meant): ``by_dtype``
recompiles on the dtype guard. The advice: cast to the compiled dtype before the call."""

import torch


@torch.compile
def by_dtype(x):  # RECOMPILE:dtype
    return x.sin() + 1


for dtype in (torch.float32, torch.float64):
    x = torch.linspace(0, 1, 8, dtype=dtype)
    y = by_dtype(x)  # FIX:cast
    print(tuple(y.shape), flush=True)
