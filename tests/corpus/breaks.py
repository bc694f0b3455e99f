"""Known graph breaks at known lines (markers `# BREAK:<name>` name the lines)."""

import torch

from corpus_helpers import noisy_scale


@torch.compile
def branchy(x):
    y = x.relu()
    if y.sum() > 0:  # BREAK:branch
        y = y + 1
    return y.sin()


@torch.compile
def chatty(x):
    y = x.cos()
    print("chatty")  # BREAK:print
    return y + 1


@torch.compile
def unsupported(x):
    y = x * 3
    z = torch.ones(1).tolist()  # BREAK:builtin
    return y + z[0]


@torch.compile
def with_helper(x):
    y = x.exp()
    y = noisy_scale(y)  # CALLS:helper
    return y - 1


@torch.compile
def explicit(x):
    y = x.tanh()
    torch._dynamo.graph_break()  # BREAK:explicit
    return y * y


x = torch.randn(16, 8)
for _ in range(2):
    branchy(x)
    chatty(x)
    unsupported(x)
    with_helper(x)
    explicit(x)
