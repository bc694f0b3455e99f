"""CPU workload for ``dyn-inspect cost``: a tiny random-init Hugging Face GPT-2 (2 layers,
width 64; from a config, nothing downloaded) trained for ``--steps`` steps at one sequence
length under torch.compile — transformers' own graph break (a logging call) included."""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--seq", type=int, default=64)
    args = parser.parse_args()
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=64, n_head=4, n_positions=128, vocab_size=512)
    model = GPT2LMHeadModel(config)
    model.train()
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    input_ids = torch.randint(0, config.vocab_size, (4, args.seq))
    for _ in range(args.steps):
        out = compiled(input_ids=input_ids, labels=input_ids)
        out.loss.backward()
        opt.step()
        opt.zero_grad()
    print("loss", float(out.loss.detach()))


if __name__ == "__main__":
    main()
