"""Compiles one function, then ``sys.exit(3)``: an exit status, not a crash."""

import sys

import torch


@torch.compile
def before_exit(x):
    return x.tanh() * 3


before_exit(torch.randn(4))
print("exiting with 3", flush=True)
sys.exit(3)  # EXIT:3
