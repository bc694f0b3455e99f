"""Recorded twice with one TORCHINDUCTOR_CACHE_DIR: first from a copy of this folder in
another directory, then from here. The second run's kernels come from the warm FX graph
cache, whose provenance names the other copy's files (the model is defined here, so its
graph nodes carry this file's lines). On that warm cache too (issue 28): ``rows`` goes
dynamic on its row count (its shape guards and the sizes it accepts, from a dynamic graph
the cache holds), and ``strict`` fails to compile under ``fullgraph=True`` (caught)."""

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


@torch.compile
def rows(x):  # SHAPES:warm_rows
    return (x * 2).sum(0) + x.shape[0]


@torch.compile(fullgraph=True)
def strict(x):
    print("not allowed under fullgraph")  # FAIL:warm_strict
    return x + 1


for n in (5, 7, 9):
    print(rows(torch.ones(n, 3)).tolist(), flush=True)
try:
    strict(torch.ones(2))
except Exception as exc:  # noqa: BLE001 - the failure is the point; the program goes on
    print("strict failed:", type(exc).__name__, flush=True)
print("warm done", flush=True)
