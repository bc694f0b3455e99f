"""GPU benchmark workload: torchvision ResNet-50 (random init) training step, fp32 (cuDNN
may use TF32, torch's default), SGD with momentum."""

from __future__ import annotations

import torch
import torchvision
from _timing import classifier_step, run_steps, workload_parser


def main() -> None:
    parser = workload_parser(device="cuda", steps=20, warmup=3)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    model = torchvision.models.resnet50(weights=None).to(args.device)
    model.train()
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(args.batch, 3, 224, 224, device=args.device)
    y = torch.randint(0, 1000, (args.batch,), device=args.device)
    run_steps(classifier_step(compiled, opt, x, y), args.device, args.steps, args.warmup, "resnet50", batch=args.batch)


if __name__ == "__main__":
    main()
