"""A step that compiling cannot speed up: three chained 256x256 matmuls and nothing between
them to fuse, so Inductor's graph calls the same ATen matmul eager runs (``extern_kernels.mm``)
and the compiled step is the eager step plus a guard check. ``cost`` must not call it faster
or slower: its compiled-against-eager ratio's interval holds 1.0, or it says "within noise".

``--threads N`` sets torch's intra-op threads (default: torch's own choice)."""

import sys

import torch

if "--threads" in sys.argv:
    torch.set_num_threads(int(sys.argv[sys.argv.index("--threads") + 1]))
torch.manual_seed(0)
W = torch.randn(256, 256) / 16


def chain(x):
    return ((x @ W) @ W) @ W


step = torch.compile(chain)
x = torch.randn(256, 256)
with torch.no_grad():
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 40):
        y = step(x)
print("sum", float(y.sum()))
