"""The home page's facts (``docs/index.md``, ``docs/index.pt.md``): the data flow of masked
multi-head attention on the worked example, and the reference's code for it, said in the
page's language.
"""

from __future__ import annotations

#: the page's words per language; ``{…}`` fields are filled from the worked example
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "flow": "These steps on the worked example ({tokens} tokens, d_model = {d_model}, {h} "
        "heads), each with the shape of its result; one column per head.",
        "tail": "The same computation in the reference (its tail, shared by both ways of giving "
        "the weights: matrices per head, or one projection split among the heads):\n",
    },
    "pt": {
        "flow": "Estes passos no exemplo resolvido ({tokens} tokens, d_model = {d_model}, {h} "
        "cabeças), cada um com a forma do seu resultado; uma coluna por cabeça.",
        "tail": "A mesma conta na referência (a sua parte final, comum às duas maneiras de dar os "
        "pesos: matrizes por cabeça ou uma única projeção dividida entre as cabeças):\n",
    },
}


def worked_flow(lang: str) -> str:
    """The data flow of one masked multi-head attention, headᵢ = softmax(Qᵢ Kᵢᵀ / √d_k + M) Vᵢ
    and then Concat(head₁, …, head_h) W_O, each step with the shape its result has on the
    worked example ("Life is awesome"; `attnref_book.figures.flow_figure`, read from the
    tensors), one column per head, with its caption."""
    from attention_ref.worked.life_is_awesome import life_trace
    from attnref_book.figures import figure, flow_figure

    tr = life_trace()
    caption = WORDS[lang]["flow"].format(tokens=len(tr.tokens), d_model=tr.d_model, h=tr.h)
    return figure(flow_figure(tr, lang=lang), caption)


def reference_tail(lang: str) -> str:
    """The reference's code for that computation, from the installed source: the tail of
    `attention_ref.reference.multihead` that both ways of giving the weights (matrices per
    head, one projection split among the heads) share, from Q, K, V on."""
    from attention_ref.reference import multihead
    from attnref_book.pages import source

    return "\n".join([WORDS[lang]["tail"], source(multihead._attend)])
