"""A long training script (300+ lines) whose graph breaks sit past line 200.

The TUI's source pane must show the marked line's own text for a break this far down,
and selecting a frame of the user stack must mark that frame's line. Markers
(comments at the ends of lines) name the lines tests look up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class Config:
    """Hyper-parameters of the toy model."""

    width: int = 16
    depth: int = 2
    steps: int = 2
    lr: float = 0.05
    seed: int = 0


def schedule_01(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 1 (unused by the compiled code)."""
    warm = max(1, total // 2)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_02(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 2 (unused by the compiled code)."""
    warm = max(1, total // 3)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_03(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 3 (unused by the compiled code)."""
    warm = max(1, total // 4)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_04(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 4 (unused by the compiled code)."""
    warm = max(1, total // 5)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_05(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 5 (unused by the compiled code)."""
    warm = max(1, total // 6)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_06(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 6 (unused by the compiled code)."""
    warm = max(1, total // 7)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_07(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 7 (unused by the compiled code)."""
    warm = max(1, total // 8)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_08(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 8 (unused by the compiled code)."""
    warm = max(1, total // 9)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_09(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 9 (unused by the compiled code)."""
    warm = max(1, total // 10)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_10(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 10 (unused by the compiled code)."""
    warm = max(1, total // 11)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_11(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 11 (unused by the compiled code)."""
    warm = max(1, total // 12)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_12(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 12 (unused by the compiled code)."""
    warm = max(1, total // 13)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_13(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 13 (unused by the compiled code)."""
    warm = max(1, total // 14)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_14(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 14 (unused by the compiled code)."""
    warm = max(1, total // 15)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_15(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 15 (unused by the compiled code)."""
    warm = max(1, total // 16)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_16(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 16 (unused by the compiled code)."""
    warm = max(1, total // 17)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_17(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 17 (unused by the compiled code)."""
    warm = max(1, total // 18)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_18(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 18 (unused by the compiled code)."""
    warm = max(1, total // 19)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_19(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 19 (unused by the compiled code)."""
    warm = max(1, total // 20)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_20(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 20 (unused by the compiled code)."""
    warm = max(1, total // 21)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_21(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 21 (unused by the compiled code)."""
    warm = max(1, total // 22)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_22(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 22 (unused by the compiled code)."""
    warm = max(1, total // 23)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_23(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 23 (unused by the compiled code)."""
    warm = max(1, total // 24)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_24(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 24 (unused by the compiled code)."""
    warm = max(1, total // 25)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_25(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 25 (unused by the compiled code)."""
    warm = max(1, total // 26)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_26(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 26 (unused by the compiled code)."""
    warm = max(1, total // 27)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_27(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 27 (unused by the compiled code)."""
    warm = max(1, total // 28)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_28(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 28 (unused by the compiled code)."""
    warm = max(1, total // 29)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_29(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 29 (unused by the compiled code)."""
    warm = max(1, total // 30)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_30(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 30 (unused by the compiled code)."""
    warm = max(1, total // 31)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_31(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 31 (unused by the compiled code)."""
    warm = max(1, total // 32)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_32(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 32 (unused by the compiled code)."""
    warm = max(1, total // 33)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_33(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 33 (unused by the compiled code)."""
    warm = max(1, total // 34)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_34(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 34 (unused by the compiled code)."""
    warm = max(1, total // 35)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_35(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 35 (unused by the compiled code)."""
    warm = max(1, total // 36)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

def schedule_36(step: int, total: int) -> float:
    """Warm-up then cosine decay, variant 36 (unused by the compiled code)."""
    warm = max(1, total // 37)
    if step < warm:
        return step / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))


def clamp_if_large(y: torch.Tensor) -> torch.Tensor:
    """A helper the compiled block calls: its data-dependent branch breaks the graph."""
    scale = y.abs().mean()
    if scale > 10:  # BREAK:helper_branch
        y = y / scale
    return y


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x).relu()
        y = clamp_if_large(y)  # CALLS:helper
        return x + y


@torch.compile
def report(x: torch.Tensor) -> torch.Tensor:
    y = x.sum(dim=-1)
    print("report", tuple(y.shape))  # BREAK:print
    return y.sin()


def main() -> None:
    cfg = Config()
    torch.manual_seed(cfg.seed)
    block = torch.compile(Block(cfg.width))
    x = torch.randn(4, cfg.width)
    for _ in range(cfg.steps):
        out = block(x)
        report(out)
    print("faces_long done", flush=True)


if __name__ == "__main__":
    main()
