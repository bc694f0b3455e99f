"""Recorded twice with one Inductor cache, first from a copy of this folder elsewhere (like
warm/): in the second (warm) run ``cached`` hits the FX graph and AOTAutograd caches,
``bypassed`` has a function AOTAutograd cannot cache (``allow_in_graph``: torch bypasses
its cache and says why), and ``only_here`` — compiled by this checkout only — misses."""

import torch

IN_COPY = "other-checkout" in __file__


@torch.compile
def cached(x):  # CACHE:hit
    return (x.sin() * 2).sum()


def opaque(x):
    return x * 3


torch._dynamo.allow_in_graph(opaque)


@torch.compile
def bypassed(x):  # CACHE:bypass
    return opaque(x.cos()) + 1


@torch.compile
def only_here(x):  # CACHE:miss
    return x.tan() - 2


for _ in range(2):
    x = torch.randn(8)
    cached(x)
    bypassed(x)
    if not IN_COPY:
        only_here(x)
print("cache done", flush=True)
