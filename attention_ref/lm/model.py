r"""The trainable character-level GPT of Q02/Q03; its attention is the fast path.

Token + learned position embeddings, ``n_layer`` pre-LayerNorm blocks

$$
x \leftarrow x + \operatorname{MultiHead}(\operatorname{LN}_1(x)),\qquad
x \leftarrow x + \operatorname{MLP}(\operatorname{LN}_2(x))
$$

a final LayerNorm and a linear head to the vocabulary. The attention uses fused projections
and ``F.scaled_dot_product_attention(is_causal=True)``; ``tests/`` prove it equal to
`attention_ref.reference.masked_multihead_attention_fused` with the weights copied
(``W = linear.weight.T``).

``attention`` selects the ablation of Q03:

* ``"multihead"``: masked multi-head self-attention (Q02);
* ``"none"``: no attention sub-layer at all, the residual stream passes through, so each
  position sees only its own character and position;
* ``"uniform"``: every position averages the values of the positions up to and including
  itself with equal weights, ``A_{ij} = 1/i`` for ``j <= i`` (positions counted from 1, as in
  the book): context is mixed, but nothing learns where to look (no ``W_Q``, ``W_K``;
  ``W_V`` and ``W_O`` stay).

Generation passes a `KVCache`: each layer keeps the keys and values (uniform: the running sum
of the values) of the positions it has seen, so a new character costs one position's work;
``tests/lm/test_sampling.py`` proves the cached tokens equal to the uncached ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attention_ref.lm.config import AttentionMode, ModelConfig
from attention_ref.reference.spec import ROPE_BASE

__all__ = [
    "MLP",
    "Block",
    "CausalSelfAttention",
    "CharGPT",
    "KVCache",
    "LayerCache",
    "ModelConfig",
    "UniformCausalAttention",
    "count_parameters",
]


@dataclass
class LayerCache:
    """One layer's memory of the ``length`` positions seen so far (generation only).

    Multi-head: keys and values ``(B, h, length, d_k)``; uniform: ``v`` is the running sum of
    the values ``(B, 1, C)``; without attention nothing is kept.
    """

    k: Tensor | None = None
    v: Tensor | None = None
    length: int = 0


@dataclass
class KVCache:
    """Every layer's `LayerCache`; ``length`` is the position of the next token."""

    layers: list[LayerCache] = field(default_factory=list)
    length: int = 0


