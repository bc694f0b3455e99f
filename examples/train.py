"""A small training loop with the usual torch.compile trouble, for `dyn-inspect` to show.

- a data-dependent branch (graph break),
- a print() (graph break),
- a break inside a helper in another file (model_utils.log_stats, inlined),
- batch sizes that change between steps (recompiles).

Run it:  dyn-inspect examples/train.py      (or --no-tui for a printed summary)
"""

import argparse

import torch
from torch import nn

from model_utils import log_stats


class TinyMLP(nn.Module):
    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, width)
        self.fc2 = nn.Linear(width, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        if h.mean() > 0.5:  # data-dependent branch: graph break
            h = h * 0.5
        h = log_stats(h)  # the helper prints: graph break in another file
        print("forward done")  # print(): graph break
        return self.fc2(h)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, ...")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = TinyMLP().to(args.device)
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batch_sizes = [16, 32, 48]  # a new batch size recompiles (then goes dynamic)
    for step in range(args.steps):
        bs = batch_sizes[step % len(batch_sizes)]
        x, y = torch.randn(bs, 32, device=args.device), torch.randint(0, 10, (bs,), device=args.device)
        loss = nn.functional.cross_entropy(compiled(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} batch {bs} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
