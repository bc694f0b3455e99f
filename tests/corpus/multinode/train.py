"""Four ranks on two torchrun agents ("nodes"), one of which compiles differently.

Global rank 3 (node 1's second worker) prints inside the compiled step: a graph break no
other rank hits, which the divergence report must name. Tiny on purpose: four processes
compile at once on a 2-core CI machine.

    torchrun --nnodes 2 --node-rank 0 --nproc-per-node 2 --rdzv-backend c10d \
        --rdzv-endpoint localhost:29511 --rdzv-id job1 train.py    # and --node-rank 1
"""

import torch
import torch.distributed as dist


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    lin = torch.nn.Linear(4, 4)

    @torch.compile
    def step(x: torch.Tensor) -> torch.Tensor:
        y = lin(x)
        if rank == 3:
            print("rank 3 takes the other branch")  # BREAK:rank3_print
        return torch.relu(y).sum()

    with torch.no_grad():
        for _ in range(2):
            total = step(torch.randn(2, 4)).reshape(1)
            dist.all_reduce(total)  # every rank must reach it
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
