"""CPU benchmark workload: a small MLP training step under torch.compile."""

from __future__ import annotations

import torch
from _timing import classifier_step, run_steps, workload_parser
from torch import nn


def main() -> None:
    parser = workload_parser(device="cpu", steps=30, warmup=3)
    parser.add_argument("--width", type=int, default=512)
    args = parser.parse_args()
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
    run_steps(classifier_step(compiled, opt, x, y), args.device, args.steps, args.warmup, "mlp")


if __name__ == "__main__":
    main()
