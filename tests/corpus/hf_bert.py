"""A tiny random-init Hugging Face BERT classifier (from a config: nothing downloaded),
compiled for inference on two sequence lengths: the second length recompiles."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from transformers import BertConfig, BertForSequenceClassification

torch.manual_seed(0)
config = BertConfig(
    vocab_size=64,
    hidden_size=32,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=64,
    max_position_embeddings=32,
    num_labels=3,
)
model = BertForSequenceClassification(config).eval()
compiled = torch.compile(model)

with torch.no_grad():
    for seq in (8, 12, 16):  # RECOMPILE:bert_seq
        input_ids = torch.randint(0, config.vocab_size, (2, seq))
        attention_mask = torch.ones_like(input_ids)
        logits = compiled(input_ids=input_ids, attention_mask=attention_mask).logits
print("bert logits", tuple(logits.shape), flush=True)
