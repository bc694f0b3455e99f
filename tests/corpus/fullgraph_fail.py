"""A ``fullgraph=True`` function that hits a graph break: torch raises, nothing catches it,
and the program exits 1 with the traceback."""

import torch


@torch.compile
def fine(x):
    return x.exp() + 1


@torch.compile(fullgraph=True)
def strict(x):
    y = x * 2
    print("not allowed under fullgraph")  # BREAK:fullgraph
    return y


fine(torch.randn(4))
strict(torch.randn(4))
print("never reached", flush=True)
