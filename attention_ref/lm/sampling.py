"""Sampling characters from the model: temperature and top-k, one character at a time."""

from __future__ import annotations

import torch
from torch import Tensor

from attention_ref.lm.model import CharGPT


@torch.no_grad()
def generate(
    model: CharGPT,
    idx: Tensor,
    new_tokens: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    r"""Sample ``new_tokens`` characters after ``idx`` ``(1, T)``; returns ``(1, T + new)``.

    At each step $p = \operatorname{softmax}(z_T / \tau)$ over the last position's logits
    $z_T$, restricted to the ``top_k`` largest when given.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    was_training = model.training
    model.eval()
    for _ in range(new_tokens):
        ctx = idx[:, -model.cfg.block_size :]
        logits, _ = model(ctx)
        logits = logits[:, -1, :] / temperature  # (1, vocab)
        if top_k is not None:
            kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        probs = torch.softmax(logits, dim=-1)
        nxt = torch.multinomial(probs.cpu(), 1, generator=generator).to(idx.device)
        idx = torch.cat([idx, nxt], dim=1)
    model.train(was_training)
    return idx
