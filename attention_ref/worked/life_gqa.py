r"""Grouped-query attention on "Life is awesome": 4 query heads sharing 2 K/V heads.

Seed 000's numbers (``X``, its two heads' ``W_Q``, ``W_K``, ``W_V``), rearranged as GQA with
``h = 4`` query heads and ``g = 2`` K/V heads: the K/V heads are seed 000's heads 1 and 2, and
the query heads are seed 000's ``W_Q^{(1)}, W_Q^{(2)}`` for each group:

$$
W_Q^{(1..4)} = (W_{Q,000}^{(1)}, W_{Q,000}^{(2)}, W_{Q,000}^{(1)}, W_{Q,000}^{(2)}),\qquad
W_K^{(1,2)} = (W_{K,000}^{(1)}, W_{K,000}^{(2)}),\qquad \gamma = (1, 1, 2, 2)
$$

so query head 1 is seed 000's head 1 and query head 4 its head 2 (their outputs equal the
homework's), while heads 2 and 3 ask the other head's question of a shared key. ``W_O =
I_8``: the output is the concat. The explanation ends with what the grouping saves, counted by
`attention_ref.reference.params.gqa_params` for this layer.
"""

from __future__ import annotations

from typing import Final

import torch

from attention_ref.reference import gqa as ref_gqa
from attention_ref.reference.params import gqa_params
from attention_ref.render import Explanation, Matrix, Section
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.grouped_backward import with_gqa_backward
from attention_ref.worked.grouped_layout import forward_sections, trace_json
from attention_ref.worked.trace import t

GQA_H: Final = 4
GQA_G: Final = 2
#: query head i -> seed 000's query matrix (0-based): 1, 2, 1, 2 in the document's numbering
GQA_QUERY_FROM: Final = (0, 1, 0, 1)


def gqa_weights() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``W_Q`` ``(4, 4, 2)``, ``W_K``, ``W_V`` ``(2, 4, 2)`` and ``W_O = I_8``."""
    W_Q = t([life.LIFE_W_Q[k] for k in GQA_QUERY_FROM])
    return W_Q, t(life.LIFE_W_K), t(life.LIFE_W_V), torch.eye(GQA_H * 2, dtype=torch.float64)


def gqa_trace() -> ref_gqa.GQATrace:
    """The example through `attention_ref.reference.gqa.grouped_query_attention`."""
    return ref_gqa.grouped_query_attention(t(life.LIFE_X), *gqa_weights(), tokens=life.LIFE_TOKENS)


def same_as_seed_000(tr: ref_gqa.GQATrace) -> list[int]:
    """The query heads (1-based) whose output equals one of seed 000's heads, computed."""
    seed = life.life_trace()
    return [
        i + 1
        for i in range(tr.h)
        if any(torch.allclose(tr.H[i], seed.H[k], atol=1e-12) for k in range(seed.h))
    ]


def savings(tr: ref_gqa.GQATrace) -> tuple[Section, dict[str, int]]:
    """What g = 2 K/V heads keep per token and weigh, against MHA (g = h) and MQA (g = 1)."""
    d_model = int(tr.X.shape[-1])
    counts = {
        kind: gqa_params(d_model, tr.h, g, d_k=tr.d_k, bias=False)
        for kind, g in (("MHA", tr.h), ("GQA", tr.g), ("MQA", 1))
    }
    cache = {kind: 2 * p.g * p.d_k for kind, p in counts.items()}  # numbers per token, per layer
    kv = {kind: p.key_value for kind, p in counts.items()}
    data = {f"cache_{k.lower()}": v for k, v in cache.items()}
    data |= {f"kv_weights_{k.lower()}": v for k, v in kv.items()}
    ratio = cache["MHA"] / cache["GQA"]
    text = (
        f"Per token, this layer's KV cache keeps 2·g·d_k = {cache['GQA']} numbers (g = {tr.g} "
        f"keys and values of width {tr.d_k}); multi-head attention with h = {tr.h} K/V heads "
        f"would keep {cache['MHA']}, multi-query attention {cache['MQA']}: GQA keeps "
        f"{ratio:g} times fewer than MHA. W_K and W_V hold {kv['GQA']} weights, against "
        f"{kv['MHA']} (MHA) and {kv['MQA']} (MQA); W_Q and W_O do not change."
    )
    heads = same_as_seed_000(tr)
    if heads:
        text += (
            " Query heads "
            + " and ".join(str(i) for i in heads)
            + " give seed 000's head outputs exactly: the same query, key and value matrices."
        )
    return Section(title="What the grouping saves", text=text), data


def explain() -> Explanation:
    """GQA, h = 4 query heads, g = 2 K/V heads, on seed 000's numbers."""
    tr = gqa_trace()
    saved, numbers = savings(tr)
    sections = forward_sections(
        tr,
        input_text="The K/V heads are seed 000's heads 1 and 2; the query heads are seed 000's "
        "W_Q⁽¹⁾, W_Q⁽²⁾ for each group.",
        output_note="W_O = I_8, so the output is the concat of the four heads.",
    )
    return Explanation(
        title='Grouped-query attention: "Life is awesome", 4 query heads, 2 K/V heads',
        source="seed 000's X and weights, regrouped (h = 4, g = 2, causal mask, W_O = I_8)",
        sections=[*sections, saved],
        data={**trace_json(tr), "sizes": numbers},
    )


def explain_backward(G: Matrix | None = None) -> Explanation:
    """The example, then its backward: the K/V heads sum their group's gradients."""
    return with_gqa_backward(explain(), gqa_trace(), G)
