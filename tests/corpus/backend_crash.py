"""A backend crash: Inductor fails on a graph Dynamo captured (torch 2.13 on CPU: a
``torch._higher_order_ops.map`` over rows with an extra tensor argument raises
``InductorError: DataDependentOutputException``). torch raises it to the caller, which
catches it and goes on; a later call of another function compiles fine. On a torch where
the map compiles, the program still runs the same way (the comparison is with that torch's
own account either way)."""

import torch
from torch._higher_order_ops.map import map as hop_map


def body(row, bias):
    return row.sin() + bias


@torch.compile
def mapped(xs, bias):  # FAIL:backend
    return hop_map(body, xs, bias)


@torch.compile
def fine(x):
    return x.cos() * 2


try:
    print("mapped", round(mapped(torch.ones(3, 4), torch.ones(4)).sum().item(), 3), flush=True)
except Exception as exc:  # noqa: BLE001 - the backend's error reaches the program
    print("compile crashed:", type(exc).__name__, flush=True)
print("fine", round(fine(torch.ones(4)).sum().item(), 3), flush=True)
