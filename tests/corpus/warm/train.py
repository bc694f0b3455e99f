"""Recorded twice with one TORCHINDUCTOR_CACHE_DIR: first from a copy of this folder in
another directory, then from here. The second run's kernels come from the warm FX graph
cache, whose provenance names the other copy's files."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)

for _ in range(2):
    loss = compiled(torch.randn(4, 8)).sum()  # KERNELS:warm
    loss.backward()
    opt.step()
    opt.zero_grad()
print("warm done", flush=True)
