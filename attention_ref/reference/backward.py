r"""The backward pass of masked multi-head attention, one small pure function per formula.

The forward (`attention_ref.reference.attention`) in the documents' row convention:

$$
Q^{(i)} = X W_Q^{(i)},\quad S^{(i)} = \frac{Q^{(i)} K^{(i)\top}}{\sqrt{d_k}},\quad
\tilde S^{(i)} = S^{(i)} + M,\quad A^{(i)} = \operatorname{softmax}_{\text{row}}(\tilde S^{(i)}),
\quad H^{(i)} = A^{(i)} V^{(i)},\quad Y = \operatorname{Concat}(H^{(1)} | \dots | H^{(h)})\, W_O
$$

Given the upstream gradient $G = \partial L / \partial Y$ (for $L = \sum_{tj} Y_{tj}$, $G$ is
all ones), the chain rule runs the same steps backwards; $\partial Z$ below is short for
$\partial L / \partial Z$, a matrix of the shape of $Z$:

$$
\partial W_O = \operatorname{Concat}^\top G,\quad
\partial \operatorname{Concat} = G\, W_O^\top,\quad
\partial A^{(i)} = \partial H^{(i)} V^{(i)\top},\quad
\partial V^{(i)} = A^{(i)\top} \partial H^{(i)}
$$

$$
\partial \tilde S = A \odot \big(\partial A - \operatorname{rowsum}(\partial A \odot A)\big),\quad
\partial S = \partial \tilde S,\quad
\partial Q = \frac{\partial S\, K}{\sqrt{d_k}},\quad
\partial K = \frac{\partial S^\top Q}{\sqrt{d_k}},\quad
\partial W_Q^{(i)} = X^\top \partial Q^{(i)}
$$

$$
\partial X = \sum_i \partial Q^{(i)} W_Q^{(i)\top} + \sum_i \partial K^{(i)} W_K^{(i)\top}
           + \sum_i \partial V^{(i)} W_V^{(i)\top}
$$

Every function works on one sequence ``(n, ·)`` and on a batch ``(B, T, ·)``; the gradient
of a weight or a bias, shared by every sequence of the batch, is summed over the batch.
`attention_backward` composes them and returns a `GradientTrace` of every gradient, the
backward twin of `attention_ref.reference.AttentionTrace`. Nothing here calls autograd: the
tests compare every gradient with ``torch.autograd`` in float64.

Book page: ``docs/gradients.md`` "Gradients of attention".
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from attention_ref.reference.attention import merge_heads, split_heads
from attention_ref.reference.gqa import sum_kv_groups
from attention_ref.reference.rope import rope_backward
from attention_ref.reference.trace import AttentionTrace, GradientTrace

__all__ = [
    "attention_backward",
    "bias_grad",
    "concat_grad",
    "heads_grad",
    "input_grad",
    "input_grad_path",
    "key_grad",
    "mask_backward",
    "output_weight_grad",
    "query_grad",
    "scale_backward",
    "softmax_rows_backward",
    "value_grad",
    "weight_grad_fused",
    "weight_grad_heads",
    "weights_grad",
]


def _sum_leading(t: Tensor, keep: int) -> Tensor:
    """Sum over every dimension but the last ``keep``: a shared parameter's gradient is the
    sum of its gradients over the batch. ``(..., a, b)`` -> ``(a, b)`` for ``keep = 2``."""
    return t.reshape(-1, *t.shape[t.dim() - keep :]).sum(dim=0)


# --- 1. output projection and concat ---------------------------------------------------------


def output_weight_grad(concat: Tensor, G: Tensor) -> Tensor:
    r"""$\partial W_O = \operatorname{Concat}^\top G$ (summed over the batch).

    $Y_{tj} = \sum_c \operatorname{Concat}_{tc} (W_O)_{cj}$, so
    $\partial L / \partial (W_O)_{cj} = \sum_t \operatorname{Concat}_{tc} G_{tj}$.
    ``concat``: ``(..., n, h*d_v)``; ``G``: ``(..., n, d_out)``; returns ``(h*d_v, d_out)``.
    """
    # (..., h*d_v, n) @ (..., n, d_out) -> (..., h*d_v, d_out) -> (h*d_v, d_out)
    return _sum_leading(concat.transpose(-2, -1) @ G, 2)


def bias_grad(grad: Tensor, *, per_head: bool = False) -> Tensor:
    r"""The gradient of a bias added to every row: the column sums, $\partial b = \mathbf 1^\top G$.

    $Y = Z + \mathbf 1 b$ adds $b_j$ to every row $t$, so
    $\partial L / \partial b_j = \sum_t G_{tj}$ (and over the batch). Used for ``b_O`` with
    ``grad = G`` ``(..., n, d_out)`` -> ``(d_out,)``, and with ``per_head=True`` for
    ``b_Q``, ``b_K``, ``b_V`` with ``grad = ∂Q`` ``(..., h, n, d)`` -> ``(h, d)``.
    """
    rows = grad.sum(dim=-2)  # Σ_t: (..., n, d) -> (..., d); per head (..., h, n, d) -> (..., h, d)
    return _sum_leading(rows, 2 if per_head else 1)


def concat_grad(G: Tensor, W_O: Tensor | None) -> Tensor:
    r"""$\partial \operatorname{Concat} = G\, W_O^\top$; ``W_O = None`` (output = concat): $G$.

    ``G``: ``(..., n, d_out)``; ``W_O``: ``(h*d_v, d_out)``; returns ``(..., n, h*d_v)``.
    """
    return G if W_O is None else G @ W_O.T  # (..., n, d_out) @ (d_out, h*d_v)


def heads_grad(dconcat: Tensor, h: int) -> Tensor:
    r"""$\partial H^{(i)}$: the columns of $\partial \operatorname{Concat}$ that head $i$ wrote.

    The concat only moves numbers (`merge_heads`), so its backward moves the gradient back
    with the inverse reshape, `split_heads`: head ``i`` gets columns ``i*d_v .. (i+1)*d_v - 1``.
    ``(..., n, h*d_v)`` -> ``(..., h, n, d_v)``.
    """
    return split_heads(dconcat, h)


# --- 2. weighted sum and softmax --------------------------------------------------------------


def weights_grad(dH: Tensor, V: Tensor) -> Tensor:
    r"""$\partial A = \partial H\, V^\top$.

    $H_{td} = \sum_j A_{tj} V_{jd}$, so
    $\partial L / \partial A_{tj} = \sum_d \partial H_{td} V_{jd}$.
    ``dH``: ``(..., n, d_v)``; ``V``: ``(..., n, d_v)``; returns ``(..., n, n)``.
    """
    return dH @ V.transpose(-2, -1)  # (..., n, d_v) @ (..., d_v, n)


def value_grad(A: Tensor, dH: Tensor) -> Tensor:
    r"""$\partial V = A^\top \partial H$.

    $\partial L / \partial V_{jd} = \sum_t A_{tj}\, \partial H_{td}$: value row $j$ collects
    the gradient of every token that attends to it, weighted by how much it attends.
    ``A``: ``(..., n, n)``; ``dH``: ``(..., n, d_v)``; returns ``(..., n, d_v)``.
    """
    return A.transpose(-2, -1) @ dH  # (..., n, n)ᵀ @ (..., n, d_v)


def softmax_rows_backward(A: Tensor, dA: Tensor) -> Tensor:
    r"""The row-wise softmax backward, $\partial \tilde S$ from $\partial A$:

    $$
    \partial \tilde S = A \odot \big(\partial A - \operatorname{rowsum}(\partial A \odot A)\big)
    $$

    From $\partial A_{tl} / \partial \tilde s_{tj} = A_{tl} (\delta_{lj} - A_{tj})$:
    $\partial \tilde s_{tj} = \sum_l \partial A_{tl} A_{tl} (\delta_{lj} - A_{tj})
    = A_{tj} \big(\partial A_{tj} - \sum_l \partial A_{tl} A_{tl}\big)$.

    **Masked entries get exactly zero gradient.** Where $\tilde s_{tj} = -\infty$ the forward
    gives $A_{tj} = e^{-\infty} / \sum_l e^{\tilde s_{tl}} = 0$ exactly, and the gradient
    above carries the factor $A_{tj}$: $0 \cdot (\text{a finite number}) = 0$, exactly, in
    floating point too. So nothing flows back through a masked score into $Q$ or $K$: the
    future cannot influence the past in the backward pass either. (A gradient added to every
    entry of a row is removed as well: softmax ignores a shift of its row.)

    ``A``, ``dA``: ``(..., n, n)``; returns ``(..., n, n)``.
    """
    return A * (dA - (dA * A).sum(dim=-1, keepdim=True))  # rowsum: (..., n, n) -> (..., n, 1)


def mask_backward(dS_masked: Tensor) -> Tensor:
    r"""$\partial S = \partial \tilde S$: adding the constant mask $M$ passes the gradient on.

    $\tilde S = S + M$ and $M$ is not a parameter (it has no gradient), so
    $\partial S_{tj} = \partial \tilde S_{tj}$; above the diagonal both are exactly 0
    (`softmax_rows_backward`).
    """
    return dS_masked


def scale_backward(dS: Tensor, d_k: int) -> Tensor:
    r"""$\partial (Q K^\top) = \partial S / \sqrt{d_k}$: the scale divides the gradient too."""
    return dS / math.sqrt(d_k)


# --- 3. scores, projections, X ----------------------------------------------------------------


def query_grad(dQKt: Tensor, K: Tensor) -> Tensor:
    r"""$\partial Q = \partial(Q K^\top)\, K = \partial S\, K / \sqrt{d_k}$.

    $(Q K^\top)_{tj} = q_t \cdot k_j$, so $\partial q_t = \sum_j \partial(QK^\top)_{tj}\, k_j$.
    ``dQKt``: ``(..., n, n)``; ``K``: ``(..., n, d_k)``; returns ``(..., n, d_k)``.
    """
    return dQKt @ K


def key_grad(dQKt: Tensor, Q: Tensor) -> Tensor:
    r"""$\partial K = \partial(Q K^\top)^\top Q = \partial S^\top Q / \sqrt{d_k}$.

    $\partial k_j = \sum_t \partial(QK^\top)_{tj}\, q_t$: key $j$ collects from every query.
    ``dQKt``: ``(..., n, n)``; ``Q``: ``(..., n, d_k)``; returns ``(..., n, d_k)``.
    """
    return dQKt.transpose(-2, -1) @ Q


def weight_grad_heads(X: Tensor, dQ: Tensor) -> Tensor:
    r"""Per head $\partial W_Q^{(i)} = X^\top \partial Q^{(i)}$ (summed over the batch).

    The same formula gives $\partial W_K^{(i)}$ and $\partial W_V^{(i)}$.
    ``X``: ``(..., n, d_model)``; ``dQ``: ``(..., h, n, d_k)``; returns ``(h, d_model, d_k)``.
    """
    # (..., 1, d_model, n) @ (..., h, n, d_k) -> (..., h, d_model, d_k) -> (h, d_model, d_k)
    return _sum_leading(X.unsqueeze(-3).transpose(-2, -1) @ dQ, 3)


def weight_grad_fused(X: Tensor, dQ: Tensor) -> Tensor:
    r"""Fused view $\partial W_Q = X^\top [\,\partial Q^{(1)} | \dots | \partial Q^{(h)}\,]$.

    Equal to `fuse_heads` of `weight_grad_heads`: the per-head gradients side by side.
    ``X``: ``(..., n, d_model)``; ``dQ``: ``(..., h, n, d_k)``; returns ``(d_model, h*d_k)``.
    """
    # (..., h, n, d_k) -> (..., n, h*d_k); (..., d_model, n) @ that -> (d_model, h*d_k)
    return _sum_leading(X.transpose(-2, -1) @ merge_heads(dQ), 2)


def input_grad_path(dQ: Tensor, W_heads: Tensor) -> Tensor:
    r"""One path of $\partial X$: $\sum_i \partial Q^{(i)} W_Q^{(i)\top}$ (or K, V).

    ``dQ``: ``(..., h, n, d_k)``; ``W_heads``: ``(h, d_model, d_k)``; returns
    ``(..., n, d_model)``.
    """
    # (..., h, n, d_k) @ (h, d_k, d_model) -> (..., h, n, d_model) -> sum over h
    return (dQ @ W_heads.transpose(-2, -1)).sum(dim=-3)


def input_grad(dX_Q: Tensor, dX_K: Tensor, dX_V: Tensor) -> Tensor:
    r"""$\partial X = \partial X_Q + \partial X_K + \partial X_V$.

    $X$ enters the attention three times (queries, keys, values); by the multivariable chain
    rule its gradient is the sum of the gradients along the three paths.
    """
    return dX_Q + dX_K + dX_V


# --- 4. the composition, with a trace ---------------------------------------------------------


# --8<-- [start:attention_backward]
def attention_backward(trace: AttentionTrace, G: Tensor | None = None) -> GradientTrace:
    r"""Every gradient of masked multi-head attention, from the forward's trace.

    Runs the formulas of this module in reverse order of the forward:
    $G \to \partial W_O, \partial b_O, \partial\operatorname{Concat} \to \partial H^{(i)}
    \to \partial A^{(i)}, \partial V^{(i)} \to \partial \tilde S^{(i)} = \partial S^{(i)}
    \to \partial Q^{(i)}, \partial K^{(i)} \to \partial W^{(i)}, \partial b^{(i)}, \partial X$.
    The weights and biases are the trace's (per head, whichever view the forward was given);
    a bias the forward did not have gets no gradient (``None``), nor does a missing ``W_O``.

    With ``g < h`` K/V heads (`attention_ref.reference.gqa`) a K/V head collects the gradients
    of its group's query heads (`attention_ref.reference.gqa.sum_kv_groups`); with RoPE the
    rotation is undone by its transpose (`attention_ref.reference.rope.rope_backward`). In the
    row convention of the RoPE page (the key of position $m$ is the row $k'_m = k_m R_m^\top$),
    row $m$ of each gradient:

    $$
    \partial k^{(j)}_m = \Big(\sum_{i:\ \gamma(i) = j} \partial K^{(i)}_{\text{rep}}\Big)_m R_m,
    \qquad
    \partial V^{(j)} = \sum_{i:\ \gamma(i) = j} \partial V^{(i)}_{\text{rep}},\qquad
    \partial W_K^{(j)} = X^\top \partial K^{(j)}
    $$

    Args:
        trace: the forward's `AttentionTrace` (no dropout: its random mask is not kept).
        G: the upstream gradient $\partial L / \partial Y$, the shape of ``trace.output``;
            ``None`` means all ones, i.e. $L = \sum_{t,j} Y_{tj}$.

    Returns:
        The `GradientTrace`; ``.X`` is $\partial L/\partial X$.
    """
    if trace.A_dropped is not None:
        raise ValueError("the backward pass needs a trace without dropout (dropout_p = 0)")
    Y = trace.output
    if G is None:
        G = torch.ones_like(Y)  # L = Σ Y: ∂L/∂Y_tj = 1
    if G.shape != Y.shape:
        raise ValueError(
            f"G must have the shape of the output {tuple(Y.shape)}, got {tuple(G.shape)}"
        )
    if G.dtype != Y.dtype:
        raise TypeError(f"G has dtype {G.dtype} but the output has {Y.dtype}: use one dtype")
    X, h, g, d_k = trace.X, trace.h, trace.g, trace.d_k
    W_Q, W_K, W_V, W_O = trace.W_Q, trace.W_K, trace.W_V, trace.W_O
    dW_O = output_weight_grad(trace.concat, G) if W_O is not None else None  # Concatᵀ G
    db_O = bias_grad(G) if trace.b_O is not None else None  # column sums of G
    dconcat = concat_grad(G, W_O)  # G W_Oᵀ: (..., n, d_out) -> (..., n, h*d_v)
    dH = heads_grad(dconcat, h)  # (..., n, h*d_v) -> (..., h, n, d_v)
    dA = weights_grad(dH, trace.V_rep)  # ∂H Vᵀ
    dV_rep = value_grad(trace.A, dH)  # Aᵀ ∂H, per query head
    dS_masked = softmax_rows_backward(trace.A, dA)  # A ⊙ (∂A − rowsum(∂A ⊙ A))
    dS = mask_backward(dS_masked)  # M is constant
    dQKt = scale_backward(dS, d_k)  # ∂S / √d_k
    dQ_rot = query_grad(dQKt, trace.K_rep)  # ∂S K / √d_k
    dK_rep = key_grad(dQKt, trace.Q_rot)  # ∂Sᵀ Q / √d_k, per query head
    dK_rot = sum_kv_groups(dK_rep, g)  # a K/V head collects its group: (..., h, ·) -> (..., g, ·)
    dV = sum_kv_groups(dV_rep, g)
    if trace.rope_base is not None:  # through ρ: the rotation's transpose
        dQ = rope_backward(dQ_rot, trace.positions, trace.rope_base)
        dK = rope_backward(dK_rot, trace.positions, trace.rope_base)
    else:
        dQ, dK = dQ_rot, dK_rot
    dX_Q = input_grad_path(dQ, W_Q)
    dX_K = input_grad_path(dK, W_K)
    dX_V = input_grad_path(dV, W_V)
    return GradientTrace(
        output=G,
        W_O=dW_O,
        b_O=db_O,
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
        W_Q=weight_grad_heads(X, dQ),  # Xᵀ ∂Q⁽ⁱ⁾
        W_K=weight_grad_heads(X, dK),
        W_V=weight_grad_heads(X, dV),
        b_Q=bias_grad(dQ, per_head=True) if trace.b_Q is not None else None,
        b_K=bias_grad(dK, per_head=True) if trace.b_K is not None else None,
        b_V=bias_grad(dV, per_head=True) if trace.b_V is not None else None,
        X_from_Q=dX_Q,
        X_from_K=dX_K,
        X_from_V=dX_V,
        X=input_grad(dX_Q, dX_K, dX_V),
    )


# --8<-- [end:attention_backward]
