"""A tiny random-init Hugging Face GPT-2 (from a config: nothing is downloaded), compiled,
trained for a few steps on growing sequence lengths with an attention mask (transformers
relates the mask's length to the input's): the second length recompiles dynamic, the third
reuses it."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=1, n_embd=32, n_head=2, n_positions=32, vocab_size=64)
model = GPT2LMHeadModel(config)
model.train()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)

for seq in (8, 12, 16):  # RECOMPILE:gpt2_seq
    input_ids = torch.randint(0, config.vocab_size, (2, seq))
    attention_mask = torch.ones_like(input_ids)
    attention_mask[0, : seq // 4] = 0  # left padding on the first row
    out = compiled(input_ids=input_ids, attention_mask=attention_mask, labels=input_ids)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
print("gpt2 loss", float(out.loss.detach()), flush=True)
