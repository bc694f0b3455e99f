"""``@torch.compile(dynamic=False)`` called with five lengths: torch never goes dynamic, so
every new length compiles again (4 recompiles). The fix is mark_dynamic (torch honours it
under dynamic=False), not "torch recompiles once and then goes dynamic"."""

import torch

torch.manual_seed(0)


@torch.compile(dynamic=False)
def f(x):
    return x * 2 + 1


total = 0.0
for n in range(2, 7):
    x = torch.randn(n)  # FIX:static_x
    total += float(f(x).sum())
print("static total", round(total, 4), flush=True)
