"""CPU benchmark workload: a small CNN training step under torch.compile."""

from __future__ import annotations

import torch
from _timing import classifier_step, run_steps, workload_parser
from torch import nn


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1, stride=2),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
        )
        self.head = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.body(x)
        return self.head(h.mean(dim=(2, 3)))


def main() -> None:
    parser = workload_parser(device="cpu", steps=20, warmup=3)
    args = parser.parse_args()
    model = ConvNet().to(args.device)
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(16, 3, 32, 32, device=args.device)
    y = torch.randint(0, 10, (16,), device=args.device)
    run_steps(classifier_step(compiled, opt, x, y), args.device, args.steps, args.warmup, "convnet")


if __name__ == "__main__":
    main()
