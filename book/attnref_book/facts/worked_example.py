"""The facts of the worked-example page (``docs/worked-example.md``,
``docs/worked-example.pt.md``), computed once and said in each language.

Each function is one code block of the page and returns what it prints: the homework's setting
(seed 000's Questão 01, "Life is awesome"), the check against the output matrix it prints, the
data-flow figure, and every step of the example with the mask and the attention weights drawn.
"""

from __future__ import annotations

from typing import Final

import torch

from attention_ref.render import said
from attention_ref.worked.life_is_awesome import DOC_LIFE_OUTPUT, life_trace
from attention_ref.worked.registry import explain_example
from attention_ref.worked.words import TRACE
from attnref_book.figures import attention_heatmaps, figure, flow_figure, mask_figure
from attnref_book.pages import check, example, plain_heading
from attnref_book.worked_pt import words_of

#: the page's words in each language of the book
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "setting": "Tokens ({tokens}), \\(X \\in \\mathbb{{R}}^{{{n} \\times {d_model}}}\\), "
        "\\(h = {h}\\) heads with the given matrices "
        "\\(W_Q^{{(i)}}, W_K^{{(i)}}, W_V^{{(i)}} \\in \\mathbb{{R}}^{{{d_model} \\times "
        "{d_k}}}\\), \\(d_k = d_v = {d_k}\\), causal mask, \\(W_O = I_{{{d_model}}}\\). Row "
        "convention: each token is a row of \\(X\\) and \\(Q^{{(i)}} = X W_Q^{{(i)}}\\).\n",
        "output_label": "the homework's output matrix",
        "output_detail": "largest difference from the printed output: {diff} (it prints 3 "
        "decimals).",
        "flow": "The steps of this example from top to bottom, each with the shape of its "
        "result; one column per head.",
        "mask": "The mask M added to the scores: 0 where a query may look at a key, −∞ where the "
        "key comes after the query.",
        "softmax": "The attention weights A of each head, as computed above: one row per query "
        "token, one column per key token; darker cells are larger weights.",
    },
    "pt": {
        "setting": "Tokens ({tokens}), \\(X \\in \\mathbb{{R}}^{{{n} \\times {d_model}}}\\), "
        "\\(h = {h}\\) cabeças com as matrizes dadas "
        "\\(W_Q^{{(i)}}, W_K^{{(i)}}, W_V^{{(i)}} \\in \\mathbb{{R}}^{{{d_model} \\times "
        "{d_k}}}\\), \\(d_k = d_v = {d_k}\\), máscara causal, \\(W_O = I_{{{d_model}}}\\). "
        "Convenção de linhas: cada token é uma linha de \\(X\\) e "
        "\\(Q^{{(i)}} = X W_Q^{{(i)}}\\).\n",
        "output_label": "a saída impressa na lista",
        "output_detail": "maior diferença em relação à matriz da lista: {diff} (ela imprime 3 "
        "casas decimais).",
        "flow": "Os passos deste exemplo, de cima para baixo, cada um com a forma do seu "
        "resultado; uma coluna por cabeça.",
        "mask": "A máscara M somada aos scores: 0 onde a consulta pode olhar a chave, −∞ onde a "
        "chave vem depois da consulta.",
        "softmax": "Os pesos A de cada cabeça, calculados acima: uma linha por consulta, uma "
        "coluna por chave; quanto mais escura a célula, maior o peso.",
    },
}

#: the worked example's name (`attnref explain -e life-is-awesome`)
EXAMPLE: Final = "life-is-awesome"


def setting(lang: str) -> str:
    """The homework's setting, from the trace: the tokens, ``X ∈ R^{n × d_model}``, ``h``
    heads with ``W_Q^{(i)}, W_K^{(i)}, W_V^{(i)} ∈ R^{d_model × d_k}``, the causal mask and
    ``W_O = I``; row convention, ``Q^{(i)} = X W_Q^{(i)}``."""
    tr = life_trace()
    return WORDS[lang]["setting"].format(
        tokens=", ".join(tr.tokens), n=len(tr.tokens), d_model=tr.d_model, h=tr.h, d_k=tr.d_k
    )


def homework_output(lang: str) -> str:
    """The computed output beside the matrix the homework prints (3 decimals): their largest
    difference is below half a unit of the 3rd decimal, 5e-4."""
    tr = life_trace()
    want = torch.tensor(DOC_LIFE_OUTPUT, dtype=tr.output.dtype)
    diff = float((tr.output - want).abs().max())
    w = WORDS[lang]
    detail = w["output_detail"].format(diff=said(diff, ".1e", lang))
    return check(w["output_label"], diff < 5e-4, detail, lang=lang)


def flow(lang: str) -> str:
    """The example's steps as a data-flow figure, each with the shape of its result, one
    column per head."""
    return figure(flow_figure(life_trace(), lang=lang), WORDS[lang]["flow"])


def steps(lang: str) -> str:
    r"""Every step of the example (`attnref explain -e life-is-awesome`), each matrix with its
    tokens as row labels: projections, scores ``S^{(i)} = Q^{(i)} K^{(i)\top} / \sqrt{d_k}``,
    the causal mask ``S̃^{(i)} = S^{(i)} + M`` (drawn), ``A^{(i)} = softmax(S̃^{(i)})`` (drawn
    as heatmaps), the heads, the concat and ``W_O``."""
    tr = life_trace()
    w, titles = WORDS[lang], TRACE[lang]
    figures = {
        plain_heading(titles["mask"]): figure(
            mask_figure(len(tr.tokens), tr.tokens, lang=lang), w["mask"]
        ),
        plain_heading(titles["softmax"]): figure(
            attention_heatmaps(tr, precision=3, lang=lang), w["softmax"]
        ),
    }
    words = words_of(explain_example(EXAMPLE, lang))
    return example(EXAMPLE, heading=2, labelled=True, after=figures, words=words)
