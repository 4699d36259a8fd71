r"""The KV cache: one decode step of causal attention against the cached keys and values.

A causal model generates token ``t`` from tokens ``0 .. t``. Recomputing every key and value
for each new token repeats work: the keys and values of the past do not change (the causal
mask keeps every earlier row independent of later tokens). So the model keeps them, one
``(g, t, d_k)`` block of keys and one of values per layer, and a decode step only projects
the new token ``x_t``:

$$
q_t^{(i)} = x_t W_Q^{(i)},\quad k_t^{(j)} = x_t W_K^{(j)},\quad v_t^{(j)} = x_t W_V^{(j)},
\qquad K^{(j)} \leftarrow \begin{bmatrix} K^{(j)} \\ k_t^{(j)} \end{bmatrix},\quad
V^{(j)} \leftarrow \begin{bmatrix} V^{(j)} \\ v_t^{(j)} \end{bmatrix}
$$

$$
a_t^{(i)} = \operatorname{softmax}\Big(\frac{q_t^{(i)} K^{(\gamma(i))\top}}{\sqrt{d_k}}\Big),
\qquad h_t^{(i)} = a_t^{(i)} V^{(\gamma(i))},\qquad
y_t = \operatorname{Concat}(h_t^{(1)} | \dots | h_t^{(h)})\, W_O
$$

The backward of one step (`decode_step_backward`) shows why training does not use the cache:
the gradient of $y_t$ reaches every cached key and value, so every earlier token's
projections, and it equals the full pass's gradient for a loss on row ``t`` alone.

No causal mask is needed: every cached key is in the past of the query. A sliding window
of ``w`` keys is still a mask: the cache keeps every key and the window's mask hides the ones
``w`` or more positions back (`decode_step`'s ``window``). The row $y_t$ equals row ``t`` of
the full causal attention over ``x_0 .. x_t`` (the tests check it row by row). With ``g`` K/V heads
(`attention_ref.reference.gqa`) the cache holds ``g``, not ``h``, heads: that is what GQA
saves. With RoPE the cache holds the keys already rotated by their own positions.

Book page: ``docs/kv-cache.md`` "The KV cache".
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from attention_ref.reference.attention import (
    add_mask,
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
    input_grad_path,
    key_grad,
    output_weight_grad,
    query_grad,
    scale_backward,
    softmax_rows_backward,
    value_grad,
    weight_grad_heads,
    weights_grad,
)
from attention_ref.reference.gqa import repeat_kv, sum_kv_groups
from attention_ref.reference.rope import apply_rope, rope_backward
from attention_ref.reference.windows import sliding_window_mask

__all__ = [
    "DecodeGradients",
    "DecodeTrace",
    "KVCache",
    "append_kv",
    "decode_step",
    "decode_step_backward",
    "empty_cache",
    "prefill",
]


@dataclass(frozen=True)
class KVCache:
    """The keys and values of the tokens seen so far, ``K``: ``(..., g, t, d_k)``, ``V``:
    ``(..., g, t, d_v)`` (keys rotated by RoPE when the model uses it). Immutable: a step
    returns a new cache."""

    K: Tensor
    V: Tensor

    @property
    def length(self) -> int:
        """The number of cached tokens ``t``, which is also the position of the next token."""
        return int(self.K.shape[-2])


def empty_cache(
    g: int, d_k: int, d_v: int, *, batch: tuple[int, ...] = (), dtype: torch.dtype = torch.float64
) -> KVCache:
    """A cache of no tokens: ``K`` ``(*batch, g, 0, d_k)``, ``V`` ``(*batch, g, 0, d_v)``."""
    return KVCache(
        torch.zeros(*batch, g, 0, d_k, dtype=dtype), torch.zeros(*batch, g, 0, d_v, dtype=dtype)
    )


# --8<-- [start:append_kv]
def append_kv(cache: KVCache, k_new: Tensor, v_new: Tensor) -> KVCache:
    r"""$K \leftarrow [K;\ k_t]$, $V \leftarrow [V;\ v_t]$: the new rows under the cached ones.

    ``k_new``: ``(..., g, s, d_k)`` (``s`` new tokens, 1 in a decode step); returns the cache
    of ``t + s`` tokens.
    """
    K = torch.cat(
        (cache.K, k_new), dim=-2
    )  # (..., g, t, d_k) + (..., g, s, d_k) -> (..., g, t+s, d_k)
    V = torch.cat((cache.V, v_new), dim=-2)
    return KVCache(K, V)


# --8<-- [end:append_kv]


def prefill(X: Tensor, W_K: Tensor, W_V: Tensor, *, rope_base: float | None = None) -> KVCache:
    r"""The cache of a prompt: $K^{(j)} = X W_K^{(j)}$ (rotated to positions ``0 .. n-1`` with
    RoPE), $V^{(j)} = X W_V^{(j)}$. ``X``: ``(..., n, d_model)``; ``W_K``: ``(g, d_model, d_k)``."""
    K = project_heads(X, W_K)  # (..., n, d_model) -> (..., g, n, d_k)
    V = project_heads(X, W_V)  # (..., n, d_model) -> (..., g, n, d_v)
    if rope_base is not None:
        K = apply_rope(K, None, rope_base)
    return KVCache(K, V)


@dataclass(frozen=True, kw_only=True)
class DecodeTrace:
    """One decode step: the new token's ``q`` ``(..., h, 1, d_k)``, ``k``, ``v``
    ``(..., g, 1, d)`` (after RoPE when used), the ``cache`` after the step (``t + 1``
    tokens), its heads repeated to ``h`` (``K_rep``, ``V_rep``), the scores ``(..., h, 1,
    t+1)``, the mask (``None`` without a window), the weights ``a``, head outputs ``h_t``,
    ``concat`` and ``output`` ``(..., 1, d_out)``; ``position`` is ``t``."""

    position: int
    x: Tensor
    q: Tensor
    k: Tensor
    v: Tensor
    cache: KVCache
    K_rep: Tensor
    V_rep: Tensor
    QKt: Tensor
    S: Tensor
    M: Tensor | None
    S_masked: Tensor
    a: Tensor
    h_t: Tensor
    concat: Tensor
    output: Tensor


# --8<-- [start:decode_step]
def decode_step(
    x: Tensor,
    cache: KVCache,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    W_O: Tensor | None = None,
    *,
    rope_base: float | None = None,
    window: int | None = None,
) -> DecodeTrace:
    r"""One token through causal attention with a KV cache: project it, append its key and
    value, attend over the ``t + 1`` cached tokens.

    Args:
        x: the new token, ``(..., 1, d_model)``; its position is ``t = cache.length``.
        cache: the keys and values of tokens ``0 .. t-1``.
        W_Q: ``(h, d_model, d_k)``; ``W_K``: ``(g, d_model, d_k)``; ``W_V``:
            ``(g, d_model, d_v)``; ``W_O``: ``(h*d_v, d_out)`` or ``None`` (output = concat).
        W_K: see ``W_Q``.
        W_V: see ``W_Q``.
        W_O: see ``W_Q``.
        rope_base: RoPE's base, or ``None`` for no RoPE.
        window: a sliding window of ``w`` keys (`attention_ref.reference.windows`), or
            ``None``: every cached key is visible.

    Returns:
        The `DecodeTrace`; ``.output`` is $y_t$ and ``.cache`` the cache for the next step.
    """
    t = cache.length
    h = W_Q.shape[0]
    position = torch.tensor([t], dtype=x.dtype)
    q = project_heads(x, W_Q)  # q_t = x_t W_Q: (..., 1, d_model) -> (..., h, 1, d_k)
    k = project_heads(x, W_K)  # k_t = x_t W_K: (..., 1, d_model) -> (..., g, 1, d_k)
    v = project_heads(x, W_V)  # v_t = x_t W_V: (..., 1, d_model) -> (..., g, 1, d_v)
    if rope_base is not None:  # rotate to position t; the cached keys are rotated already
        q, k = apply_rope(q, position, rope_base), apply_rope(k, position, rope_base)
    new = append_kv(cache, k, v)  # K: (..., g, t, d_k) -> (..., g, t+1, d_k)
    K_rep, V_rep = repeat_kv(new.K, h), repeat_kv(new.V, h)  # (..., g, t+1, d) -> (..., h, t+1, d)
    QKt = scores(q, K_rep)  # (..., h, 1, d_k) @ (..., h, d_k, t+1) -> (..., h, 1, t+1)
    S = scale(QKt, q.shape[-1])
    M = None if window is None else sliding_window_mask(1, window, n_k=t + 1, dtype=x.dtype)
    S_masked = add_mask(S, M) if M is not None else S  # no causal mask: all keys are past
    a = softmax_rows(S_masked)
    h_t = weighted_sum(a, V_rep)  # (..., h, 1, t+1) @ (..., h, t+1, d_v) -> (..., h, 1, d_v)
    concat = merge_heads(h_t)  # (..., h, 1, d_v) -> (..., 1, h*d_v)
    output = output_projection(concat, W_O) if W_O is not None else concat
    return DecodeTrace(
        position=t,
        x=x,
        q=q,
        k=k,
        v=v,
        cache=new,
        K_rep=K_rep,
        V_rep=V_rep,
        QKt=QKt,
        S=S,
        M=M,
        S_masked=S_masked,
        a=a,
        h_t=h_t,
        concat=concat,
        output=output,
    )


# --8<-- [end:decode_step]


@dataclass(frozen=True, kw_only=True)
class DecodeGradients:
    r"""The gradients of one decode step: field ``Z`` is $\partial L/\partial Z$ for a loss
    on $y_t$ alone. ``q``, ``a``, ``S_masked``, ``h_t`` are the step's ``(..., h, 1, ·)``;
    ``K_rep``, ``V_rep`` per query head ``(..., h, t+1, ·)``; ``K``, ``V`` per cached K/V head
    ``(..., g, t+1, ·)`` (before RoPE); ``X`` is ``(..., t+1, d_model)``: every token whose key
    and value are in the cache gets gradient, the new one through its query too."""

    output: Tensor
    W_O: Tensor | None
    concat: Tensor
    h_t: Tensor
    a: Tensor
    S_masked: Tensor
    q: Tensor
    K_rep: Tensor
    V_rep: Tensor
    K: Tensor
    V: Tensor
    W_Q: Tensor
    W_K: Tensor
    W_V: Tensor
    X: Tensor


# --8<-- [start:decode_step_backward]
def decode_step_backward(
    trace: DecodeTrace,
    X: Tensor,
    W_Q: Tensor,
    W_K: Tensor,
    W_V: Tensor,
    W_O: Tensor | None = None,
    *,
    G: Tensor | None = None,
    rope_base: float | None = None,
) -> DecodeGradients:
    r"""The backward of `decode_step`: the chain rule of `attention_ref.reference.backward`
    with one query row, then into the cache:

    $$
    \partial a = \partial h_t V^\top,\quad \partial V = a^\top \partial h_t,\quad
    \partial s = a \odot (\partial a - \operatorname{rowsum}(\partial a \odot a)),\quad
    \partial q_t = \frac{\partial s\, K}{\sqrt{d_k}},\quad
    \partial K = \frac{\partial s^\top q_t}{\sqrt{d_k}}
    $$

    summed over each group of query heads (`attention_ref.reference.gqa.sum_kv_groups`) and
    rotated back with RoPE. ``X`` ``(..., t+1, d_model)`` are the tokens whose keys and values
    the cache holds (``x_t`` last): ``∂W_K = Xᵀ ∂K``, and ``∂X`` has a row for every token.
    ``G`` is $\partial L/\partial y_t$, ``None`` for all ones.
    """
    t, h, g = trace.position, trace.q.shape[-3], trace.k.shape[-3]
    G = torch.ones_like(trace.output) if G is None else G
    dW_O = output_weight_grad(trace.concat, G) if W_O is not None else None
    dconcat = concat_grad(G, W_O)  # (..., 1, d_out) -> (..., 1, h*d_v)
    dh = heads_grad(dconcat, h)  # (..., 1, h*d_v) -> (..., h, 1, d_v)
    da = weights_grad(dh, trace.V_rep)  # ∂h Vᵀ: (..., h, 1, t+1)
    dV_rep = value_grad(trace.a, dh)  # aᵀ ∂h: (..., h, t+1, d_v), every cached value
    dS = softmax_rows_backward(trace.a, da)
    dQKt = scale_backward(dS, trace.q.shape[-1])
    dq = query_grad(dQKt, trace.K_rep)  # (..., h, 1, d_k)
    dK_rep = key_grad(dQKt, trace.q)  # (..., h, t+1, d_k), every cached key
    dK, dV = sum_kv_groups(dK_rep, g), sum_kv_groups(dV_rep, g)  # (..., g, t+1, d)
    if rope_base is not None:  # the rotations' transposes: q at t, the keys at 0 .. t
        dq = rope_backward(dq, torch.tensor([t], dtype=dq.dtype), rope_base)
        dK = rope_backward(dK, None, rope_base)
    x = X[..., t:, :]  # the new token, (..., 1, d_model)
    dX_q = input_grad_path(dq, W_Q)  # (..., 1, d_model): only the new token has a query
    before = torch.zeros_like(X[..., :t, :])  # (..., t, d_model)
    dX = torch.cat((before, dX_q), dim=-2) + input_grad_path(dK, W_K) + input_grad_path(dV, W_V)
    return DecodeGradients(
        output=G,
        W_O=dW_O,
        concat=dconcat,
        h_t=dh,
        a=da,
        S_masked=dS,
        q=dq,
        K_rep=dK_rep,
        V_rep=dV_rep,
        K=dK,
        V=dV,
        W_Q=weight_grad_heads(x, dq),
        W_K=weight_grad_heads(X, dK),
        W_V=weight_grad_heads(X, dV),
        X=dX,
    )


# --8<-- [end:decode_step_backward]
