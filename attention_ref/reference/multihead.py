r"""Masked multi-head attention composed from the textbook's formulas
(`attention_ref.reference.attention`, one function per formula), with a trace of every
intermediate: one composition for every attention here, from (``h`` query heads, ``g`` K/V
heads, the mask, the positions, the biases, ``W_O``).

$$
\operatorname{MultiHead}(X) = \operatorname{Concat}_{i=1}^{h}\Big(\operatorname{softmax}\Big(
\frac{\rho(Q^{(i)})\,\rho(K^{(\gamma(i))})^\top}{\sqrt{d_k}} + M^{(i)}\Big) V^{(\gamma(i))}\Big)
W_O + b_O
$$

The homework's masked multi-head attention is the case ``g = h`` ($\gamma(i) = i$), no
rotation ($\rho$ the identity) and the causal mask; grouped- and multi-query attention
(`attention_ref.reference.gqa`) have ``g < h``; RoPE (`attention_ref.reference.rope`) is
$\rho$; a sliding window or ALiBi (`attention_ref.reference.windows`) is the mask ``M``.
`masked_multihead_attention` takes per-head weights, `masked_multihead_attention_fused` one
fused weight per role split into heads; both run the same tail and return the one
`attention_ref.reference.trace.AttentionTrace`.

The formulas hold the mathematics; this module holds their order and the checks of the
inputs' shapes. Its backward is `attention_ref.reference.backward.attention_backward`.
"""

from __future__ import annotations

from collections.abc import Sequence

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
from attention_ref.reference.gqa import repeat_kv
from attention_ref.reference.rope import apply_rope
from attention_ref.reference.trace import AttentionTrace

__all__ = ["masked_multihead_attention", "masked_multihead_attention_fused"]


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


def _head_bias(b: Tensor | None, name: str, heads: int, d: int) -> Tensor | None:
    """A bias per head ``(heads, d)`` or fused ``(heads*d,)`` -> ``(heads, d)``; ``None`` stays.

    The fused bias is cut like the fused weight's columns: head ``i`` takes entries
    ``i*d .. (i+1)*d - 1``.
    """
    if b is None:
        return None
    if b.shape == (heads, d):
        return b
    if b.shape == (heads * d,):
        return b.reshape(heads, d)  # (heads*d,) -> (heads, d)
    raise ValueError(
        f"{name} must be ({heads}, {d}) per head or ({heads * d},) fused "
        f"(heads={heads}, d={d}), got {tuple(b.shape)}"
    )


def _check_mask(M: Tensor, X: Tensor, h: int) -> None:
    """``M`` is ``(n, n)`` or per query head ``(h, n, n)``, in ``X``'s dtype."""
    n = X.shape[-2]
    if M.dtype != X.dtype:
        raise TypeError(f"M has dtype {M.dtype} but X has {X.dtype}: use one dtype")
    if tuple(M.shape) not in ((n, n), (h, n, n)):
        raise ValueError(f"M must be (n, n) = ({n}, {n}) or ({h}, {n}, {n}), got {tuple(M.shape)}")


