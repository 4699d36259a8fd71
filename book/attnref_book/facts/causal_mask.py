"""The facts of the causal-mask page (``docs/causal-mask.md``, ``docs/causal-mask.pt.md``):
the mask M of seeds 000 and 001 on four tokens with random scores, inverted dropout, and
seed 001's mask line run as written, in each language of the book.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import torch
from torch import Tensor

from attention_ref import reference as ref
from attention_ref.render import DECIMAL_MARK, thousands
from attention_ref.render.svg import heatmap
from attention_ref.worked.journey_mask import mask_as_written, mask_words
from attnref_book.figures import figure, mask_figure
from attnref_book.pages import check, labelled, prose

#: the tokens of the check, and the seed of their random scores
TOKENS: Final = 4
SEED: Final = 0
#: inverted dropout: the probability of dropping a weight, and the draws averaged
DROP: Final = 0.5
DRAWS: Final = 4000
#: how far the mean of the draws may be from A
DROPOUT_TOLERANCE: Final = 0.05

WORDS: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {
        "mask_caption": (
            "M for n = {n} tokens, as causal_mask builds it: row i is query i, column j is key "
            "j; 0 on and below the diagonal, −∞ above it."
        ),
        "query": "query",
        "key": "key",
        "heat_caption": (
            "The weights A above as a heatmap: row i is query i, column j is key j; darker cells "
            "are larger weights, the cells above the diagonal are 0."
        ),
        "causality": "causality",
        "causality_detail": "every weight above the diagonal is exactly 0.0 (not just small).",
        "distributions": "rows are distributions",
        "distributions_detail": "each row of A sums to 1.",
        "first_row": "the first row is {row}",
        #: a list of numbers: the separator (Portuguese writes decimal commas), and the
        #: brackets of the row the check prints (English prints Python's list)
        "sep": ", ",
        "list": "[{}]",
        "dropout": "inverted dropout keeps the expected weights",
        "dropout_detail": "mean over {draws} draws with p = {p} is within {err:.3f} of A.",
        "meant": "the mask meant is causal_mask",
        "meant_detail": "{nan} NaN entries in the mask as written, none in the mask meant.",
    },
    "pt": {
        "mask_caption": (
            "M para n = {n} tokens, como causal_mask a constrói: a linha i é a consulta i, a "
            "coluna j é a chave j; 0 na diagonal e abaixo dela, −∞ acima."
        ),
        "query": "consulta",
        "key": "chave",
        "heat_caption": (
            "Os pesos A acima como mapa de calor: a linha i é a consulta i, a coluna j é a chave "
            "j; quanto mais escura a célula, maior o peso; as células acima da diagonal são 0."
        ),
        "causality": "causalidade",
        "causality_detail": "todo peso acima da diagonal é exatamente 0 (não apenas pequeno).",
        "distributions": "as linhas são distribuições",
        "distributions_detail": "cada linha de A soma 1.",
        "first_row": "a primeira linha é {row}",
        "sep": "; ",
        "list": "({})",
        "dropout": "o dropout invertido mantém os pesos esperados",
        "dropout_detail": (
            "a média de {draws} sorteios com p = {p} fica a menos de {err:.3f} de A."
        ),
        "meant": "a máscara pretendida é causal_mask",
        "meant_detail": "{nan} entradas NaN na máscara como escrita, nenhuma na pretendida.",
    },
}


def _scores() -> Tensor:
    """The check's scores: `TOKENS` × `TOKENS` standard normal numbers, seed `SEED`."""
    g = torch.Generator().manual_seed(SEED)
    return torch.randn(TOKENS, TOKENS, generator=g, dtype=torch.float64)


def _rows() -> list[str]:
    """Each row's label: the number of its query."""
    return [str(i + 1) for i in range(TOKENS)]


def the_mask(lang: str, n: int = TOKENS) -> str:
    """The mask M_ij = 0 for j ≤ i and −∞ for j > i, as `attention_ref.reference.causal_mask`
    builds it for ``n`` tokens, as a figure: row i is query i, column j is key j."""
    return figure(mask_figure(n, lang=lang), WORDS[lang]["mask_caption"].format(n=n))


