"""A graph break inside a loop of a compiled function: torch gives up on the frame with
"graph break in loop" (its own gb id) caused by the inner ``.item()`` break (another id);
each break must keep the id torch paired it with."""

import torch


@torch.compile
def running_total(values):
    total = torch.zeros(())
    for v in values:
        total = total + v.sum().item()  # BREAK:loop_item
    return total


running_total([torch.randn(4) for _ in range(3)])
print("loop done", flush=True)
