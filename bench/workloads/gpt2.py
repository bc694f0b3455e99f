"""GPU benchmark workload: HF transformers GPT-2 small (random init from its config, no
download), one bf16-autocast training step per call; ``--seq-lens 128,256`` adds steps at
a second length afterwards, which recompiles (the recompile the recorded run shows)."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from _timing import run_steps, workload_parser
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    parser = workload_parser(device="cuda", steps=20, warmup=3)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq-lens", default="256", help="comma-separated; steps after the first length recompile")
    parser.add_argument("--extra-steps", type=int, default=3, help="steps at each further length")
    args = parser.parse_args()
    lens = [int(s) for s in args.seq_lens.split(",")]
    model = GPT2LMHeadModel(GPT2Config()).to(args.device)
    model.train()
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    vocab = model.config.vocab_size

    def make_step(seq: int):
        ids = torch.randint(0, vocab, (args.batch, seq), device=args.device)

        def step(_: int) -> None:
            with torch.autocast(device_type=args.device.split(":")[0], dtype=torch.bfloat16):
                loss = compiled(input_ids=ids, labels=ids).loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        return step

    run_steps(make_step(lens[0]), args.device, args.steps, args.warmup, "gpt2", batch=args.batch, seq=lens[0])
    for seq in lens[1:]:
        step = make_step(seq)
        for i in range(args.extra_steps):
            step(i)
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
