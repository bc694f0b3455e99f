"""Recorded twice with one TORCHINDUCTOR_CACHE_DIR: first from a copy of this folder in
another directory, then from here. The second run's kernels come from the warm FX graph
cache, whose provenance names the other copy's files (the model is defined here, so its
graph nodes carry this file's lines)."""

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc1(x))  # KERNELS:warm_gelu
        return self.fc2(h * 2.0 + 1.0)  # KERNELS:warm


torch.manual_seed(0)
model = Block()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)

for _ in range(2):
    loss = compiled(torch.randn(4, 8)).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
print("warm done", flush=True)
