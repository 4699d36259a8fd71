r"""Masked multi-head attention composed from the textbook's formulas
(`attention_ref.reference.attention`, one function per formula), with a trace of every
intermediate: `masked_multihead_attention` (per-head weights) and
`masked_multihead_attention_fused` (one fused weight split into heads), the same computation.

The formulas hold the mathematics; this module holds their order, the checks of the inputs'
shapes and the trace (`AttentionTrace`) that the tests, ``attnref explain`` and the book read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from attention_ref.reference.attention import (
    FLOAT_DTYPES,
    add_mask,
    attention_dropout,
    causal_mask,
    merge_heads,
    output_projection,
    project,
    project_heads,
    scale,
    scores,
    softmax_rows,
    split_heads,
    unfuse_heads,
    weighted_sum,
)

__all__ = ["AttentionTrace", "masked_multihead_attention", "masked_multihead_attention_fused"]


# --- the composition, with a trace -------------------------------------------------------


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
