"""Two ranks that compile different things (run under torchrun, gloo on CPU or NCCL on GPUs).

Rank 1 takes a branch with a print() inside the compiled step (a graph break rank 0 never
hits), and on the second step it feeds a different batch size (a recompile only rank 1
does): the divergence report must name rank 1 for both. The all_reduce outside the
compiled function keeps the ranks in lock-step like a real training loop.

    torchrun --standalone --nproc-per-node 2 train.py                  # gloo, CPU
    torchrun --standalone --nproc-per-node 2 train.py --backend nccl   # one GPU per rank
"""

import argparse
import os

import torch
import torch.distributed as dist


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--fail-rank", type=int, default=None, help="this rank raises after the first step")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if args.backend == "nccl":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group(args.backend)
    rank = dist.get_rank()

    @torch.compile
    def step(x: torch.Tensor) -> torch.Tensor:
        y = torch.sin(x) * 2
        if rank == 1:
            print(f"rank {rank} takes the other branch")  # BREAK:rank1_print
            y = y + 1
        return torch.relu(y).sum(dim=1)

    for i in range(args.steps):
        batch = 8 if (rank == 0 or i == 0) else 16  # RECOMPILE:rank1_batch
        out = step(torch.randn(batch, 4, device=device))
        total = out.sum().reshape(1)
        dist.all_reduce(total)  # the collective every rank must reach
        if rank == args.fail_rank:
            raise RuntimeError(f"rank {rank} fails on purpose")  # the others hang until torchrun stops them
    if rank == 0:
        print(f"done: {total.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
