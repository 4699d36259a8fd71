"""The baseline: nanoGPT's character GPT trained the way its ``train.py`` does on a CPU.

The model is nanoGPT's own (``benchmarks/nanogpt/model.py``, vendored unmodified: `make_model`);
the loop is ``train.py``'s, which runs as a script and cannot be imported, written out here:
fp32 (nanoGPT uses no autocast on a CPU), plain AdamW (no fused kernel: nanoGPT asks for it on
CUDA only), no ``torch.compile``, random windows of the training split each step, warm-up +
cosine learning rate, gradient clipping 1.0. Its usual recipe (``RECIPE``) is nanoGPT's
``shakespeare_char`` one (lr 1e-3 → 1e-4, warm-up 100, dropout 0.2, weight decay 0.1, β₂ 0.99),
here at the homework's shape (n_embd 128, 2 layers, 2 heads, block 128, batch 32): the same
shape as attnref's defaults, so the two compare. The batches come from attnref's data loading
(the same split, vocabulary and batches), so the loop runs in the benchmark's own process
beside attnref's arms (interleaved with them in ``throughput.py`` and ``gpu_step.py``, one
after the other in ``time_to_quality.py``); nanoGPT's ``train.py`` itself is run by
``benchmarks/nanogpt_arm.py``. Used by ``benchmarks/throughput.py``,
``benchmarks/time_to_quality.py`` and ``benchmarks/gpu_step.py``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from types import ModuleType

import torch
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
#: karpathy/nanoGPT, vendored unmodified
NANOGPT = Path(__file__).resolve().parent / "nanogpt"


def _nanogpt_model() -> ModuleType:
    """nanoGPT's ``model.py`` as vendored unmodified in ``benchmarks/nanogpt`` (loaded by its
    path: its own name, ``model``, would be any folder's)."""
    spec = importlib.util.spec_from_file_location("nanogpt_model", NANOGPT / "model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would (its dataclass looks itself up there)
    spec.loader.exec_module(module)
    return module


NANOGPT_MODEL = _nanogpt_model()


def make_model(cfg: BaselineConfig) -> nn.Module:
    """nanoGPT's ``GPT`` at ``cfg``'s shape: its ``c_attn``/``c_proj`` fused projections and
    ``F.scaled_dot_product_attention``, LayerNorm with bias, GELU MLP, the output head tied to
    the token embedding, N(0, 0.02) init (residual projections scaled by 1/√(2·n_layer)). Its
    line "number of parameters" is not printed."""
    # every field of nanoGPT's GPTConfig (the shape, dropout, bias) is one of ``cfg``'s
    shape = NANOGPT_MODEL.GPTConfig(
        **{f.name: getattr(cfg, f.name) for f in fields(NANOGPT_MODEL.GPTConfig)}
    )
    with contextlib.redirect_stdout(io.StringIO()):
        return NANOGPT_MODEL.GPT(shape)


def make_optimizer(model: nn.Module, cfg: BaselineConfig) -> torch.optim.AdamW:
    """nanoGPT's ``configure_optimizers`` on a CPU: decay on matrices, plain AdamW (on a GPU
    too, where nanoGPT asks for the fused kernel: the baseline keeps one recipe everywhere)."""
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
def mean_loss(model: nn.Module, batches: list[tuple[Tensor, Tensor]]) -> float:
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
    on_step: Callable[[int, nn.Module], bool | None] | None = None,
) -> nn.Module:
    """nanoGPT's loop for ``steps`` steps; ``on_step(step, model)`` after each (True: stop)."""
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    model = make_model(cfg).to(device)
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
