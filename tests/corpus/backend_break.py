"""A backend that refuses a graph: Dynamo's GB0219 "Backend compiler exception". The
backend is Inductor (``compile_fx``) for every graph without a ``sin``; a graph with one it
refuses the way a backend refuses an operator it has no kernel for (an
``UnsupportedOperatorException``, one of the exceptions torch lets a backend fall back on).
torch warns ("WON'T CONVERT refused ..."), logs the break at the function and runs it
eagerly; ``taken`` compiles with Inductor."""

import torch
from torch._inductor.compile_fx import compile_fx
from torch._subclasses.fake_tensor import UnsupportedOperatorException


def picky_inductor(gm, example_inputs):
    for node in gm.graph.nodes:
        if node.target in (torch.sin, "sin"):
            raise UnsupportedOperatorException(torch.ops.aten.sin.default)
    return compile_fx(gm, example_inputs)


@torch.compile(backend=picky_inductor)
def refused(x):
    y = x.cos()
    return y.sin() + 1  # BREAK:backend


@torch.compile(backend=picky_inductor)
def taken(x):
    return x.cos() * 2


print("refused", round(refused(torch.ones(4)).sum().item(), 3), flush=True)
print("taken", round(taken(torch.ones(4)).sum().item(), 3), flush=True)
