"""Control flow as PyTorch's control-flow tutorial writes it: ``torch.cond`` on a
data-dependent predicate, and a ``nonzero`` whose size is an unbacked symbol
(``capture_dynamic_output_shape_ops``). Compiled with Inductor; a second
length recompiles the cond function, and ``.nonzero()``'s unbacked size is created by torch,
not by the recorder."""

import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True


def true_fn(x):
    return x.sin()


def false_fn(x):
    return x.cos()


@torch.compile
def branchy(x):
    return torch.cond(x.sum() > 0, true_fn, false_fn, (x,))


@torch.compile
def positives(x):
    idx = x.nonzero()  # UNBACKED:nonzero
    return idx.float().mean() + x.sum()


for n in (4, 4, 8):
    x = torch.linspace(-1, 2, n)
    print(round(branchy(x).sum().item(), 4), round(branchy(-x).sum().item(), 4), flush=True)
print(round(positives(torch.tensor([0.0, 1.0, -2.0, 3.0])).item(), 4), flush=True)
