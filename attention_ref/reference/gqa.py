r"""Grouped-query and multi-query attention: ``h`` query heads sharing ``g`` K/V heads.

Multi-head attention gives every head its own $W_Q^{(i)}, W_K^{(i)}, W_V^{(i)}$. Multi-query
attention (Shazeer, 2019) keeps ``h`` query heads but one key and one value head for all of
them; grouped-query attention (Ainslie et al., *GQA*, 2023) keeps ``g`` of them, each shared
by a group of $r = h/g$ consecutive query heads (Llama 3 8B: ``h = 32``, ``g = 8``):

$$
Q^{(i)} = X W_Q^{(i)}\ (i = 1..h),\qquad K^{(j)} = X W_K^{(j)},\ V^{(j)} = X W_V^{(j)}\
(j = 1..g),\qquad
H^{(i)} = \operatorname{softmax}\Big(\frac{Q^{(i)} K^{(\gamma(i))\top}}{\sqrt{d_k}} + M\Big)
V^{(\gamma(i))}
$$

with the group of query head ``i`` (0-based) $\gamma(i) = \lfloor i g / h \rfloor =
\lfloor i / r \rfloor$: heads ``0 .. r-1`` read K/V head 0, the next ``r`` read K/V head 1, and
so on (the order of ``repeat_interleave``, of PyTorch's ``enable_gqa`` and of Llama's
``repeat_kv``). ``g = h`` is multi-head attention, ``g = 1`` multi-query attention. Fewer K/V
heads mean fewer weights in $W_K, W_V$ and, above all, fewer numbers kept per token in the KV
cache (`attention_ref.reference.params`).

The backward runs the chain rule of `attention_ref.reference.backward` on the repeated heads;
the one new step is the repeat's own backward: a K/V head that served ``r`` query heads
collects the sum of their gradients,

$$
\partial K^{(j)} = \sum_{i:\ \gamma(i) = j} \partial K^{(i)}_{\text{rep}},\qquad
\partial V^{(j)} = \sum_{i:\ \gamma(i) = j} \partial V^{(i)}_{\text{rep}}
$$

`grouped_query_attention` also takes the mask of `attention_ref.reference.windows` (sliding
window, ALiBi) and RoPE (`attention_ref.reference.rope`) on the queries and keys, so one
function is the reference of every variant here; its trace keeps every intermediate.

Book page: ``docs/gqa.md`` "Grouped-query and multi-query attention".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from attention_ref.reference.attention import (
    add_mask,
    causal_mask,
    merge_heads,
    output_projection,
    project_heads,
    scale,
    scores,
    softmax_rows,
    weighted_sum,
)
from attention_ref.reference.backward import (
    concat_grad,
    heads_grad,
    input_grad,
    input_grad_path,
    key_grad,
    mask_backward,
    output_weight_grad,
    query_grad,
    scale_backward,
    softmax_rows_backward,
    value_grad,
    weight_grad_heads,
    weights_grad,
)
from attention_ref.reference.rope import apply_rope, rope_backward
from attention_ref.reference.spec import kv_group

__all__ = [
    "GQAGradientTrace",
    "GQATrace",
    "gqa_backward",
    "grouped_query_attention",
    "kv_group",
    "repeat_kv",
    "sum_kv_groups",
]


# --8<-- [start:repeat_kv]
def repeat_kv(K: Tensor, h: int) -> Tensor:
    r"""Each K/V head repeated for the $r = h/g$ query heads of its group:
    $K^{(i)}_{\text{rep}} = K^{(\gamma(i))}$.

    ``K``: ``(..., g, n, d)``; returns ``(..., h, n, d)``, head ``i`` a copy of K/V head
    ``i // r`` (K/V head 0 first ``r`` times, then K/V head 1, …).
    """
    g = K.shape[-3]
    if g < 1 or h % g != 0:
        raise ValueError(f"g={g} K/V heads must divide h={h} query heads")
    return K.repeat_interleave(h // g, dim=-3)  # (..., g, n, d) -> (..., h, n, d)


def sum_kv_groups(dK_rep: Tensor, g: int) -> Tensor:
    r"""The backward of `repeat_kv`: $\partial K^{(j)} = \sum_{i: \gamma(i) = j}
    \partial K^{(i)}_{\text{rep}}$, the gradients of a group's query heads added up.

    ``dK_rep``: ``(..., h, n, d)``; returns ``(..., g, n, d)``.
    """
    *lead, h, n, d = dK_rep.shape
    if g < 1 or h % g != 0:
        raise ValueError(f"g={g} K/V heads must divide h={h} query heads")
    grouped = dK_rep.reshape(*lead, g, h // g, n, d)  # (..., h, n, d) -> (..., g, r, n, d)
    return grouped.sum(dim=-3)  # Σ over the r heads of each group: -> (..., g, n, d)


# --8<-- [end:repeat_kv]


@dataclass(frozen=True, kw_only=True)
class GQATrace:
    """Every intermediate of one grouped-query attention (the variant of `AttentionTrace`).

    Query-side tensors have ``h`` heads (``Q`` is ``(..., h, n, d_k)``), K/V-side tensors
    ``g`` (``K`` is ``(..., g, n, d_k)``); ``K_rep``, ``V_rep`` are the K/V heads repeated to
    ``h`` (`repeat_kv`). With RoPE, ``Q_rot``, ``K_rot`` are the rotated ``Q``, ``K`` and
    ``positions`` their positions (``rope_base`` its base); without, ``Q_rot is Q`` and
    ``rope_base`` is ``None``. ``M`` is the additive mask used (``None``: none), ``(n, n)`` or
    per head ``(h, n, n)`` (ALiBi). ``W_O`` ``None``: the output is the concat.
    """

    tokens: tuple[str, ...]
    X: Tensor
    W_Q: Tensor
    W_K: Tensor
    W_V: Tensor
    Q: Tensor
    K: Tensor
    V: Tensor
    positions: Tensor
    rope_base: float | None
    Q_rot: Tensor
    K_rot: Tensor
    K_rep: Tensor
    V_rep: Tensor
    QKt: Tensor
    S: Tensor
    M: Tensor | None
    S_masked: Tensor
    A: Tensor
    H: Tensor
    concat: Tensor
    W_O: Tensor | None
    output: Tensor

    @property
    def h(self) -> int:
        """Number of query heads."""
        return int(self.Q.shape[-3])

    @property
    def g(self) -> int:
        """Number of K/V heads."""
        return int(self.K.shape[-3])

    @property
    def group_size(self) -> int:
        """Query heads per K/V head, ``r = h / g``."""
        return self.h // self.g

    @property
    def d_k(self) -> int:
        """Width of a query/key head."""
        return int(self.Q.shape[-1])


def _check_weights(X: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor, W_O: Tensor | None) -> None:
    """``ValueError``/``TypeError`` when the shapes or dtypes cannot make a GQA layer."""
    if X.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"X must be float32 or float64, got {X.dtype}")
    if X.dim() < 2 or X.shape[-2] == 0:
        raise ValueError(f"X must be (n, d_model) or (B, T, d_model), got {tuple(X.shape)}")
    d_model = X.shape[-1]
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)):
        if W is not None and W.dtype != X.dtype:
            raise TypeError(f"{name} has dtype {W.dtype} but X has {X.dtype}: use one dtype")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.dim() != 3 or W.shape[1] != d_model:
            raise ValueError(f"{name} must be (heads, d_model={d_model}, d), got {tuple(W.shape)}")
    h, g = W_Q.shape[0], W_K.shape[0]
    if W_V.shape[0] != g:
        raise ValueError(f"W_K has {g} K/V heads but W_V has {W_V.shape[0]}")
    if h % g != 0:
        raise ValueError(f"g={g} K/V heads must divide h={h} query heads")
    if W_K.shape[-1] != W_Q.shape[-1]:
        raise ValueError(
            f"queries of width {W_Q.shape[-1]} need keys of the same width, got {W_K.shape[-1]}"
        )
    if W_O is not None and (W_O.dim() != 2 or W_O.shape[0] != h * W_V.shape[-1]):
        raise ValueError(
            f"W_O must be (h*d_v, d_out) = ({h * W_V.shape[-1]}, d_out), got {tuple(W_O.shape)}"
        )


# --8<-- [start:grouped_query_attention]
def grouped_query_attention(
    X: Tensor,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    W_O: Tensor | None = None,
    *,
    causal: bool = True,
    M: Tensor | None = None,
    rope_base: float | None = None,
    positions: Tensor | None = None,
    tokens: Sequence[str] | None = None,
) -> GQATrace:
    r"""Grouped-query attention, with the optional mask and RoPE of today's models.

    $$
    \operatorname{GQA}(X) = \operatorname{Concat}_{i=1}^{h}\Big(\operatorname{softmax}\Big(
    \frac{\rho(Q^{(i)}) \rho(K^{(\gamma(i))})^\top}{\sqrt{d_k}} + M\Big) V^{(\gamma(i))}\Big)
    W_O
    $$

    where $\rho$ is RoPE (`attention_ref.reference.rope.apply_rope`) when ``rope_base`` is
    given and the identity otherwise, and $\gamma(i) = \lfloor i g/h \rfloor$ (`kv_group`).

    Args:
        X: tokens as rows, ``(n, d_model)`` or ``(B, T, d_model)``.
        W_Q: ``(h, d_model, d_k)``, the ``h`` query heads.
        W_K: ``(g, d_model, d_k)``, the ``g`` K/V heads (``g`` divides ``h``).
        W_V: ``(g, d_model, d_v)``.
        W_O: ``(h*d_v, d_out)``; ``None``: no output projection, the output is the concat.
        causal: add the causal mask when no ``M`` is given (default); ``False``: no mask.
        M: the additive mask ``(n, n)`` or per query head ``(h, n, n)``, e.g.
            `attention_ref.reference.windows.sliding_window_mask` or ``alibi_mask``; when
            given, ``causal`` is not used.
        rope_base: rotate Q and K with RoPE of this base (``None``: no RoPE).
        positions: ``(n,)`` positions for RoPE; default ``0, 1, …, n - 1``.
        tokens: optional names of the ``n`` tokens.

    Returns:
        The `GQATrace`; ``.output`` is the result.
    """
    _check_weights(X, W_Q, W_K, W_V, W_O)
    n, h = X.shape[-2], W_Q.shape[0]
    Q = project_heads(X, W_Q)  # Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾: (..., n, d_model) -> (..., h, n, d_k)
    K = project_heads(X, W_K)  # K⁽ʲ⁾ = X W_K⁽ʲ⁾: (..., n, d_model) -> (..., g, n, d_k)
    V = project_heads(X, W_V)  # V⁽ʲ⁾ = X W_V⁽ʲ⁾: (..., n, d_model) -> (..., g, n, d_v)
    pos = torch.arange(n, dtype=X.dtype) if positions is None else positions.to(X.dtype)
    if rope_base is not None:  # ρ: each row m rotated by its position's angles
        Q_rot, K_rot = apply_rope(Q, pos, rope_base), apply_rope(K, pos, rope_base)
    else:
        Q_rot, K_rot = Q, K
    K_rep = repeat_kv(K_rot, h)  # K⁽ᵞ⁽ⁱ⁾⁾ for each query head: (..., g, n, d_k) -> (..., h, n, d_k)
    V_rep = repeat_kv(V, h)  # (..., g, n, d_v) -> (..., h, n, d_v)
    QKt = scores(Q_rot, K_rep)  # (..., h, n, d_k) @ (..., h, d_k, n) -> (..., h, n, n)
    S = scale(QKt, Q.shape[-1])  # S = Q Kᵀ / √d_k
    if M is None and causal:
        M = causal_mask(n, dtype=X.dtype).to(X.device)
    S_masked = add_mask(S, M) if M is not None else S  # S̃ = S + M
    A = softmax_rows(S_masked)
    H = weighted_sum(A, V_rep)  # H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ᵞ⁽ⁱ⁾⁾: (..., h, n, d_v)
    concat = merge_heads(H)  # (..., h, n, d_v) -> (..., n, h*d_v)
    output = output_projection(concat, W_O) if W_O is not None else concat
    names = tuple(tokens) if tokens is not None else tuple(f"t{i + 1}" for i in range(n))
    if len(names) != n:
        raise ValueError(f"{len(names)} token names given for n={n} rows of X")
    return GQATrace(
        tokens=names,
        X=X,
        W_Q=W_Q,
        W_K=W_K,
        W_V=W_V,
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
        H=H,
        concat=concat,
        W_O=W_O,
        output=output,
    )


# --8<-- [end:grouped_query_attention]


@dataclass(frozen=True, kw_only=True)
class GQAGradientTrace:
    r"""Every gradient of one grouped-query attention: field ``Z`` is $\partial L/\partial Z$.

    Shapes are the forward's: ``K_rep``, ``V_rep`` have ``h`` heads, ``K``, ``V``, ``K_rot``
    ``g`` (their sums over each group, `sum_kv_groups`); ``W_K`` is ``(g, d_model, d_k)``.
    Without RoPE ``Q is Q_rot`` and ``K is K_rot``.
    """

    output: Tensor
    W_O: Tensor | None
    concat: Tensor
    H: Tensor
    A: Tensor
    S_masked: Tensor
    S: Tensor
    QKt: Tensor
    Q_rot: Tensor
    K_rep: Tensor
    V_rep: Tensor
    K_rot: Tensor
    Q: Tensor
    K: Tensor
    V: Tensor
    W_Q: Tensor
    W_K: Tensor
    W_V: Tensor
    X: Tensor


# --8<-- [start:gqa_backward]
def gqa_backward(trace: GQATrace, G: Tensor | None = None) -> GQAGradientTrace:
    r"""Every gradient of grouped-query attention, from the forward's trace.

    The chain rule of `attention_ref.reference.attention_backward` on the ``h`` repeated
    heads, then two steps of its own: the K/V heads collect their group's gradients
    (`sum_kv_groups`), and with RoPE the rotation is undone by its transpose
    (`attention_ref.reference.rope.rope_backward`). In the row convention of the RoPE page
    (the key of position $m$ is the row $k'_m = k_m R_m^\top$), row $m$ of each gradient:

    $$
    \partial k^{(j)}_m = \Big(\sum_{i:\ \gamma(i) = j} \partial K^{(i)}_{\text{rep}}\Big)_m R_m,
    \qquad
    \partial V^{(j)} = \sum_{i:\ \gamma(i) = j} \partial V^{(i)}_{\text{rep}},\qquad
    \partial W_K^{(j)} = X^\top \partial K^{(j)}
    $$

    ``G`` is $\partial L/\partial\,\text{output}$, ``None`` for all ones ($L = \sum$ output).
    """
    Y = trace.output
    G = torch.ones_like(Y) if G is None else G
    if G.shape != Y.shape:
        raise ValueError(f"G must have the output's shape {tuple(Y.shape)}, got {tuple(G.shape)}")
    h, g, d_k = trace.h, trace.g, trace.d_k
    dW_O = output_weight_grad(trace.concat, G) if trace.W_O is not None else None
    dconcat = concat_grad(G, trace.W_O)  # G W_Oᵀ
    dH = heads_grad(dconcat, h)  # (..., n, h*d_v) -> (..., h, n, d_v)
    dA = weights_grad(dH, trace.V_rep)  # ∂H Vᵀ
    dV_rep = value_grad(trace.A, dH)  # Aᵀ ∂H, per query head
    dS_masked = softmax_rows_backward(trace.A, dA)
    dS = mask_backward(dS_masked)
    dQKt = scale_backward(dS, d_k)
    dQ_rot = query_grad(dQKt, trace.K_rep)  # ∂S K / √d_k
    dK_rep = key_grad(dQKt, trace.Q_rot)  # ∂Sᵀ Q / √d_k, per query head
    dK_rot = sum_kv_groups(
        dK_rep, g
    )  # a K/V head collects its group: (..., h, ...) -> (..., g, ...)
    dV = sum_kv_groups(dV_rep, g)
    if trace.rope_base is not None:  # through ρ: the rotation's transpose
        dQ = rope_backward(dQ_rot, trace.positions, trace.rope_base)
        dK = rope_backward(dK_rot, trace.positions, trace.rope_base)
    else:
        dQ, dK = dQ_rot, dK_rot
    X = trace.X
    dX = input_grad(
        input_grad_path(dQ, trace.W_Q),
        input_grad_path(dK, trace.W_K),
        input_grad_path(dV, trace.W_V),
    )
    return GQAGradientTrace(
        output=G,
        W_O=dW_O,
        concat=dconcat,
        H=dH,
        A=dA,
        S_masked=dS_masked,
        S=dS,
        QKt=dQKt,
        Q_rot=dQ_rot,
        K_rep=dK_rep,
        V_rep=dV_rep,
        K_rot=dK_rot,
        Q=dQ,
        K=dK,
        V=dV,
        W_Q=weight_grad_heads(X, dQ),
        W_K=weight_grad_heads(X, dK),
        W_V=weight_grad_heads(X, dV),
        X=dX,
    )


# --8<-- [end:gqa_backward]