def masked_weights(lang: str) -> str:
    """M, S̃ = S + M and A = softmax(S̃) for four tokens with random scores, each row named by
    its query, and A as a heatmap; three checks: every weight above the diagonal is exactly 0
    (e^−∞ = 0), each row of A sums to 1, and the first row is exactly (1, 0, 0, 0) (the first
    token sees only itself)."""
    w = WORDS[lang]
    S = _scores()
    M = ref.causal_mask(TOKENS)
    A = ref.softmax_rows(ref.add_mask(S, M))
    rows = _rows()
    first, expected = A[0].tolist(), [1.0] + [0.0] * (TOKENS - 1)
    row = "(" + w["sep"].join(f"{v:g}" for v in expected) + ")"
    out = [
        labelled("M", M, rows, 0, lang=lang),
        labelled(r"\tilde S = S + M", ref.add_mask(S, M), rows, 3, lang=lang),
        labelled(r"A = \operatorname{softmax}(\tilde S)", A, rows, 3, lang=lang),
        figure(
            heatmap(
                A.tolist(),
                rows,
                rows,
                title="A = softmax(S + M)",
                precision=3,
                decimal=DECIMAL_MARK[lang],
                row_title=w["query"],
                col_title=w["key"],
            ),
            w["heat_caption"],
        ),
        check(w["causality"], bool((A.triu(1) == 0).all()), w["causality_detail"], lang=lang),
        "",
        check(
            w["distributions"],
            bool(torch.allclose(A.sum(-1), torch.ones(TOKENS, dtype=A.dtype))),
            w["distributions_detail"],
            lang=lang,
        ),
        "",
        check(
            w["first_row"].format(row=row),
            first == expected,
            prose("A[0] = " + w["list"].format(w["sep"].join(repr(v) for v in first)) + ".", lang),
            lang=lang,
        ),
    ]
    return "\n".join(out)


def dropout_mean(lang: str) -> str:
    """Inverted dropout keeps each weight with probability 1 − p and multiplies it by
    1/(1 − p), so E[dropout_p(A)] = A: the mean of `DRAWS` draws with p = `DROP`, each row
    named by its query, and the check that it is within `DROPOUT_TOLERANCE` of A."""
    w = WORDS[lang]
    A = ref.softmax_rows(ref.add_mask(_scores(), ref.causal_mask(TOKENS)))
    keep = torch.stack(
        [ref.attention_dropout(A, DROP, torch.Generator().manual_seed(s)) for s in range(DRAWS)]
    ).mean(0)
    mean = rf"\mathbb{{E}}[\operatorname{{dropout}}_{{{DROP}}}(A)]"
    err = float((keep - A).abs().max())
    detail = w["dropout_detail"].format(draws=thousands(DRAWS, lang), p=DROP, err=err)
    out = [
        labelled(mean, keep, _rows(), 3, lang=lang, relation="≈"),
        check(w["dropout"], err < DROPOUT_TOLERANCE, prose(detail, lang), lang=lang),
    ]
    return "\n".join(out)


def seed_mask_line(lang: str) -> str:
    """Seed 001's mask line, ``torch.triu(torch.ones(n, n), diagonal=1) * float('-inf')``, run
    as written on the scores above: 0 · (−∞) is NaN, so the mask and the weights fill with NaN
    (`attention_ref.worked.journey_mask.mask_words`); and the check that the mask meant is
    `attention_ref.reference.causal_mask`."""
    w = WORDS[lang]
    m = mask_as_written(_scores())
    out = [
        mask_words(m, lang),
        "",
        check(
            w["meant"],
            bool(torch.equal(m["fixed"], ref.causal_mask(TOKENS).to(m["fixed"].dtype))),
            w["meant_detail"].format(nan=m["nan_mask"]),
            lang=lang,
        ),
    ]
    return "\n".join(out)
