"""A helper in another file: the graph break happens here, inside an inlined call."""

import torch


def noisy_scale(x: torch.Tensor) -> torch.Tensor:
    print("scaling", tuple(x.shape))  # BREAK:helper_print
    return x * 2
