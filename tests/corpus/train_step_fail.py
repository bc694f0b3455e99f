"""A whole training step under ``torch.compile(fullgraph=True)``: zero_grad, forward, loss,
backward, optimizer step. Dynamo refuses to inline ``Optimizer.zero_grad`` ("Attempted to
inline function marked as skipped"); with fullgraph=True that is raised to the program,
which dies with exit 1. The word "skipped" in torch's message must not hide the failure."""

import torch

model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


@torch.compile(fullgraph=True)
def train_step(x, y):
    opt.zero_grad()  # FAIL:zero_grad
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


for _ in range(2):
    print(train_step(torch.randn(8, 4), torch.randn(8, 2)).item())
print("never reached", flush=True)
