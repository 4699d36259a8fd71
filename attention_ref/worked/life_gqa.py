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

from attention_ref import reference as ref
from attention_ref.reference.params import gqa_params
from attention_ref.render import Explanation, Matrix, Section, said
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.grouped_backward import with_gqa_backward
from attention_ref.worked.layout import forward_sections
from attention_ref.worked.trace import t, trace_json
from attention_ref.worked.words import listed
from attention_ref.worked.words_grouped import GQA

GQA_H: Final = 4
GQA_G: Final = 2
#: query head i -> seed 000's query matrix (0-based): 1, 2, 1, 2 in the document's numbering
GQA_QUERY_FROM: Final = (0, 1, 0, 1)


def gqa_weights() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``W_Q`` ``(4, 4, 2)``, ``W_K``, ``W_V`` ``(2, 4, 2)`` and ``W_O = I_8``."""
    W_Q = t([life.LIFE_W_Q[k] for k in GQA_QUERY_FROM])
    return W_Q, t(life.LIFE_W_K), t(life.LIFE_W_V), torch.eye(GQA_H * 2, dtype=torch.float64)


def gqa_trace() -> ref.AttentionTrace:
    """The example through `attention_ref.reference.masked_multihead_attention`, ``h = 4``,
    ``g = 2``."""
    return ref.masked_multihead_attention(t(life.LIFE_X), *gqa_weights(), tokens=life.LIFE_TOKENS)


def same_as_seed_000(tr: ref.AttentionTrace) -> list[int]:
    """The query heads (1-based) whose output equals one of seed 000's heads, computed."""
    seed = life.life_trace()
    return [
        i + 1
        for i in range(tr.h)
        if any(torch.allclose(tr.H[i], seed.H[k], atol=1e-12) for k in range(seed.h))
    ]


def savings(tr: ref.AttentionTrace, lang: str = "en") -> tuple[Section, dict[str, int]]:
    """What g = 2 K/V heads keep per token and weigh, against MHA (g = h) and MQA (g = 1), in
    ``lang``'s words (`attention_ref.worked.words_grouped.GQA`)."""
    say = GQA[lang]
    d_model = int(tr.X.shape[-1])
    counts = {
        kind: gqa_params(d_model, tr.h, g, d_k=tr.d_k, bias=False)
        for kind, g in (("MHA", tr.h), ("GQA", tr.g), ("MQA", 1))
    }
    cache = {kind: 2 * p.g * p.d_k for kind, p in counts.items()}  # numbers per token, per layer
    kv = {kind: p.key_value for kind, p in counts.items()}
    data = {f"cache_{k.lower()}": v for k, v in cache.items()}
    data |= {f"kv_weights_{k.lower()}": v for k, v in kv.items()}
    text = say["saves_text"].format(
        **{k.lower(): v for k, v in cache.items()},
        **{f"kv_{k.lower()}": v for k, v in kv.items()},
        g=tr.g,
        h=tr.h,
        d_k=tr.d_k,
        ratio=said(cache["MHA"] / cache["GQA"], "g", lang),
    )
    heads = same_as_seed_000(tr)
    if heads:
        text += say["same_heads"].format(heads=listed([str(i) for i in heads], say["and"]))
    return Section(title=say["saves"], text=text), data


def explain(lang: str = "en") -> Explanation:
    """GQA, h = 4 query heads, g = 2 K/V heads, on seed 000's numbers, in ``lang``'s words."""
    say = GQA[lang]
    tr = gqa_trace()
    saved, numbers = savings(tr, lang)
    d_out = int(tr.output.shape[-1])
    sections = forward_sections(
        tr,
        input_text=say["input_text"],
        output_note=say["output_note"].format(d_out=d_out),
        lang=lang,
    )
    return Explanation(
        title=say["title"].format(h=tr.h, g=tr.g),
        source=say["source"].format(h=tr.h, g=tr.g, d_out=d_out),
        sections=[*sections, saved],
        data={**trace_json(tr), "sizes": numbers},
        lang=lang,
    )


def explain_backward(G: Matrix | None = None, lang: str = "en") -> Explanation:
    """The example, then its backward: the K/V heads sum their group's gradients."""
    return with_gqa_backward(explain(lang=lang), gqa_trace(), G, lang)
