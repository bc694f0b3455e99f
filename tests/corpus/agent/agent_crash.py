"""A recompile whose offered fix crashes the program (tests/mcp/test_mcp_server.py): the
batch dim changes (4, then 8), so the fix marks it dynamic, but the function branches on
its value (`x.shape[0] == 4`), which specializes it — torch raises a ConstraintViolationError
on the first call once the dim is marked. verify must say "not verified"."""

import torch


@torch.compile
def head(x):  # RECOMPILE:shape
    if x.shape[0] == 4:
        return x[:2].sum()
    return x.sum()


torch.manual_seed(0)
for n in (4, 8):
    x = torch.randn(n)  # FIX:x
    print(f"head {n}: {float(head(x)):.4f}")
