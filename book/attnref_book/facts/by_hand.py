"""The facts of the attention-by-hand page (``docs/by-hand.md``, ``docs/by-hand.pt.md``):
"Hello shiny sun!" (seeds 001 and 004), dot-product attention for the query "shiny", exactly
and as the document prints it, in each language of the book.

Also the two small writers of numbers in a sentence that the other facts modules use:
`prose` and `math_said`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

import torch

from attention_ref.render import DECIMAL_MARK, said
from attention_ref.render.svg import heatmap
from attention_ref.worked.hello_shiny_sun import (
    DOC_HELLO_DECIMALS,
    HELLO_QUERY,
    HELLO_TOKENS,
    HELLO_X,
    agree_at_decimals,
    document_note,
    hello_numbers,
    slips,
)
from attention_ref.worked.words_documents import HELLO
from attnref_book.figures import figure
from attnref_book.pages import check, labelled, math_said, num, prose, table

WORDS: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {
        "missing": (
            "The document names the exponentials and their sum, but its figures for them are "
            "missing; the table fills them in.\n"
        ),
        "weight": "weight α = e^ω / Σ",
        "heat_title": "α for the query “{query}”",
        "query": "query",
        "key": "key",
        "caption": (
            "The weights α of the table as one row of cells: the query is the row, each token a "
            "column; darker cells are larger weights."
        ),
        "distribution": "the weights are a probability distribution",
        "distribution_detail": "Σα = {total:.12f}, every α > 0.",
        "not_rounded": "the document's context vector is not the exact one rounded",
        "not_rounded_detail": (
            "document {doc}, exact rounded to {places} decimals {rounded}: the document's "
            "differs from the exact vector by up to {diff:.5f}, more than the half unit of the "
            "{places}th decimal ({half}) that rounding can explain."
        ),
        "no_weight": "no weight gives both of shiny's printed products",
        "slip": "{token}: {first} and {second} do not overlap",
    },
    "pt": {
        "missing": (
            "O documento cita as exponenciais e a sua soma, mas os seus valores faltam; a tabela "
            "os completa.\n"
        ),
        "weight": "peso α = e^ω / Σ",
        "heat_title": "α para a consulta “{query}”",
        "query": "consulta",
        "key": "chave",
        "caption": (
            "Os pesos α da tabela como uma linha de células: a consulta é a linha, cada token "
            "uma coluna; quanto mais escura a célula, maior o peso."
        ),
        "distribution": "os pesos são uma distribuição de probabilidade",
        "distribution_detail": "Σα = {total:.12f}; todo α > 0.",
        "not_rounded": "o vetor de contexto do documento não é o exato arredondado",
        "not_rounded_detail": (
            "documento {doc}, exato arredondado a {places} casas decimais {rounded}: o do "
            "documento difere do vetor exato em até {diff:.5f}, mais do que a meia unidade da "
            "{places}ª casa decimal ({half}) que o arredondamento pode explicar."
        ),
        "no_weight": "nenhum peso dá os dois produtos impressos de shiny",
        "slip": "{token}: {first} e {second} não se sobrepõem",
    },
}


def vector(values: Iterable[float], lang: str, spec: str | None = None) -> str:
    """A vector inside a sentence, ``[0.0779, 0.0504, 0.1237]`` (``[0,0779; 0,0504; 0,1237]``
    in Portuguese): `attnref_book.pages.num` or the format ``spec``, in ``lang``'s decimal
    mark, separated as ``lang`` separates the numbers of a list."""
    cells = (prose(num(v), lang) if spec is None else said(v, spec, lang) for v in values)
    return "[" + HELLO[lang]["sep"].join(cells) + "]"


def shiny_attention(lang: str) -> str:
    """The query "shiny" by hand, every row of a matrix named by its token: X, the table of
    scores ω_j = x_q · x_j, exponentials e^ω, weights α_j = e^ω_j / Σ_l e^ω_l and products
    α_j x_j (the document names the exponentials and their sum but leaves out their figures),
    the sum Σ, the context vector z = Σ_j α_j x_j and α as a heatmap. Two checks: the weights
    are a distribution, and the document's context vector is not the exact one rounded to
    its 4 decimals (it differs by more than the half unit that rounding can explain)."""
    w, r = WORDS[lang], hello_numbers()
    places = DOC_HELLO_DECIMALS
    out = [
        labelled("X", HELLO_X, list(HELLO_TOKENS), 2, lang=lang),
        w["missing"],
        table(
            ["token", "score ω", "e^ω", w["weight"], "α · x"],
            [
                [
                    t,
                    prose(num(r["scores"][j]), lang),
                    prose(num(r["exp_scores"][j]), lang),
                    prose(num(r["weights"][j]), lang),
                    vector(r["weighted"][j].tolist(), lang),
                ]
                for j, t in enumerate(HELLO_TOKENS)
            ],
        ),
        "",
        math_said(f"\\(\\Sigma = \\sum_l e^{{\\omega_l}} = {num(r['exp_sum'])}\\).\n", lang),
        labelled("z", [r["context"].tolist()], [HELLO_QUERY], 4, lang=lang),
        figure(
            heatmap(
                [r["weights"].tolist()],
                [HELLO_QUERY],
                list(HELLO_TOKENS),
                title=w["heat_title"].format(query=HELLO_QUERY),
                precision=4,
                decimal=DECIMAL_MARK[lang],
                row_title=w["query"],
                col_title=w["key"],
            ),
            w["caption"],
        ),
    ]
    weights = r["weights"]
    out.append(
        check(
            w["distribution"],
            abs(float(weights.sum()) - 1) < 1e-12 and bool((weights > 0).all()),
            prose(w["distribution_detail"].format(total=float(weights.sum())), lang),
            lang=lang,
        )
    )
    out.append("")
    doc, exact = r["doc_context"], r["context"]
    rounded = torch.round(exact, decimals=places)
    detail = w["not_rounded_detail"].format(
        doc=vector(doc.tolist(), lang),
        rounded=vector(rounded.tolist(), lang),
        places=places,
        diff=float((doc - exact).abs().max()),
        half=f"{0.5 * 10.0**-places:.{places + 1}f}",
    )
    out.append(
        check(
            w["not_rounded"],
            not agree_at_decimals(doc, exact) and agree_at_decimals(rounded, exact),
            prose(detail, lang),
            lang=lang,
        )
    )
    return "\n".join(out)


def document_slips(lang: str) -> str:
    """Why the document's vector differs in the 4th decimal: `document_note` (what its vector
    is and is not), and the check that no single weight gives both of shiny's printed
    products: a product p printed to 4 decimals comes from a weight in
    [(p − ½·10⁻⁴) / x, (p + ½·10⁻⁴) / x], and two of shiny's intervals do not overlap."""
    w, r = WORDS[lang], hello_numbers()
    found = slips(r)
    detail = "; ".join(
        w["slip"].format(
            token=s["token"],
            first=vector(s["first"][2:], lang, ".5f"),
            second=vector(s["second"][2:], lang, ".5f"),
        )
        for s in found
    )
    out = [
        document_note(r, lang) + "\n",
        check(
            w["no_weight"],
            any(s["token"] == "shiny" for s in found),
            detail + ".",
            lang=lang,
        ),
    ]
    return "\n".join(out)
