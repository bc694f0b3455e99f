"""FSDP2 (``fully_shard``) with torch.compile on two ranks (torchrun, gloo on CPU), as
PyTorch's FSDP2 docs compile it: each block sharded and compiled on its own, the root
sharded last. FSDP2's hooks run eagerly (Dynamo skips them), so each block's forward is
its own compiled frame; the blocks share one code object, and the first block's input
does not require grad while the later blocks' do: every rank recompiles the block once.

    torchrun --standalone --nproc-per-node 2 train.py
"""

import gc

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(64, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # RECOMPILE:requires_grad
        return torch.relu(self.fc(x)) + x


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block() for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


def main() -> None:
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = Net()
    for block in model.blocks:
        fully_shard(block)
        block.compile()
    fully_shard(model)
    for _ in range(2):
        model(torch.randn(8, 64)).sum().backward()
    if dist.get_rank() == 0:
        print("done")
    del model  # before the process group goes: tests/corpus/ddp/train.py says why
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
