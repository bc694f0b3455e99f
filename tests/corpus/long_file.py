"""A realistic 300+ line training script: config, data, a small model, a training loop and
an evaluation pass that is compiled and breaks the graph three times past line 200.

The graph breaks sit in ``evaluate`` (a print, a data-dependent branch and a
``Tensor.item()``), each marked with a BREAK comment naming it. The model's forward is
compiled without breaks (one forward and one backward graph). Shapes are tiny so that
Inductor's C++ compiles stay cheap.

    python long_file.py [--steps 4] [--eval-every 2]
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F


# --------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------


@dataclass
class ModelConfig:
    """Sizes of the model: kept tiny, the point is the shape of the program."""

    vocab: int = 32
    dim: int = 16
    hidden: int = 32
    classes: int = 4
    dropout: float = 0.0


@dataclass
class TrainConfig:
    """Optimisation settings."""

    steps: int = 4
    batch: int = 8
    seq: int = 6
    lr: float = 1e-2
    weight_decay: float = 0.0
    eval_every: int = 2
    seed: int = 0
    log_every: int = 1
    history: list[float] = field(default_factory=list)


def parse_args() -> TrainConfig:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--eval-every", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args()
    return TrainConfig(steps=args.steps, eval_every=args.eval_every, lr=args.lr)


# --------------------------------------------------------------------------------------
# Data: a synthetic classification task (the class is a function of the tokens)
# --------------------------------------------------------------------------------------


class SyntheticTokens:
    """Batches of random token ids whose label is the sum of the ids modulo `classes`."""

    def __init__(self, cfg: ModelConfig, train: TrainConfig, generator: torch.Generator) -> None:
        self.cfg = cfg
        self.train = train
        self.generator = generator

    def batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        tokens = torch.randint(
            0,
            self.cfg.vocab,
            (self.train.batch, self.train.seq),
            generator=self.generator,
        )
        labels = tokens.sum(dim=1) % self.cfg.classes
        return tokens, labels

    def __iter__(self):
        while True:
            yield self.batch()


def make_data(cfg: ModelConfig, train: TrainConfig) -> SyntheticTokens:
    generator = torch.Generator().manual_seed(train.seed)
    return SyntheticTokens(cfg, train, generator)


# --------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------


class FeedForward(nn.Module):
    """A two-layer MLP with a GELU, as in a transformer block."""

    def __init__(self, dim: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.down(F.gelu(self.up(x))))


class MeanPool(nn.Module):
    """Averages over the sequence dimension."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1)


class TinyClassifier(nn.Module):
    """Embedding -> layer norm -> feed-forward (residual) -> pool -> linear head."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.dim)
        self.norm = nn.LayerNorm(cfg.dim)
        self.ff = FeedForward(cfg.dim, cfg.hidden, cfg.dropout)
        self.pool = MeanPool()
        self.head = nn.Linear(cfg.dim, cfg.classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.embed(tokens)
        h = h + self.ff(self.norm(h))
        return self.head(self.pool(h))

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def init_weights(module: nn.Module) -> None:
    """Small normal init, zero biases (what many reference scripts do)."""
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, std=0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, std=0.02)


# --------------------------------------------------------------------------------------
# Schedules and bookkeeping
# --------------------------------------------------------------------------------------


def cosine_lr(step: int, total: int, base: float, warmup: int = 1) -> float:
    if step < warmup:
        return base * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * base * (1 + math.cos(math.pi * progress))


class Meter:
    """A running average, printed by the training loop."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.total = 0.0
        self.count = 0

    def update(self, value: float, n: int = 1) -> None:
        self.total += value * n
        self.count += n

    @property
    def avg(self) -> float:
        return self.total / max(1, self.count)

    def __str__(self) -> str:
        return f"{self.name} {self.avg:.4f}"


class Timer:
    """Wall time of a block, for the step log."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.elapsed = time.perf_counter() - self.start


def accuracy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return (logits.argmax(dim=-1) == labels).float().mean()


# --------------------------------------------------------------------------------------
# Evaluation: compiled, and written the way people write it (prints, branches, .item())
# --------------------------------------------------------------------------------------


@torch.compile
def evaluate(model: nn.Module, tokens: torch.Tensor, labels: torch.Tensor) -> dict[str, float]:
    with torch.no_grad():
        logits = model(tokens)
        loss = F.cross_entropy(logits, labels)
        print("eval batch", tokens.shape[0])  # BREAK:long_print
        acc = accuracy(logits, labels)
        if acc > 0.5:  # BREAK:long_branch
            quality = loss * 0.5
        else:
            quality = loss * 2.0
        value = quality.item()  # BREAK:long_item
        return {"loss": value, "acc": acc}


# --------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------


def make_optimizer(model: nn.Module, train: TrainConfig) -> torch.optim.Optimizer:
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (no_decay if name.endswith("bias") or "norm" in name else decay).append(param)
    groups = [
        {"params": decay, "weight_decay": train.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.SGD(groups, lr=train.lr)


def train_step(
    model: nn.Module,
    compiled: nn.Module,
    optimizer: torch.optim.Optimizer,
    tokens: torch.Tensor,
    labels: torch.Tensor,
) -> float:
    optimizer.zero_grad(set_to_none=True)
    logits = compiled(tokens)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return float(loss.detach())


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr


def run_training(cfg: ModelConfig, train: TrainConfig) -> list[dict[str, float]]:
    torch.manual_seed(train.seed)
    model = TinyClassifier(cfg)
    model.apply(init_weights)
    compiled = torch.compile(model)
    optimizer = make_optimizer(model, train)
    data = iter(make_data(cfg, train))
    loss_meter = Meter("loss")
    results: list[dict[str, float]] = []
    for step in range(train.steps):
        set_lr(optimizer, cosine_lr(step, train.steps, train.lr))
        tokens, labels = next(data)
        with Timer() as timer:
            loss = train_step(model, compiled, optimizer, tokens, labels)
        loss_meter.update(loss, tokens.shape[0])
        train.history.append(loss)
        if step % train.log_every == 0:
            print(f"step {step} {loss_meter} ({timer.elapsed * 1000:.0f} ms)", flush=True)
        if (step + 1) % train.eval_every == 0:
            model.eval()
            eval_tokens, eval_labels = next(data)
            results.append(evaluate(model, eval_tokens, eval_labels))
            model.train()
    return results


def report(results: list[dict[str, float]], train: TrainConfig) -> None:
    for i, r in enumerate(results):
        print(f"eval {i}: loss {r['loss']:.4f} acc {float(r['acc']):.3f}")
    if train.history:
        print(f"final train loss {train.history[-1]:.4f}")


def checkpoint(model: nn.Module, optimizer: torch.optim.Optimizer, step: int) -> dict[str, object]:
    """What a real script would torch.save(); kept in memory here."""
    return {
        "step": step,
        "model": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "optimizer": optimizer.state_dict(),
    }


def main() -> None:
    train = parse_args()
    cfg = ModelConfig()
    results = run_training(cfg, train)
    report(results, train)
    print(f"parameters: {TinyClassifier(cfg).num_parameters()}")


if __name__ == "__main__":
    main()