class CausalSelfAttention(nn.Module):
    r"""Masked multi-head self-attention, fused projections, PyTorch's fused kernel.

    ``qkv`` holds $[W_Q | W_K | W_V]$ as one ``nn.Linear(d, 3d)``; in the reference's row
    convention ``W_Q = qkv.weight.T[:, :d]`` and so on, ``W_O = proj.weight.T``.

    Under bf16 autocast on the CPU the projections run in bf16 but the attention kernel gets
    fp32 ``Q, K, V`` (``cpu_bf16_attention_in_fp32``): in a profile of the Q02 step torch's CPU
    flash-attention kernel was slower in bf16 than in fp32 while the matrix products gained;
    ``benchmarks/throughput.py`` measures the step both ways (its ``attnref-bf16-attention``
    arm), and ``benchmarks/RESULTS.md`` records what it measured.
    """

    #: the CPU bf16 rule above; ``benchmarks/throughput.py`` turns it off to measure it
    cpu_bf16_attention_in_fp32: bool = True

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_head, self.n_kv_head, self.d_k = cfg.n_head, cfg.n_kv_head, cfg.d_k
        self.rope, self.window = cfg.pos == "rope", cfg.window
        # [W_Q | W_K | W_V]: (C, C + 2 g d_k); g = h (the default): (C, 3C), as before
        self.qkv = nn.Linear(cfg.n_embd, cfg.n_embd + 2 * self.n_kv_head * cfg.d_k)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.dropout = cfg.dropout
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(
        self, x: Tensor, cache: LayerCache | None = None, last_only: bool = False
    ) -> Tensor:
        """``x`` ``(B, T, C)``; with ``cache``, the ``T`` new positions see the cached ones too.

        ``last_only`` (generation, no cache): the output of the last position only,
        ``(B, 1, C)``; its query sees every key, so no mask is needed.
        """
        B, T, C = x.size()
        g, d_k = self.n_kv_head, self.d_k
        # (B, T, C + 2 g d_k) -> (B, T, C), 2 × (B, T, g d_k)
        q, k, v = self.qkv(x).split([C, g * d_k, g * d_k], dim=2)
        if last_only:
            q = q[:, -1:]  # (B, T, C) -> (B, 1, C)
        # (B, T, C) -> (B, T, h, d_k) -> (B, h, T, d_k); K, V: g heads, (B, g, T, d_k)
        q = q.view(B, q.size(1), self.n_head, d_k).transpose(1, 2)
        k = k.view(B, T, g, d_k).transpose(1, 2)
        v = v.view(B, T, g, d_k).transpose(1, 2)
        if q.dtype == torch.bfloat16 and x.device.type == "cpu" and self.cpu_bf16_attention_in_fp32:
            q, k, v = q.float(), k.float(), v.float()  # bf16 -> fp32; proj casts back
        past = cache.length if cache is not None else 0
        if self.rope:  # Q and K rotated by their positions past .. past + T - 1
            k = rotate(k, past)
            q = rotate(q, past + T - q.size(2))  # last_only: the last position's query
        if cache is not None:
            if cache.k is not None and cache.v is not None:
                k = torch.cat([cache.k, k], dim=2)  # (B, g, past, d_k) -> (B, g, past + T, d_k)
                v = torch.cat([cache.v, v], dim=2)
            cache.k, cache.v, cache.length = k, v, past + T
        allowed: Tensor | None = None
        if self.window or (past and q.size(2) > 1):  # else PyTorch's own causal mask (or none)
            allowed = visible(past + T - q.size(2), q.size(2), k.size(2), self.window, x.device)
        y = F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=allowed,
            is_causal=allowed is None and past == 0 and not last_only,
            dropout_p=self.dropout if self.training else 0.0,
            enable_gqa=g != self.n_head,
        )  # softmax(Q Kᵀ/√d_k + M) V, head i reading K/V head ⌊i g/h⌋: (B, h, T, d_k)
        T_out = y.size(2)
        y = y.transpose(1, 2).contiguous().view(B, T_out, C)  # (B, h, T, d_k) -> (B, T, C)
        return self.resid_drop(self.proj(y))  # Concat · W_O

    def attention_weights(self, x: Tensor) -> Tensor:
        """The weights ``A`` ``(B, h, T, T)`` of this layer for input ``x`` (for heatmaps)."""
        B, T, C = x.size()
        g, d_k = self.n_kv_head, self.d_k
        q, k, _ = self.qkv(x).split([C, g * d_k, g * d_k], dim=2)
        q = q.view(B, T, self.n_head, d_k).transpose(1, 2)  # (B, h, T, d_k)
        k = k.view(B, T, g, d_k).transpose(1, 2)  # (B, g, T, d_k)
        if self.rope:
            q, k = rotate(q, 0), rotate(k, 0)
        k = k.repeat_interleave(self.n_head // g, dim=1)  # K/V head ⌊i g/h⌋: (B, h, T, d_k)
        S = q @ k.transpose(-2, -1) / d_k**0.5  # (B, h, T, T)
        allowed = visible(0, T, T, self.window, x.device)
        return S.masked_fill(~allowed, float("-inf")).softmax(dim=-1)


def visible(first: int, n_queries: int, n_keys: int, window: int, device: torch.device) -> Tensor:
    r"""Which keys each query sees, ``(n_queries, n_keys)`` booleans: query ``i`` (at position
    ``first + i``) sees key ``j`` when $p - w < j \le p$ with $p$ its position and $w$ the
    window (``0``: no window, $j \le p$: the causal mask)."""
    p = torch.arange(first, first + n_queries, device=device).unsqueeze(1)  # (n_queries, 1)
    j = torch.arange(n_keys, device=device).unsqueeze(0)  # (1, n_keys)
    allowed = j <= p
    return allowed & (j > p - window) if window else allowed


def rotate(x: Tensor, first: int, base: float = ROPE_BASE) -> Tensor:
    r"""RoPE (RoFormer) on ``x`` ``(B, heads, T, d_k)`` at positions ``first .. first + T - 1``:
    each pair $(x_{2i}, x_{2i+1})$ of row $m$ turned by $m\theta_i$, $\theta_i =
    \text{base}^{-2i/d_k}$ (`attention_ref.reference.rope.apply_rope`, tested equal)."""
    T, d_k = x.size(-2), x.size(-1)
    theta = base ** (-2.0 * torch.arange(d_k // 2, device=x.device, dtype=torch.float64) / d_k)
    m = torch.arange(first, first + T, device=x.device, dtype=torch.float64)
    angles = (m.unsqueeze(1) * theta).to(x.dtype)  # (T, d_k/2): m θ_i
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[..., 0::2], x[..., 1::2]  # (B, heads, T, d_k) -> two (B, heads, T, d_k/2)
    # (…, T, d_k/2) twice -> (…, T, d_k/2, 2) -> (…, T, d_k): x'_{2i}, x'_{2i+1}
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


class UniformCausalAttention(nn.Module):
    r"""Causal average of the values: $A_{ij} = 1/i$ for $j \le i$, else 0 ($i, j = 1 \dots T$).

    Position $i$ averages positions $1, \dots, i$: the ones before it *and itself*.

    Keeps ``W_V`` and ``W_O`` (so context is mixed through a learned value map) but has no
    queries or keys: it cannot learn where to look.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.value = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(
        self, x: Tensor, cache: LayerCache | None = None, last_only: bool = False
    ) -> Tensor:
        """``x`` ``(B, T, C)``; with ``cache``, the running sum continues the cached one;
        ``last_only``: the last position's output only, ``(B, 1, C)``."""
        T = x.size(1)
        v = self.value(x)  # (B, T, C)
        past = cache.length if cache is not None else 0
        sums = v.cumsum(dim=1)  # (B, T, C)
        if cache is not None:
            if cache.v is not None:
                sums = sums + cache.v  # (B, T, C) + (B, 1, C)
            cache.v, cache.length = sums[:, -1:], past + T
        # cumulative mean over positions 1..i, itself included (i counted from 1): (B, T, C)
        counts = torch.arange(past + 1, past + T + 1, device=x.device, dtype=v.dtype).view(1, T, 1)
        y = sums / counts
        if last_only:
            y = y[:, -1:]  # (B, T, C) -> (B, 1, C)
        return self.resid_drop(self.proj(y))


class MLP(nn.Module):
    """Position-wise feed-forward: ``Linear(d, 4d) -> GELU -> Linear(4d, d)``."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.drop(self.proj(F.gelu(self.fc(x))))


class Block(nn.Module):
    """Pre-LayerNorm transformer block; without attention only the MLP half remains."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.attn: nn.Module | None
        if cfg.attention is AttentionMode.MULTIHEAD:
            self.attn = CausalSelfAttention(cfg)
        elif cfg.attention is AttentionMode.UNIFORM:
            self.attn = UniformCausalAttention(cfg)
        else:
            self.attn = None
        self.ln_1 = nn.LayerNorm(cfg.n_embd) if self.attn is not None else None
        self.ln_2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(
        self, x: Tensor, cache: LayerCache | None = None, last_only: bool = False
    ) -> Tensor:
        """``x`` ``(B, T, C)`` -> ``(B, T, C)``; ``last_only``: ``(B, 1, C)``, the last
        position's output (the attention still reads every position)."""
        if self.attn is not None and self.ln_1 is not None:
            a = self.attn(self.ln_1(x), cache, last_only)  # MultiHead(LN(x))
            x = (x[:, -1:] if last_only else x) + a  # x + MultiHead(LN(x))
        elif last_only:
            x = x[:, -1:]  # (B, T, C) -> (B, 1, C)
        return x + self.mlp(self.ln_2(x))  # x + MLP(LN(x))


class CharGPT(nn.Module):
    """The character-level language model: embeddings, blocks, LayerNorm, linear head."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        # learned positions (Q02); with RoPE the attention rotates Q and K instead: no table
        self.pos_emb = nn.Embedding(cfg.block_size, cfg.n_embd) if cfg.pos == "learned" else None
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)

    def embed(self, idx: Tensor, start: int) -> Tensor:
        """Token embeddings ``(B, T, C)``, plus the learned positions ``start ..`` (Q02)."""
        x = self.tok_emb(idx)
        if self.pos_emb is None:  # RoPE: positions enter in the attention
            return x
        return x + self.pos_emb(torch.arange(start, start + idx.size(1), device=idx.device))

    def new_cache(self) -> KVCache:
        """An empty `KVCache` for this model (one `LayerCache` per block)."""
        return KVCache([LayerCache() for _ in self.blocks])

    def forward(
        self,
        idx: Tensor,
        targets: Tensor | None = None,
        *,
        cache: KVCache | None = None,
        last_only: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Logits ``(B, T, vocab)`` and, with ``targets``, the mean cross-entropy in nats.

        With ``cache`` (generation), ``idx`` holds the ``T`` positions after the cached ones:
        they get positions ``cache.length ..`` and the cache grows by ``T``. ``last_only``
        (generation on a whole window, no cache, no targets): the logits of the last position
        only, ``(B, 1, vocab)``; the last block computes that position alone (its attention
        still reads every position), the blocks before it compute them all.
        """
        if last_only and (cache is not None or targets is not None):
            raise ValueError("last_only is for a whole window without cache or targets")
        B, T = idx.size()
        start = cache.length if cache is not None else 0
        if self.cfg.block_size < start + T:
            raise ValueError(
                f"sequence of length {start + T} exceeds block_size={self.cfg.block_size}"
            )
        x = self.drop(self.embed(idx, start))  # (B, T, C)
        if cache is None:
            last = len(self.blocks) - 1
            for i, block in enumerate(self.blocks):  # n_layer >= 1 (ModelConfig)
                x = block(x, None, last_only and i == last)
        else:
            for block, layer in zip(self.blocks, cache.layers, strict=True):
                x = block(x, layer)
            cache.length = start + T
        logits = self.head(self.ln_f(x))  # (B, T, vocab); last_only: (B, 1, vocab)
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))
        return logits, loss

    @torch.no_grad()
    def attention_maps(self, idx: Tensor) -> list[Tensor]:
        """Attention weights ``A`` of every layer, ``[(B, h, T, T)] * n_layer`` (multihead only).

        Runs the same forward pass as `forward` and asks each layer's
        `CausalSelfAttention.attention_weights` for ``softmax(Q Kᵀ/√d_k + M)`` on the
        input that layer really sees, ``LN_1(x)``.
        """
        if self.cfg.attention is not AttentionMode.MULTIHEAD:
            raise ValueError(
                f"attention maps need attention='multihead', not {str(self.cfg.attention)!r}"
            )
        x = self.embed(idx, 0)
        maps = []
        for block in self.blocks:
            assert isinstance(block.attn, CausalSelfAttention) and block.ln_1 is not None
            maps.append(block.attn.attention_weights(block.ln_1(x)))
            x = block(x)
        return maps


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
