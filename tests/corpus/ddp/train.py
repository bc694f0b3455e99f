"""torch.compile(DDP(model)) on two ranks (torchrun, gloo on CPU): DDPOptimizer splits the
captured forward where DDP's gradient buckets end, not where the code breaks a graph.

Five Linear(512, 512) layers hold 1,050,624 bytes of parameters each. With
bucket_cap_mb=2 (and DDP's 1 MB cap for the first bucket it all-reduces, the graph's last
layer) DDPOptimizer cuts the graph into three: layers 0-1, 2-3 and 4.

    torchrun --standalone --nproc-per-node 2 train.py
"""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(512, 512) for _ in range(5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))  # SPLIT:bucket
        return x


def main() -> None:
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.compile(DDP(Net(), bucket_cap_mb=2))
    for _ in range(2):
        model(torch.randn(8, 512)).sum().backward()
    if dist.get_rank() == 0:
        print("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