def _attend(
    X: Tensor,
    Q: Tensor,
    K: Tensor,
    V: Tensor,
    *,
    weights: dict[str, Tensor | None],
    causal: bool,
    M: Tensor | None,
    rope_base: float | None,
    positions: Tensor | None,
    tokens: Sequence[str] | None,
    dropout_p: float,
    generator: torch.Generator | None,
) -> AttentionTrace:
    """The one tail of every view: from Q ``(..., h, n, d_k)`` and K, V ``(..., g, n, d)`` on.

    ``weights`` holds ``W_Q, W_K, W_V`` per head, ``b_Q, b_K, b_V`` per head or ``None``,
    and the checked ``W_O`` (``None``: no projection) and ``b_O``.
    """
    n, h, d_k = Q.shape[-2], Q.shape[-3], Q.shape[-1]
    pos = torch.arange(n, dtype=X.dtype) if positions is None else positions.to(X.dtype)
    if pos.shape != (n,):
        raise ValueError(f"positions must be ({n},), one per token, got {tuple(pos.shape)}")
    if rope_base is not None:  # ρ: each row m rotated by its position's angles
        Q_rot, K_rot = apply_rope(Q, pos, rope_base), apply_rope(K, pos, rope_base)
    else:
        Q_rot, K_rot = Q, K
    K_rep = repeat_kv(K_rot, h)  # K⁽ᵞ⁽ⁱ⁾⁾ for each query head: (..., g, n, d_k) -> (..., h, n, d_k)
    V_rep = repeat_kv(V, h)  # (..., g, n, d_v) -> (..., h, n, d_v)
    QKt = scores(Q_rot, K_rep)  # (..., h, n, d_k) @ (..., h, d_k, n) -> (..., h, n, n)
    S = scale(QKt, d_k)  # S = Q Kᵀ / √d_k
    if M is None and causal:
        M = causal_mask(n, dtype=X.dtype).to(X.device)
    S_masked = add_mask(S, M) if M is not None else S  # S̃ = S + M
    A = softmax_rows(S_masked)  # A = softmax(S̃), row-wise
    A_used = attention_dropout(A, dropout_p, generator)
    H = weighted_sum(A_used, V_rep)  # H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ᵞ⁽ⁱ⁾⁾: (..., h, n, d_v)
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
        positions=pos,
        rope_base=rope_base,
        Q_rot=Q_rot,
        K_rot=K_rot,
        K_rep=K_rep,
        V_rep=V_rep,
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


