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

This module holds the two formulas of its own, `repeat_kv` and its backward `sum_kv_groups`.
Grouped-query attention is then the one composition of masked multi-head attention,
`attention_ref.reference.masked_multihead_attention`, given ``W_K``, ``W_V`` of ``g`` heads
(with the mask of `attention_ref.reference.windows` and RoPE, `attention_ref.reference.rope`,
if asked); its backward is `attention_ref.reference.attention_backward`, and its trace the one
`attention_ref.reference.AttentionTrace`.

Book page: ``docs/gqa.md`` "Grouped-query and multi-query attention".
"""

from __future__ import annotations

from torch import Tensor

from attention_ref.reference.spec import kv_group

__all__ = ["kv_group", "repeat_kv", "sum_kv_groups"]


# --8<-- [start:repeat_kv]
def repeat_kv(K: Tensor, h: int) -> Tensor:
    r"""Each K/V head repeated for the $r = h/g$ query heads of its group:
    $K^{(i)}_{\text{rep}} = K^{(\gamma(i))}$.

    ``K``: ``(..., g, n, d)``; returns ``(..., h, n, d)``, head ``i`` a copy of K/V head
    ``i // r`` (K/V head 0 first ``r`` times, then K/V head 1, …). With ``g = h`` (multi-head
    attention) every head is its own group: ``K`` itself.
    """
    g = K.shape[-3]
    if g < 1 or h % g != 0:
        raise ValueError(f"g={g} K/V heads must divide h={h} query heads")
    if g == h:
        return K
    return K.repeat_interleave(h // g, dim=-3)  # (..., g, n, d) -> (..., h, n, d)


def sum_kv_groups(dK_rep: Tensor, g: int) -> Tensor:
    r"""The backward of `repeat_kv`: $\partial K^{(j)} = \sum_{i: \gamma(i) = j}
    \partial K^{(i)}_{\text{rep}}$, the gradients of a group's query heads added up.

    ``dK_rep``: ``(..., h, n, d)``; returns ``(..., g, n, d)``.
    """
    *lead, h, n, d = dK_rep.shape
    if g < 1 or h % g != 0:
        raise ValueError(f"g={g} K/V heads must divide h={h} query heads")
    if g == h:
        return dK_rep
    grouped = dK_rep.reshape(*lead, g, h // g, n, d)  # (..., h, n, d) -> (..., g, r, n, d)
    return grouped.sum(dim=-3)  # Σ over the r heads of each group: -> (..., g, n, d)


# --8<-- [end:repeat_kv]
