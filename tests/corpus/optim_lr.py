"""An optimizer step under torch.compile with a float lr that changes (Dynamo guards on
``param_groups[0]['lr'] == 0.01``: a recompile), then a compiled function called with a
new keyword argument (a ``len(kwargs)`` guard: another recompile)."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile
def opt_step():  # RECOMPILE:lr
    opt.step()


x = torch.randn(8, 4)
for lr in (0.01, 0.02):
    for group in opt.param_groups:
        group["lr"] = lr
    model(x).sum().backward()
    opt_step()
    opt.zero_grad()


@torch.compile
def scaled(x, **kwargs):  # RECOMPILE:kwargs
    y = x * kwargs["scale"]
    if "bias" in kwargs:
        y = y + kwargs["bias"]
    return y


s = torch.tensor(2.0)
scaled(x, scale=s)
scaled(x, scale=s, bias=torch.tensor(1.0))
print("optim_lr done", flush=True)
