"""A compiled function calls ``torch.sin`` with one argument too many: torch breaks the
graph with GB0112 ("TypeError when making fake tensor call") and puts the call's actual
error only in its debug context; eager then raises the same TypeError, caught here."""

import torch


@torch.compile
def wrong_call(x):
    y = x * 2
    return torch.sin(y, 1)  # BREAK:type_error


try:
    wrong_call(torch.randn(4))
except TypeError as exc:
    print("eager raised:", exc, flush=True)