# --8<-- [start:masked_multihead_attention]
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
    M: Tensor | None = None,
    rope_base: float | None = None,
    positions: Tensor | None = None,
    tokens: Sequence[str] | None = None,
    dropout_p: float = 0.0,
    generator: torch.Generator | None = None,
) -> AttentionTrace:
    r"""Masked multi-head attention with per-head matrices (seeds 000 and 003), ``h`` query
    heads sharing ``g`` K/V heads.

    $$
    \operatorname{MultiHead}(X) = \operatorname{Concat}_{i=1}^{h}\Big(
        \operatorname{softmax}\Big(\frac{\rho(Q^{(i)})\,\rho(K^{(\gamma(i))})^\top}{\sqrt{d_k}}
        + M\Big) V^{(\gamma(i))}\Big) W_O + b_O,\qquad
    Q^{(i)} = X W_Q^{(i)} + b_Q^{(i)}\ \text{(and K, V)}
    $$

    with $\gamma(i) = \lfloor i g / h \rfloor$ (`attention_ref.reference.spec.kv_group`; the
    homework: ``g = h``, $\gamma(i) = i$) and $\rho$ RoPE when ``rope_base`` is given, the
    identity otherwise.

    Args:
        X: tokens as rows, ``(n, d_model)`` or ``(B, T, d_model)``, float32 or float64.
        W_Q: ``(h, d_model, d_k)``, the matrices ``W_Q^(i)`` stacked.
        W_K: ``(g, d_model, d_k)``, ``g`` dividing ``h`` (``g = h`` in the documents;
            `attention_ref.reference.gqa`: ``g < h``).
        W_V: ``(g, d_model, d_v)``.
        W_O: ``(h*d_v, d_out)`` with any ``d_out`` (usually ``d_model``; seed 001's code maps
            to ``d_out != d_in``). ``None``: no output projection, the output is the concat
            ``(..., n, h*d_v)`` (rasbt's ``MultiHeadAttentionWrapper``), for any ``h*d_v``.
        b_Q: optional query bias, ``(h, d_k)`` per head or ``(h*d_k,)`` fused
            (``nn.Linear`` style); the documents use none.
        b_K: optional key bias, ``(g, d_k)`` or ``(g*d_k,)``.
        b_V: optional value bias, ``(g, d_v)`` or ``(g*d_v,)``.
        b_O: optional output bias ``(d_out,)``; needs ``W_O``.
        causal: add the causal mask ``M`` when no ``M`` is given (default); ``False`` with no
            ``M`` gives plain self-attention.
        M: the additive mask ``(n, n)`` or per query head ``(h, n, n)``, e.g.
            `attention_ref.reference.windows.sliding_window_mask` or ``alibi_mask``; when
            given, ``causal`` is not used.
        rope_base: rotate Q and K with RoPE of this base (``None``: no RoPE).
        positions: ``(n,)`` positions for RoPE; default ``0, 1, …, n - 1``.
        tokens: optional names of the ``n`` tokens, kept in the trace.
        dropout_p: dropout on the attention weights (seed 001); 0 in explain.
        generator: RNG for the dropout.

    Returns:
        The `AttentionTrace` with every intermediate; ``.output`` is the result.
    """
    given = {"W_Q": W_Q, "W_K": W_K, "W_V": W_V, "b_Q": b_Q, "b_K": b_K, "b_V": b_V}
    _check_inputs(X, given)
    d_model = X.shape[-1]
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.dim() != 3 or W.shape[1] != d_model:
            raise ValueError(
                f"{name} must be (heads, d_model={d_model}, d), got shape {tuple(W.shape)}"
            )
    h, g = W_Q.shape[0], W_K.shape[0]
    if W_V.shape[0] != g:
        raise ValueError(f"W_V has {W_V.shape[0]} K/V heads but W_K has {g}")
    if h % g != 0:
        raise ValueError(f"g={g} K/V heads must divide h={h} query heads")
    if W_K.shape[-1] != W_Q.shape[-1]:
        raise ValueError(
            f"queries of width {W_Q.shape[-1]} need keys of the same width, got {W_K.shape[-1]}"
        )
    if M is not None:
        _check_mask(M, X, h)
    d_k, d_v = W_Q.shape[-1], W_V.shape[-1]
    b_Q = _head_bias(b_Q, "b_Q", h, d_k)
    b_K = _head_bias(b_K, "b_K", g, d_k)
    b_V = _head_bias(b_V, "b_V", g, d_v)
    W_O, b_O = _output_weight(W_O, b_O, h * d_v, X)
    # Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾ + b_Q⁽ⁱ⁾: (..., n, d_model) -> (..., h, n, d_k)
    Q = project_heads(X, W_Q, b_Q)
    K = project_heads(X, W_K, b_K)  # K⁽ʲ⁾ = X W_K⁽ʲ⁾ + b_K⁽ʲ⁾: -> (..., g, n, d_k)
    V = project_heads(X, W_V, b_V)  # V⁽ʲ⁾ = X W_V⁽ʲ⁾ + b_V⁽ʲ⁾: -> (..., g, n, d_v)
    weights = {"W_Q": W_Q, "W_K": W_K, "W_V": W_V, "b_Q": b_Q, "b_K": b_K, "b_V": b_V}
    return _attend(
        X,
        Q,
        K,
        V,
        weights=weights | {"W_O": W_O, "b_O": b_O},
        causal=causal,
        M=M,
        rope_base=rope_base,
        positions=positions,
        tokens=tokens,
        dropout_p=dropout_p,
        generator=generator,
    )


# --8<-- [end:masked_multihead_attention]


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
    r"""The same computation with one fused projection per role (seeds 001 and 002), ``g = h``.

    $Q = X W_Q + b_Q$ with $W_Q \in \mathbb{R}^{d_{model} \times h d_k}$ and
    $b_Q \in \mathbb{R}^{h d_k}$ (an ``nn.Linear``: ``W_Q = W_query.weight.T``), then
    `split_heads` gives ``(…, h, n, d_k)``; the rest is the tail of
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
        M=None,
        rope_base=None,
        positions=None,
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
