"""The baseline: a character GPT trained the way the field's reference trainers do it.

nanoGPT-style (karpathy/nanoGPT ``model.py`` + ``train.py``, as its ``shakespeare_char`` config
runs on a CPU): ``c_attn``/``c_proj`` fused projections and ``F.scaled_dot_product_attention``,
LayerNorm with bias, GELU MLP, the output head tied to the token embedding, N(0, 0.02) init
(residual projections scaled by 1/√(2·n_layer)); fp32 (nanoGPT uses no autocast on a CPU),
plain AdamW (no fused kernel: nanoGPT asks for it on CUDA only), no ``torch.compile``, random
windows of the training split each step, warm-up + cosine learning rate, gradient clipping 1.0.

Its usual recipe (``RECIPE``) is nanoGPT's ``shakespeare_char`` one (lr 1e-3 → 1e-4, warm-up 100,
dropout 0.2, weight decay 0.1, β₂ 0.99), here at the homework's shape (n_embd 128, 2 layers,
2 heads, block 128, batch 32): the same shape as attnref's defaults, so the two compare.

Only torch and attnref's data loading are needed (the same split, vocabulary and batches).
Used by ``benchmarks/throughput.py`` and ``benchmarks/time_to_quality.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attention_ref.lm.data import get_batch


@dataclass(frozen=True)
class BaselineConfig:
    """Shape and recipe; the defaults are the Q02 shape with nanoGPT's shakespeare_char recipe."""

    vocab_size: int = 65
    block_size: int = 128
    n_embd: int = 128
    n_layer: int = 2
    n_head: int = 2
    batch_size: int = 32
    dropout: float = 0.2
    bias: bool = True
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup_steps: int = 100
    max_steps: int = 5000  # lr_decay_iters
    weight_decay: float = 0.1
    beta2: float = 0.99
    grad_clip: float = 1.0
    seed: int = 1337


RECIPE = BaselineConfig()


class SelfAttention(nn.Module):
    """nanoGPT's ``CausalSelfAttention`` (the flash path)."""

    def __init__(self, cfg: BaselineConfig) -> None:
        super().__init__()
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.resid_dropout = nn.Dropout(cfg.dropout)
        self.n_head, self.dropout = cfg.n_head, cfg.dropout

    def forward(self, x: Tensor) -> Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        # (B, T, C) -> (B, h, T, d_k)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True
        )
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, h, T, d_k) -> (B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, cfg: BaselineConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, cfg: BaselineConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = SelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = MLP(cfg)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """nanoGPT's ``GPT``: wte, wpe, dropout, blocks, ln_f, lm_head tied to wte."""

    def __init__(self, cfg: BaselineConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        _, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


def make_optimizer(model: GPT, cfg: BaselineConfig) -> torch.optim.AdamW:
    """nanoGPT's ``configure_optimizers`` on a CPU: decay on matrices, plain AdamW."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, cfg.beta2))


def lr_at(step: int, cfg: BaselineConfig) -> float:
    """nanoGPT's ``get_lr``: linear warm-up, cosine to ``min_lr`` at ``max_steps``, then flat."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / (cfg.warmup_steps + 1)
    if step > cfg.max_steps:
        return cfg.min_lr
    ratio = (step - cfg.warmup_steps) / (cfg.max_steps - cfg.warmup_steps)
    return cfg.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (cfg.lr - cfg.min_lr)


@torch.no_grad()
def mean_loss(model: GPT, batches: list[tuple[Tensor, Tensor]]) -> float:
    """Mean cross-entropy over ``batches`` in eval mode (nanoGPT's ``estimate_loss``)."""
    model.eval()
    losses = torch.stack([model(x, y)[1] for x, y in batches])  # type: ignore[misc]
    model.train()
    return float(losses.mean())


def train(
    cfg: BaselineConfig,
    train_split: Tensor,
    steps: int,
    device: torch.device,
    *,
    on_step: Callable[[int, GPT], bool | None] | None = None,
) -> GPT:
    """nanoGPT's loop for ``steps`` steps; ``on_step(step, model)`` after each (True: stop)."""
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    model = GPT(cfg).to(device)
    optimizer = make_optimizer(model, cfg)
    model.train()
    for step in range(steps):
        lr = lr_at(step, cfg)
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y = get_batch(train_split, cfg.batch_size, cfg.block_size, gen)
        x, y = x.to(device), y.to(device)
        _, loss = model(x, y)
        assert loss is not None
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if on_step is not None and on_step(step + 1, model):
            break
    return model
