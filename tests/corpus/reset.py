"""``torch._dynamo.reset()`` between the compiles of two different functions, with the
recompile limit lowered at run time (3) and hit, and two graph breaks on one line of one
function: both resume functions are named ``torch_dynamo_resume_in_chatty_at_<line>``."""

import torch

torch._dynamo.config.recompile_limit = 3


@torch.compile
def warm(x):  # RECOMPILE:reset_warm
    return x.sin() + 1


warm(torch.randn(4))
warm(torch.randn(4, dtype=torch.float64))

torch._dynamo.reset()


@torch.compile
def chatty(x):
    y = x.cos()
    print("a"); y = y + 1; print("b")  # BREAK:reset_two
    return y * 2


@torch.compile
def limited(x):  # RECOMPILE:reset_limit
    return x - 1


chatty(torch.randn(4))
for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    limited(torch.ones(4, dtype=dtype))
print("reset done", flush=True)
