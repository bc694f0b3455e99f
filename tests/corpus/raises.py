"""Compiles one function, then raises: the run must record the exception and exit 1."""

import torch


@torch.compile
def fine(x):
    return x.cos() * 2


fine(torch.randn(4))
raise RuntimeError("boom after compiling")  # RAISE:here
