"""Synthetic regression batches."""

import torch


def batches(steps: int, batch: int = 8, dim: int = 8, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x = torch.randn(batch, dim, generator=g)
        yield x, x.sum(dim=1, keepdim=True)
