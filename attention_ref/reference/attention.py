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

Book page: ``docs/`` "Masked multi-head attention, step by step".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = [
    "AttentionTrace",
    "add_mask",
    "attention_dropout",
    "causal_mask",
    "concat_heads",
    "fuse_heads",
    "masked_multihead_attention",
    "masked_multihead_attention_fused",
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


# --- 4. the composition, with a trace -------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AttentionTrace:
    """Every intermediate of one masked multi-head attention, for tests, explain and the book.

    Per-head tensors are stacked on the head axis: ``Q`` is ``(..., h, n, d_k)`` and so on;
    `head` picks head ``i`` (0-based). The weights are kept as they were used, per head
    whichever view was given (``W_Q`` is ``(h, d_model, d_k)``; `fuse_heads` gives the fused
    one), with the biases ``b_Q``, ``b_K``, ``b_V`` per head (``(h, d)``) or ``None``.
    ``M`` is ``None`` when no mask was applied, and then ``S_masked`` is ``S``. ``A_dropped``
    holds the weights after dropout when dropout was applied (``None`` otherwise); ``H`` is
    always computed from the weights actually used. ``W_O`` is ``None`` when there was no
    output projection: then ``output`` is ``concat`` itself (and ``b_O`` is ``None``).
    """

    tokens: tuple[str, ...]
    X: Tensor
    W_Q: Tensor
    W_K: Tensor
    W_V: Tensor
    b_Q: Tensor | None  # noqa: N815
    b_K: Tensor | None  # noqa: N815
    b_V: Tensor | None  # noqa: N815
    Q: Tensor
    K: Tensor
    V: Tensor
    QKt: Tensor
    S: Tensor
    M: Tensor | None
    S_masked: Tensor
    A: Tensor
    A_dropped: Tensor | None
    H: Tensor
    concat: Tensor
    W_O: Tensor | None
    b_O: Tensor | None  # noqa: N815
    output: Tensor

    @property
    def h(self) -> int:
        """Number of heads."""
        return int(self.Q.shape[-3])

    @property
    def g(self) -> int:
        """Number of K/V heads: every query head has its own, ``g = h`` (grouped-query
        attention, `attention_ref.reference.gqa`, is the case ``g < h``)."""
        return self.h

    @property
    def rope_base(self) -> None:
        """No rotary positions here (`attention_ref.reference.gqa` rotates with RoPE)."""
        return None

    @property
    def d_k(self) -> int:
        """Width of a query/key head."""
        return int(self.Q.shape[-1])

    @property
    def d_v(self) -> int:
        """Width of a value head."""
        return int(self.V.shape[-1])

    @property
    def d_model(self) -> int:
        """Width of a token of ``X``."""
        return int(self.X.shape[-1])

    @property
    def d_out(self) -> int:
        """Width of the output: ``W_O``'s columns, or ``h*d_v`` without ``W_O``."""
        return int(self.output.shape[-1])

    def head(self, i: int) -> dict[str, Tensor]:
        """The intermediates of head ``i`` (0-based): Q, K, V, QKt, S, S_masked, A, H."""
        pick = {
            "Q": self.Q,
            "K": self.K,
            "V": self.V,
            "QKt": self.QKt,
            "S": self.S,
            "S_masked": self.S_masked,
            "A": self.A,
            "H": self.H,
        }
        return {name: t[..., i, :, :] for name, t in pick.items()}


def _check_inputs(X: Tensor, tensors: dict[str, Tensor | None]) -> None:
    """Raise TypeError/ValueError when dtypes or dimensionality are not usable."""
    if X.dtype not in FLOAT_DTYPES:
        raise TypeError(f"X must be float32 or float64, got {X.dtype}")
    if X.dim() < 2:
        raise ValueError(f"X must be (n, d_model) or (B, T, d_model), got shape {tuple(X.shape)}")
    if X.shape[-2] == 0:
        raise ValueError("X has no tokens (n = 0): attention needs at least one token")
    for name, t in tensors.items():
        if t is not None and t.dtype != X.dtype:
            raise TypeError(f"{name} has dtype {t.dtype} but X has {X.dtype}: use one dtype")


def _head_bias(b: Tensor | None, name: str, h: int, d: int) -> Tensor | None:
    """A bias per head ``(h, d)`` or fused ``(h*d,)`` -> ``(h, d)``; ``None`` stays ``None``.

    The fused bias is cut like the fused weight's columns: head ``i`` takes entries
    ``i*d .. (i+1)*d - 1``.
    """
    if b is None:
        return None
    if b.shape == (h, d):
        return b
    if b.shape == (h * d,):
        return b.reshape(h, d)  # (h*d,) -> (h, d)
    raise ValueError(
        f"{name} must be ({h}, {d}) per head or ({h * d},) fused (h={h}, d={d}), "
        f"got {tuple(b.shape)}"
    )


def _attend(
    X: Tensor,
    Q: Tensor,
    K: Tensor,
    V: Tensor,
    *,
    weights: dict[str, Tensor | None],
    causal: bool,
    tokens: Sequence[str] | None,
    dropout_p: float,
    generator: torch.Generator | None,
) -> AttentionTrace:
    """Shared tail of both weight views: from per-head Q, K, V ``(..., h, n, d)`` onwards.

    ``weights`` holds ``W_Q, W_K, W_V`` per head, ``b_Q, b_K, b_V`` per head or ``None``,
    and the checked ``W_O`` (``None``: no projection) and ``b_O``.
    """
    n, d_k = Q.shape[-2], Q.shape[-1]
    QKt = scores(Q, K)  # (..., h, n, d_k) @ (..., h, d_k, n) -> (..., h, n, n)
    S = scale(QKt, d_k)  # S = Q Kᵀ / √d_k
    M = causal_mask(n, dtype=X.dtype).to(X.device) if causal else None
    S_masked = add_mask(S, M) if M is not None else S  # S̃ = S + M
    A = softmax_rows(S_masked)  # A = softmax(S̃), row-wise
    A_used = attention_dropout(A, dropout_p, generator)
    H = weighted_sum(A_used, V)  # H = A V: (..., h, n, d_v)
    concat = merge_heads(H)  # Concat(H¹ | … | Hʰ): (..., h, n, d_v) -> (..., n, h*d_v)
    W_O, b_O = weights["W_O"], weights["b_O"]
    # Concat · W_O + b_O: (..., n, h*d_v) -> (..., n, d_out); no W_O: the output is the concat
    output = output_projection(concat, W_O, b_O) if W_O is not None else concat
    names = tuple(tokens) if tokens is not None else tuple(f"t{i + 1}" for i in range(n))
    if len(names) != n:
        raise ValueError(f"{len(names)} token names given for n={n} rows of X")
    W_Q, W_K, W_V = weights["W_Q"], weights["W_K"], weights["W_V"]
    assert W_Q is not None and W_K is not None and W_V is not None  # always given
    return AttentionTrace(
        tokens=names,
        X=X,
        W_Q=W_Q,
        W_K=W_K,
        W_V=W_V,
        b_Q=weights["b_Q"],
        b_K=weights["b_K"],
        b_V=weights["b_V"],
        Q=Q,
        K=K,
        V=V,
        QKt=QKt,
        S=S,
        M=M,
        S_masked=S_masked,
        A=A,
        A_dropped=A_used if dropout_p > 0 else None,
        H=H,
        concat=concat,
        W_O=W_O,
        b_O=b_O,
        output=output,
    )


def masked_multihead_attention(
    X: Tensor,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    W_O: Tensor | None = None,
    *,
    b_Q: Tensor | None = None,
    b_K: Tensor | None = None,
    b_V: Tensor | None = None,
    b_O: Tensor | None = None,
    causal: bool = True,
    tokens: Sequence[str] | None = None,
    dropout_p: float = 0.0,
    generator: torch.Generator | None = None,
) -> AttentionTrace:
    r"""Masked multi-head attention with per-head matrices (seeds 000 and 003).

    $$
    \operatorname{MultiHead}(X) = \operatorname{Concat}_{i=1}^{h}\Big(
        \operatorname{softmax}\Big(\frac{Q^{(i)} K^{(i)\top}}{\sqrt{d_k}} + M\Big)
        V^{(i)}\Big) W_O + b_O,\qquad Q^{(i)} = X W_Q^{(i)} + b_Q^{(i)}\ \text{(and K, V)}
    $$

    Args:
        X: tokens as rows, ``(n, d_model)`` or ``(B, T, d_model)``, float32 or float64.
        W_Q: ``(h, d_model, d_k)``, the matrices ``W_Q^(i)`` stacked.
        W_K: ``(h, d_model, d_k)``, the matrices ``W_K^(i)`` stacked.
        W_V: ``(h, d_model, d_v)``.
        W_O: ``(h*d_v, d_out)`` with any ``d_out`` (usually ``d_model``; seed 001's code maps
            to ``d_out != d_in``). ``None``: no output projection, the output is the concat
            ``(..., n, h*d_v)`` (rasbt's ``MultiHeadAttentionWrapper``), for any ``h*d_v``.
        b_Q: optional query bias, ``(h, d_k)`` per head or ``(h*d_k,)`` fused
            (``nn.Linear`` style); the documents use none. ``b_K`` likewise.
        b_K: optional key bias, ``(h, d_k)`` or ``(h*d_k,)``.
        b_V: optional value bias, ``(h, d_v)`` or ``(h*d_v,)``.
        b_O: optional output bias ``(d_out,)``; needs ``W_O``.
        causal: add the causal mask ``M`` (default); ``False`` gives plain self-attention.
        tokens: optional names of the ``n`` tokens, kept in the trace.
        dropout_p: dropout on the attention weights (seed 001); 0 in explain.
        generator: RNG for the dropout.

    Returns:
        The `AttentionTrace` with every intermediate; ``.output`` is the result.
    """
    _check_inputs(X, {"W_Q": W_Q, "W_K": W_K, "W_V": W_V, "b_Q": b_Q, "b_K": b_K, "b_V": b_V})
    d_model = X.shape[-1]
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.dim() != 3 or W.shape[1] != d_model:
            raise ValueError(
                f"{name} must be (h, d_model={d_model}, d), got shape {tuple(W.shape)}"
            )
    if W_Q.shape != W_K.shape:
        raise ValueError(
            f"W_Q {tuple(W_Q.shape)} and W_K {tuple(W_K.shape)} must have the same shape"
        )
    if W_V.shape[0] != W_Q.shape[0]:
        raise ValueError(f"W_V has {W_V.shape[0]} heads but W_Q has {W_Q.shape[0]}")
    h, d_k, d_v = W_Q.shape[0], W_Q.shape[-1], W_V.shape[-1]
    b_Q = _head_bias(b_Q, "b_Q", h, d_k)
    b_K = _head_bias(b_K, "b_K", h, d_k)
    b_V = _head_bias(b_V, "b_V", h, d_v)
    W_O, b_O = _output_weight(W_O, b_O, h * d_v, X)
    # Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ + b_Q⁽ⁱ⁾: (..., n, d_model) -> (..., h, n, d_k)
    Q = project_heads(X, W_Q, b_Q)
    K = project_heads(X, W_K, b_K)  # K⁽ⁱ⁾ = X W_K⁽ⁱ⁾ + b_K⁽ⁱ⁾
    V = project_heads(X, W_V, b_V)  # V⁽ⁱ⁾ = X W_V⁽ⁱ⁾ + b_V⁽ⁱ⁾
    weights = {
        "W_Q": W_Q,
        "W_K": W_K,
        "W_V": W_V,
        "b_Q": b_Q,
        "b_K": b_K,
        "b_V": b_V,
        "W_O": W_O,
        "b_O": b_O,
    }
    return _attend(
        X,
        Q,
        K,
        V,
        weights=weights,
        causal=causal,
        tokens=tokens,
        dropout_p=dropout_p,
        generator=generator,
    )


def masked_multihead_attention_fused(
    X: Tensor,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    W_O: Tensor | None = None,
    *,
    h: int,
    b_Q: Tensor | None = None,
    b_K: Tensor | None = None,
    b_V: Tensor | None = None,
    b_O: Tensor | None = None,
    causal: bool = True,
    tokens: Sequence[str] | None = None,
    dropout_p: float = 0.0,
    generator: torch.Generator | None = None,
) -> AttentionTrace:
    r"""The same computation with one fused projection per role (seeds 001 and 002).

    $Q = X W_Q + b_Q$ with $W_Q \in \mathbb{R}^{d_{model} \times h d_k}$ and
    $b_Q \in \mathbb{R}^{h d_k}$ (an ``nn.Linear``: ``W_Q = W_query.weight.T``), then
    `split_heads` gives ``(…, h, n, d_k)``; the rest is shared with
    `masked_multihead_attention` (same ``W_O``, ``b_O``; ``W_O = None``: no projection).
    Head ``i`` uses columns ``i*d_k .. (i+1)*d_k - 1`` of ``W_Q`` and entries
    ``i*d_k .. (i+1)*d_k - 1`` of ``b_Q``, which are exactly ``W_Q^(i)`` and ``b_Q^(i)`` of the
    per-head view (`fuse_heads`). Biases may also be given per head, ``(h, d_k)``.
    """
    _check_inputs(X, {"W_Q": W_Q, "W_K": W_K, "W_V": W_V, "b_Q": b_Q, "b_K": b_K, "b_V": b_V})
    d_model = X.shape[-1]
    if h < 1:
        raise ValueError(f"the number of heads must be at least 1, got h={h}")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.dim() != 2 or W.shape[0] != d_model:
            raise ValueError(f"{name} must be (d_model={d_model}, h*d), got {tuple(W.shape)}")
        if W.shape[1] % h != 0:
            raise ValueError(f"{name} width {W.shape[1]} is not divisible by h={h} heads")
    if W_Q.shape != W_K.shape:
        raise ValueError(f"W_Q {tuple(W_Q.shape)} and W_K {tuple(W_K.shape)} must match")
    d_k, d_v = W_Q.shape[1] // h, W_V.shape[1] // h
    b_Q = _head_bias(b_Q, "b_Q", h, d_k)
    b_K = _head_bias(b_K, "b_K", h, d_k)
    b_V = _head_bias(b_V, "b_V", h, d_v)
    W_O, b_O = _output_weight(W_O, b_O, W_V.shape[1], X)

    def fused_bias(b: Tensor | None) -> Tensor | None:
        return None if b is None else b.reshape(-1)  # (h, d) -> (h*d,): the fused layout

    # (..., n, d_model) -> (..., n, h*d_k) -> (..., h, n, d_k)
    Q = split_heads(project(X, W_Q, fused_bias(b_Q)), h)  # Q = X W_Q + b_Q, split
    K = split_heads(project(X, W_K, fused_bias(b_K)), h)
    V = split_heads(project(X, W_V, fused_bias(b_V)), h)  # (..., n, h*d_v) -> (..., h, n, d_v)
    weights = {
        "W_Q": unfuse_heads(W_Q, h),
        "W_K": unfuse_heads(W_K, h),
        "W_V": unfuse_heads(W_V, h),
        "b_Q": b_Q,
        "b_K": b_K,
        "b_V": b_V,
        "W_O": W_O,
        "b_O": b_O,
    }
    return _attend(
        X,
        Q,
        K,
        V,
        weights=weights,
        causal=causal,
        tokens=tokens,
        dropout_p=dropout_p,
        generator=generator,
    )


def _output_weight(
    W_O: Tensor | None, b_O: Tensor | None, rows: int, X: Tensor
) -> tuple[Tensor | None, Tensor | None]:
    """``W_O`` checked against ``(h*d_v, d_out)`` and ``b_O`` against ``(d_out,)``.

    ``W_O = None`` stays ``None`` (no output projection, any ``h*d_v``); a ``b_O`` without
    ``W_O`` is refused, since it is the bias of that projection.
    """
    if W_O is None:
        if b_O is not None:
            raise ValueError(
                "b_O is the bias of the output projection, but W_O is None (no projection): "
                "give W_O too, or no b_O"
            )
        return None, None
    if W_O.dtype != X.dtype:
        raise TypeError(f"W_O has dtype {W_O.dtype} but X has {X.dtype}: use one dtype")
    if W_O.dim() != 2 or W_O.shape[0] != rows:
        raise ValueError(
            f"W_O must be (h*d_v, d_out) with h*d_v = {rows} and any d_out, got {tuple(W_O.shape)}"
        )
    if b_O is not None:
        if b_O.dtype != X.dtype:
            raise TypeError(f"b_O has dtype {b_O.dtype} but X has {X.dtype}: use one dtype")
        if b_O.shape != (W_O.shape[1],):
            raise ValueError(
                f"b_O must be (d_out,) = ({W_O.shape[1]},), the width of W_O, "
                f"got {tuple(b_O.shape)}"
            )
    return W_O, b_O
