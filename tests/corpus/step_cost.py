"""A graph break between two heavy compiled regions, and the same program without it.

``forward`` runs two chains of matmuls; between them it calls ``bookkeeping``, which
``torch.compiler.disable`` keeps out of the graph: Dynamo breaks at the call, the function
runs eagerly (forty 256x256 matmuls), and the rest of ``forward`` is a resume
function. ``--without-bookkeeping`` is the fix — the call moved out of the compiled code —
so one graph runs and the step is shorter by about what the break's eager code took.
"""

import sys

import torch

WITHOUT = "--without-bookkeeping" in sys.argv


W = torch.full((256, 256), 1.0 / 256)


@torch.compiler.disable
def bookkeeping(h):
    # Eager on purpose, and far more work than the graphs: what the fix saves then compares
    # with what the break is said to cost even when the two programs ran under different
    # loads (their graphs' time nearly cancels). Few ops, each a real matmul: the profiler
    # adds little to them (a loop of thousands of tiny ops made it 2x and took CI 2 minutes).
    s = h[:1].repeat(256, 2)  # 256x256
    for _ in range(40):
        s = torch.tanh(s @ W)
    return float(s.sum())


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.ModuleList(torch.nn.Linear(128, 128) for _ in range(3))
        self.b = torch.nn.ModuleList(torch.nn.Linear(128, 128) for _ in range(3))
        self.seen = 0.0

    def forward(self, x):
        for layer in self.a:
            x = torch.tanh(layer(x))
        if not WITHOUT:
            self.seen = bookkeeping(x)  # BREAK:bookkeeping
        for layer in self.b:
            x = torch.tanh(layer(x))
        return x.pow(2).mean()


# One thread: Inductor's C++ kernels are OpenMP loops, and two recordings running at once on
# a 2-core machine made the fixed program's graph 30x slower (threads spinning against each
# other): the two programs' steps would not compare.
torch.set_num_threads(1)
torch.manual_seed(0)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=1e-3)
step = torch.compile(net)
x = torch.randn(32, 128)
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 16):
    loss = step(x)
    loss.backward()
    opt.step()
    opt.zero_grad()
print("loss", float(loss))
# --disable-compile hands back the module itself; profiling it must not change that
print("compiled is the module:", step is net)
