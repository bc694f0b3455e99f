"""Entry point: ``python -m pkg.train``. The compiled step calls metrics.log_loss."""

import torch
import torch.nn.functional as F

from .data import batches
from .metrics import log_loss
from .model import MLP


def main(steps: int = 2) -> None:
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    @torch.compile
    def step(x: torch.Tensor, y: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
        loss = F.mse_loss(model(x), y)
        return log_loss(i, loss)  # CALLS:pkg_log_loss

    for i, (x, y) in enumerate(batches(steps)):
        opt.zero_grad()
        loss = step(x, y, torch.tensor(i))
        loss.backward()
        opt.step()
    print("pkg done", flush=True)


if __name__ == "__main__":
    main()
