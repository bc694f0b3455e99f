"""Recompiles whose right advice is not the generic one (issue 12, defect 11).

Each function is compiled with the eager backend (only Dynamo's guards matter here) and
called so that exactly one guard fails; markers name the lines tests look up.
"""

import torch


# An optimizer whose float lr changes (a scheduler by hand): Dynamo guards on
# param_groups[0]['lr'] == 0.01 — the fix is a tensor lr, not a config flag.
model = torch.nn.Linear(4, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile(backend="eager")
def opt_step():  # RECOMPILE:lr
    opt.step()  # CALLS:step


for lr in (0.01, 0.005):
    for group in opt.param_groups:
        group["lr"] = lr
    model(torch.randn(2, 4)).sum().backward()
    opt_step()


# A new keyword argument: len(kwargs) == 1 fails.
@torch.compile(backend="eager")
def with_kwargs(x, **kwargs):  # RECOMPILE:kwargs
    for value in kwargs.values():
        x = x + value
    return x


x = torch.randn(4)
with_kwargs(x, a=1.0)
with_kwargs(x, a=1.0, b=2.0)


# A float from .item() flows across the break into the resume function.
@torch.compile(backend="eager")
def item_float(x):  # RECOMPILE:item
    s = x.sum().item()  # BREAK:item
    return x * s


item_float(torch.ones(4))
item_float(torch.full((4,), 2.0))


# Two modules with different float attributes: module.k == 2.0 fails (a float, not an int).
class Scale(torch.nn.Module):
    def __init__(self, k: float) -> None:
        super().__init__()
        self.k = k

    def forward(self, x):
        return x * self.k


first, second = Scale(2.0), Scale(3.0)


@torch.compile(backend="eager")
def apply(module, x):  # RECOMPILE:float_attr
    return module(x)


apply(first, x)
apply(second, x)


# Two distinct functions, each defined once: the guard checks the function's identity.
def double(t):
    return t * 2


def triple(t):
    return t * 3


@torch.compile(backend="eager")
def apply_fn(fn, x):  # RECOMPILE:functions
    return fn(x)


apply_fn(double, x)
apply_fn(triple, x)


# An optional keyword argument passed the second time: not ___dict_contains('bias', kwargs).
@torch.compile(backend="eager")
def with_optional(x, **kwargs):  # RECOMPILE:optional
    y = x * kwargs["scale"]
    if "bias" in kwargs:
        y = y + kwargs["bias"]
    return y


with_optional(x, scale=2.0)
with_optional(x, scale=2.0, bias=1.0)


# A keyword argument's sequence length changes: mark_dynamic must name input_ids.
@torch.compile(backend="eager")
def embed(**inputs):  # RECOMPILE:kwarg_size
    return inputs["input_ids"] * 2


embed(input_ids=torch.ones(2, 8))
embed(input_ids=torch.ones(2, 16))
# Five dtypes: each recompile lists every older cache entry's failed guard (4 at the last).
@torch.compile(backend="eager")
def by_dtypes(x):  # RECOMPILE:dtypes
    return x + 1


for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32):
    by_dtypes(torch.ones(4, dtype=dtype))
print("faces_recompiles done", flush=True)
