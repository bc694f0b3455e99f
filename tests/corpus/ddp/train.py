"""torch.compile(DDP(model)) on two ranks (torchrun, gloo on CPU): DDPOptimizer splits the
captured forward where DDP's gradient buckets end, not where the code breaks a graph.

Five Linear(512, 512) layers hold 1,050,624 bytes of parameters each. With
bucket_cap_mb=2 (and DDP's 1 MB cap for the first bucket it all-reduces, the graph's last
layer) DDPOptimizer cuts the graph into three: layers 0-1, 2-3 and 4.

    torchrun --standalone --nproc-per-node 2 train.py
    torchrun --standalone --nproc-per-node 1 train.py --backend nccl   # one GPU per rank
"""

import argparse
import gc
import os

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
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()
    device = torch.device("cpu")
    if args.backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    dist.init_process_group(args.backend)
    torch.manual_seed(0)
    model = torch.compile(DDP(Net().to(device), bucket_cap_mb=2))
    for _ in range(args.steps):
        model(torch.randn(8, 512, device=device)).sum().backward()
    if dist.get_rank() == 0:
        print("done")
    # DDP's Reducer holds the process group. Freed last at main()'s return, it destroyed the
    # group with the GIL held: ~ProcessGroupGloo joins gloo's worker, which was freeing a
    # just-finished all-reduce and waited for the GIL (torch 2.13, plain runs too, seen
    # under load). Freed here, the group lives on until destroy_process_group(), which
    # destroys it with the GIL released.
    del model
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
