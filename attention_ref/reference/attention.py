r"""The textbook: masked multi-head attention, one small pure function per formula.

The functions follow seed 000 (the MAE5911 homework) in its order, with the row-vector
convention of the documents (a token is a row of ``X``):

$$
Q^{(i)} = X W_Q^{(i)} + b_Q^{(i)},\quad K^{(i)} = X W_K^{(i)} + b_K^{(i)},\quad
V^{(i)} = X W_V^{(i)} + b_V^{(i)}
$$

$$
S^{(i)} = \frac{Q^{(i)} K^{(i)\top}}{\sqrt{d_k}},\qquad
\tilde S^{(i)} = S^{(i)} + M,\qquad
A^{(i)} = \operatorname{softmax}_{\text{row}}(\tilde S^{(i)}),\qquad
H^{(i)} = A^{(i)} V^{(i)}
$$

$$
\operatorname{MultiHead}(X) = \operatorname{Concat}(H^{(1)} | \dots | H^{(h)})\, W_O + b_O
$$

The documents use no biases; they are optional (``None``), as ``nn.Linear(..., bias=...)``
has them (rasbt's ``MultiHeadAttention`` gives ``out_proj`` a bias). ``W_O`` is
``(h*d_v, d_out)`` with any ``d_out`` (seed 000: it may reduce the dimension; seed 001's code
maps to ``d_out = 2``); ``W_O = None`` means no output projection at all: the output is the
concat (rasbt's ``MultiHeadAttentionWrapper``).

Two views of the weights are supported and are the same computation:

* per-head matrices ``W_Q^{(i)} in R^{d_model x d_k}`` (seeds 000 and 003), stacked here as a
  tensor of shape ``(h, d_model, d_k)``;
* one fused ``W_Q in R^{d_model x h*d_k}`` whose columns are split into heads (seeds 001 and
  002): ``Q = X W_Q`` then `split_heads`.

Every function works on a single sequence ``(n, d_model)`` and on a batch
``(B, T, d_model)``; leading dimensions broadcast. Nothing here has side effects, caches or
globals: the functions take tensors and return new tensors.

The composition of these formulas into one masked multi-head attention, with its trace, is
`attention_ref.reference.multihead`.

Book page: ``docs/`` "Masked multi-head attention, step by step".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = [
    "add_mask",
    "attention_dropout",
    "causal_mask",
    "concat_heads",
    "fuse_heads",
    "merge_heads",
    "output_projection",
    "project",
    "project_heads",
    "scale",
    "scores",
    "softmax_rows",
    "split_heads",
    "unfuse_heads",
    "weighted_sum",
]

FLOAT_DTYPES = (torch.float32, torch.float64)


# --- 1. projections -------------------------------------------------------------------------


def project(X: Tensor, W: Tensor, b: Tensor | None = None) -> Tensor:
    r"""Linear projection of the tokens, row convention: $Q = X W_Q + b_Q$.

    ``X``: ``(..., n, d_model)``; ``W``: ``(d_model, d_out)``; ``b``: ``(d_out,)`` or ``None``
    (no bias, as in the documents); returns ``(..., n, d_out)``. The bias is added to every
    row (token). The same function gives ``K = X W_K + b_K`` and ``V = X W_V + b_V``. Where a
    ``torch.nn.Linear`` holds the weight, ``W = linear.weight.T`` and ``b = linear.bias``.
    """
    Y = X @ W
    return Y if b is None else Y + b


def project_heads(X: Tensor, W_heads: Tensor, b_heads: Tensor | None = None) -> Tensor:
    r"""Per-head projections $Q^{(i)} = X W_Q^{(i)} + b_Q^{(i)}$ for all heads at once.

    ``X``: ``(..., n, d_model)``; ``W_heads``: ``(h, d_model, d_k)`` (the h matrices
    ``W_Q^(1..h)`` stacked); ``b_heads``: ``(h, d_k)`` (the h biases stacked) or ``None``;
    returns ``(..., h, n, d_k)``.
    """
    # (..., n, d_model) -> (..., 1, n, d_model), broadcast against (h, d_model, d_k)
    Y = project(X.unsqueeze(-3), W_heads)
    # b: (h, d_k) -> (h, 1, d_k), one bias row per head, added to every token
    return Y if b_heads is None else Y + b_heads.unsqueeze(-2)


def split_heads(Y: Tensor, h: int) -> Tensor:
    r"""Split a fused projection into ``h`` heads by reshape + transpose (seed 002).

    The token "Пиццу" ``[13, 14, 15, 16, 17, 18]`` with ``h = 3`` becomes
    ``[[13, 14], [15, 16], [17, 18]]``: head ``i`` takes columns ``i*d_k .. (i+1)*d_k - 1``.

    ``Y``: ``(..., T, h*d_k)``, a fused projection such as ``Q = X W_Q`` (its width is
    ``d_model`` when ``d_k = d_model / h``, as in seed 002, but any multiple of ``h`` works);
    returns ``(..., h, T, d_k)``.
    """
    *lead, T, width = Y.shape
    if width % h != 0:
        raise ValueError(f"width {width} is not divisible by h={h} heads")
    d_k = width // h
    Y = Y.reshape(*lead, T, h, d_k)  # (..., T, h*d_k) -> (..., T, h, d_k)
    return Y.transpose(-3, -2)  # (..., T, h, d_k) -> (..., h, T, d_k)


def merge_heads(H: Tensor) -> Tensor:
    r"""Inverse of `split_heads`: transpose back, then reshape (seed 002).

    ``H``: ``(..., h, T, d_v)``; returns ``(..., T, h*d_v)``, which is
    $\operatorname{Concat}(H^{(1)} | \dots | H^{(h)})$.
    """
    *lead, h, T, d_v = H.shape
    H = H.transpose(-3, -2)  # (..., h, T, d_v) -> (..., T, h, d_v)
    return H.reshape(*lead, T, h * d_v)  # (..., T, h, d_v) -> (..., T, h*d_v)


def fuse_heads(W_heads: Tensor) -> Tensor:
    r"""Per-head matrices ``(h, d_model, d_k)`` -> one fused ``(d_model, h*d_k)``.

    $W_Q = [\,W_Q^{(1)} | \dots | W_Q^{(h)}\,]$: the heads side by side as column blocks.
    """
    h, d_model, d_k = W_heads.shape
    # (h, d_model, d_k) -> (d_model, h, d_k) -> (d_model, h*d_k)
    return W_heads.permute(1, 0, 2).reshape(d_model, h * d_k)


def unfuse_heads(W: Tensor, h: int) -> Tensor:
    r"""Inverse of `fuse_heads`: ``(d_model, h*d_k)`` -> ``(h, d_model, d_k)``."""
    d_model, width = W.shape
    if width % h != 0:
        raise ValueError(f"a fused weight of width {width} cannot be split into h={h} heads")
    d_k = width // h
    # (d_model, h*d_k) -> (d_model, h, d_k) -> (h, d_model, d_k)
    return W.reshape(d_model, h, d_k).permute(1, 0, 2)


# --- 2. scores, scaling, mask, softmax ------------------------------------------------------


def scores(Q: Tensor, K: Tensor) -> Tensor:
    r"""Raw attention scores $Q K^\top$, entry ``(i, j) = q_i · k_j``.

    ``Q``: ``(..., n, d_k)``; ``K``: ``(..., n, d_k)``; returns ``(..., n, n)``.
    """
    return Q @ K.transpose(-2, -1)  # K: (..., n, d_k) -> (..., d_k, n)


def scale(QKt: Tensor, d_k: int) -> Tensor:
    r"""Scaled scores $S = \frac{Q K^\top}{\sqrt{d_k}}$.

    Without the scale the variance of $q \cdot k$ grows like ``d_k`` and the softmax
    saturates.
    """
    return QKt / math.sqrt(d_k)


def causal_mask(n: int, dtype: torch.dtype = torch.float64) -> Tensor:
    r"""The additive causal mask $M \in \mathbb{R}^{n \times n}$.

    $M_{ij} = 0$ for $j \le i$ (the token itself and its predecessors) and
    $M_{ij} = -\infty$ for $j > i$ (the future). For $n = 3$:

    $$
    M = \begin{bmatrix} 0 & -\infty & -\infty \\ 0 & 0 & -\infty \\ 0 & 0 & 0 \end{bmatrix}
    $$
    """
    blocked = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)  # True above the diagonal
    return torch.zeros(n, n, dtype=dtype).masked_fill(blocked, float("-inf"))


def add_mask(S: Tensor, M: Tensor) -> Tensor:
    r"""Masked scores $\tilde S = S + M$ (``M`` broadcasts over heads and batch)."""
    return S + M


def softmax_rows(S_masked: Tensor) -> Tensor:
    r"""Row-wise softmax $A_{ij} = e^{\tilde s_{ij}} / \sum_{l} e^{\tilde s_{il}}$.

    Computed as $e^{\tilde s_{ij} - m_i} / \sum_l e^{\tilde s_{il} - m_i}$ with
    $m_i = \max_l \tilde s_{il}$ (the same value, without overflow). A masked entry
    $-\infty$ gives $e^{-\infty} = 0$ exactly, so the first causal row is
    ``(1, 0, …, 0)``.
    """
    m = S_masked.amax(dim=-1, keepdim=True)  # (..., n, n) -> (..., n, 1)
    e = torch.exp(S_masked - m)
    return e / e.sum(dim=-1, keepdim=True)


def attention_dropout(A: Tensor, p: float, generator: torch.Generator | None = None) -> Tensor:
    r"""Dropout on the attention weights (seed 001), inverted scaling.

    Each weight is kept with probability ``1 - p`` and rescaled by ``1 / (1 - p)``, so the
    expected value of every weight is unchanged; dropped weights become 0, and a row no longer
    sums to exactly 1. ``p = 0`` returns ``A`` itself (what ``explain`` and evaluation use).
    """
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout probability must be in [0, 1), got {p}")
    if p == 0.0:
        return A
    keep = torch.rand(A.shape, generator=generator, dtype=A.dtype, device=A.device) >= p
    return A * keep / (1.0 - p)


# --- 3. weighted sum, concat, output projection ----------------------------------------------


def weighted_sum(A: Tensor, V: Tensor) -> Tensor:
    r"""Head output $H = A V$, i.e. $h_i = \sum_j A_{ij} v_j$.

    ``A``: ``(..., n, n)``; ``V``: ``(..., n, d_v)``; returns ``(..., n, d_v)``.
    """
    return A @ V


def concat_heads(heads: Sequence[Tensor]) -> Tensor:
    r"""$\operatorname{Concat}(H^{(1)} | \dots | H^{(h)})$ along the feature axis.

    ``h`` tensors ``(..., n, d_v)`` -> ``(..., n, h*d_v)``. Equal to `merge_heads` on the
    stacked heads.
    """
    return torch.cat(list(heads), dim=-1)


def output_projection(concat: Tensor, W_O: Tensor, b_O: Tensor | None = None) -> Tensor:
    r"""Output $\operatorname{Concat}(\dots)\, W_O + b_O$ (the bias only if given).

    ``concat``: ``(..., n, h*d_v)``; ``W_O``: ``(h*d_v, d_out)``; ``b_O``: ``(d_out,)`` or
    ``None``; returns ``(..., n, d_out)``. ``d_out`` is usually ``d_model`` but may be any
    width. Where an ``nn.Linear`` holds it, ``W_O = out_proj.weight.T``, ``b_O = out_proj.bias``.
    """
    out = concat @ W_O
    return out if b_O is None else out + b_O
