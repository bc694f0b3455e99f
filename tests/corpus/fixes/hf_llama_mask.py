"""A tiny random-init Llama trained on batches of changing sequence length, with an
attention mask: the second length recompiles, on input_ids and attention_mask both."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
config = LlamaConfig(num_hidden_layers=1, hidden_size=32, intermediate_size=64, num_attention_heads=2, num_key_value_heads=2, vocab_size=64, max_position_embeddings=64)
model = LlamaForCausalLM(config)
model.train()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)

for seq in (8, 12, 16):
    input_ids = torch.randint(0, config.vocab_size, (2, seq))
    attention_mask = torch.ones(2, seq, dtype=torch.long)
    out = compiled(input_ids=input_ids, attention_mask=attention_mask, labels=input_ids)  # FIX:hf_call
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    print("loss", round(float(out.loss.detach()), 4), flush=True)
