"""A script beside its own engine.py / lsp.py / tui.py, as many training repos keep."""

import engine
import lsp
import torch
import tui

assert engine.OWNER == lsp.OWNER == tui.OWNER == "user", "a module of dyn-inspect shadowed the user's"


@torch.compile
def step(x):
    return x * 2 + 1


step(torch.ones(4))
print("shadow ok", engine.__file__)
