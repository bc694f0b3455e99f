"""A training step whose forward compiles, then the program fails before backward: the
backward graph is never compiled (its kernels must still map to source lines)."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
compiled = torch.compile(model)

x = torch.randn(4, 8)
loss = compiled(x).pow(2).mean()  # FORWARD:ffail
raise RuntimeError("data loader died before backward")  # RAISE:ffail
