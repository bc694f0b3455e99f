"""The situations of PyTorch's "Common Graph Breaks" and "Dealing with Recompilations"
programming-model pages, one after the other as a reader pastes the page's cells into one
file (issue 28: the docs' pages as they are). Written here, not copied: the same kinds of
code, the same torch settings, and, as on the pages, several functions named ``fn`` and
``gn`` in one file, torch's logging set by the program itself and a reset half-way.
"""

import torch

torch._logging.set_logs(graph_breaks=True, recompiles=True)

# -- "Common Graph Breaks" ------------------------------------------------------------------


# An error in the user's own code: eager raises it too.
@torch.compile
def fn(x):
    return torch.cos(x, x)  # BREAK:docs_incorrect


try:
    fn(torch.ones(2, 2))
except TypeError:
    print("incorrect code raised in eager too", flush=True)


# Data-dependent control flow and a tensor read as a Python number.
@torch.compile
def fn(x):
    total = x.mean()
    if total > 0:  # BREAK:docs_data_dependent
        return x * total.item()
    return x / total.item()


print(fn(torch.ones(2, 2)).sum().item(), flush=True)

# A branch on a global tensor, then the same branch taken on a Python bool made outside.
weights = torch.full((2, 2), 0.5)


@torch.compile
def fn(y):
    if weights.sum() > 0:  # BREAK:docs_global_branch
        return y * weights
    return y - weights


print(fn(torch.ones(2, 2)).sum().item(), flush=True)
positive = bool((weights.sum() > 0).item())


@torch.compile
def fn(y):
    if positive:
        return y * weights
    return y - weights


print(fn(torch.ones(2, 2)).sum().item(), flush=True)


# torch.cond instead of an if on a tensor: no break.
@torch.compile
def fn(x):
    return torch.cond(x.mean() > 0, lambda t: t * 2, lambda t: t / 2, (x,))


print(fn(torch.ones(2, 2)).sum().item(), flush=True)

# print moved to the end of the traced function: no break.
torch._dynamo.config.reorderable_logging_functions.add(print)


@torch.compile
def fn(x):
    x = x * 3
    print("logged from a compiled function")
    return torch.tanh(x)


print(fn(torch.ones(2, 2)).sum().item(), flush=True)

# -- "Dealing with Recompilations" ----------------------------------------------------------


# A new length: one recompile, then dynamic.
@torch.compile
def fn(x):  # RECOMPILE:docs_shape
    return x * 2


fn(torch.ones(5))
fn(torch.ones(6))


# dynamic=True from the start: no recompile.
@torch.compile(dynamic=True)
def gn(x):
    return x * 2


gn(torch.ones(5))
gn(torch.ones(6))


# A float argument is a constant guarded on its value: a recompile per value.
@torch.compile
def fn(x, scale):  # RECOMPILE:docs_float
    return x * scale


for i in range(1, 4):
    fn(torch.ones(i), 0.25 * i)

# An optimizer step whose learning rate is a float changed by its scheduler.
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, 0.5)


@torch.compile
def gn(batch):  # RECOMPILE:docs_lr
    optimizer.zero_grad(True)
    model(batch).sum().backward()
    optimizer.step()
    scheduler.step()


for _ in range(3):
    gn(torch.ones(2, 2))

torch._dynamo.reset()

# The same two, with the numbers held in tensors: no recompile for them.
for i in range(1, 4):
    fn(torch.ones(i), torch.tensor(0.25 * i))
optimizer = torch.optim.SGD(model.parameters(), lr=torch.tensor(0.05))
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, torch.tensor(0.5))
for _ in range(3):
    gn(torch.ones(2, 2))


# dynamic=False: a recompile per length until the limit (8 by default), then eager.
@torch.compile(dynamic=False)
def fn(x):  # RECOMPILE:docs_limit
    return x - 1


for n in range(1, 11):
    fn(torch.ones(n))


# A deliberate graph break keeps the expensive part out of the recompiles.
def expensive(x):
    return torch.sin(x) + 1


@torch.compile
def gn(x, k):
    y = expensive(x)
    torch._dynamo.graph_break()  # BREAK:docs_deliberate
    return y + k  # RECOMPILE:docs_int


for k in range(1, 3):
    gn(torch.ones(3), k)
print("docs pages done", flush=True)
