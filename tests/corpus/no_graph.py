"""A compiled function whose only statement is a ``print``: Dynamo breaks the graph at it
and has nothing before or after it to capture, so the run compiles frames but no graph
(torch's own count of unique graphs is 0)."""

import torch


@torch.compile
def only_prints(x):
    print("step", x.shape)  # BREAK:only_print


only_prints(torch.randn(4))
only_prints(torch.randn(4))
print("done", flush=True)
