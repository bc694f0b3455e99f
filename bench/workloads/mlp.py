"""CPU benchmark workload: a small MLP training step under torch.compile."""

from __future__ import annotations

import argparse

import torch
from _timing import run_steps
from torch import nn


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--width", type=int, default=512)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(256, args.width),
        nn.GELU(),
        nn.LayerNorm(args.width),
        nn.Linear(args.width, args.width),
        nn.GELU(),
        nn.LayerNorm(args.width),
        nn.Linear(args.width, 10),
    ).to(args.device)
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(64, 256, device=args.device)
    y = torch.randint(0, 10, (64,), device=args.device)

    def step(_: int) -> None:
        loss = nn.functional.cross_entropy(compiled(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    run_steps(step, args.device, args.steps, args.warmup, "mlp")


if __name__ == "__main__":
    main()
