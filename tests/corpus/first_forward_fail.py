"""A training step whose forward compiles, then the program fails before backward: the
backward graph is never compiled (its kernels must still map to source lines).

Two compiled models: the user's own module (its kernels' lines come from the graph's
source comments: Inductor writes provenance only once the backward compiled) and an
``nn.Sequential`` (traced inside torch, no user stack at all: the calling line)."""

import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 16)

    def forward(self, x):
        h = torch.relu(self.proj(x))  # KERNEL:ffail_relu
        return (h * h.sigmoid()).sum(-1)  # KERNEL:ffail_gate


torch.manual_seed(0)
head = torch.compile(Head())
mlp = torch.compile(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))

x = torch.randn(4, 8)
loss = head(x).pow(2).mean()  # FORWARD:ffail
loss = loss + mlp(x).pow(2).mean()  # FORWARD:ffail_mlp
raise RuntimeError("data loader died before backward")  # RAISE:ffail
