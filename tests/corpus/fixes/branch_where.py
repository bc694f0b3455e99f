"""A data-dependent ``if`` on a tensor's mean breaks the graph. The fix: the same choice
as ``torch.where`` (both branches computed, the same values)."""

import torch


@torch.compile
def clip(x):
    h = x.relu()
    if h.mean() > 0.5:  # BREAK:branch
        h = h * 0.5
    else:
        h = h + 0.25
    return h.sin()


torch.manual_seed(0)
for scale in (0.1, 2.0, 0.3):
    print("out", [round(v, 4) for v in clip(torch.rand(6) * scale).tolist()], flush=True)
