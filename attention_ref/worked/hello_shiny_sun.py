r"""Seeds 001/004: plain dot-product attention on "Hello shiny sun!" for the query "shiny".

No trainable weights and no scaling yet: ``\omega_j = x_{shiny} \cdot x_j``,
``\alpha = \operatorname{softmax}(\omega)``, ``z = \sum_j \alpha_j x_j``. The document works
with 4 decimals; its figures for ``e^{\omega_j}`` and ``\sum_l e^{\omega_l}`` are missing, so
the explanation computes them. Its printed context vector is the right sum of its printed
products ``\alpha_j x_j``, but those products are neither exact nor the products of rounded
weights: a product ``p`` printed to 4 decimals pins its weight to
``[(p - 0.00005)/x, (p + 0.00005)/x]``, and for "shiny" (and "sun") two of those intervals do
not overlap, so no single weight gives both products. They are arithmetic slips.
"""

from __future__ import annotations

from typing import Final, TypedDict

from torch import Tensor

from attention_ref import reference as ref
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section, said
from attention_ref.worked.trace import L, column_names, t, unscaled_input_json
from attention_ref.worked.words_documents import HELLO

HELLO_TOKENS: Final = ("Hello", "shiny", "sun")
HELLO_X: Final[Matrix] = [
    [0.34, 0.22, 0.54],
    [0.53, 0.34, 0.98],
    [0.29, 0.54, 0.93],
]
HELLO_QUERY: Final = "shiny"
#: The document's weighted embeddings: one row per token (Hello, shiny, sun), as printed in
#: "context vector=[0.0779+0.2156+0.1057, 0.0504+0.1382+0.1972, 0.1237+0.3983+0.3390]".
DOC_HELLO_WEIGHTED: Final[Matrix] = [
    [0.0779, 0.0504, 0.1237],
    [0.2156, 0.1382, 0.3983],
    [0.1057, 0.1972, 0.3390],
]
DOC_HELLO_CONTEXT: Final[list[float]] = [0.3992, 0.3858, 0.8610]
#: Decimals the document works with in its intermediate steps.
DOC_HELLO_DECIMALS: Final = 4


class HelloNumbers(TypedDict):
    """`hello_numbers`: the exact values, the document's, and what its rounding implies."""

    scores: Tensor  # ω, (3,)
    exp_scores: Tensor  # e^ω, (3,)
    exp_sum: Tensor  # Σ_l e^ω_l, ()
    weights: Tensor  # α, (3,)
    weighted: Tensor  # row j = α_j x_j, (3, 3)
    context: Tensor  # z, (3,)
    doc_weighted: Tensor
    doc_context: Tensor
    doc_context_sum: Tensor
    implied_weights: Tensor  # the document's α_j x_j / x_j, entry by entry, (3, 3)
    implied_low: Tensor  # (p − ½·10⁻⁴) / x_j: the lowest weight that prints p, (3, 3)
    implied_high: Tensor  # (p + ½·10⁻⁴) / x_j: the highest, (3, 3)
    difference: Tensor  # document's z − exact z, (3,)


def hello_numbers() -> HelloNumbers:
    r"""Dot-product self-attention for the query "shiny", exactly and as the document has it.

    ``omega = x_shiny X^T`` (no weights, no scaling), ``alpha = softmax(omega)`` with its
    steps ``e^omega`` and ``sum_l e^omega_l``, ``z = alpha X``. A product ``p`` the document
    prints to 4 decimals comes from a weight in
    ``[(p - 0.5e-4) / X[j][d], (p + 0.5e-4) / X[j][d]]`` (``implied_low``, ``implied_high``);
    ``implied_weights`` is the middle, ``p / X[j][d]``.
    """
    X = t(HELLO_X)
    q = X[HELLO_TOKENS.index(HELLO_QUERY)].unsqueeze(0)  # (3,) -> (1, 3)
    omega = ref.scores(q, X)  # (1, 3) @ (3, 3)ᵀ -> (1, 3): no 1/√d scaling in this first example
    alpha = ref.softmax_rows(omega)
    e = omega[0].exp()  # e^ω_j, the document's "exponentials"
    weighted = alpha.T * X  # row j = alpha_j x_j
    z = ref.weighted_sum(alpha, X)  # (1, 3) @ (3, 3) -> (1, 3)
    doc_weighted = t(DOC_HELLO_WEIGHTED)
    implied = doc_weighted / X  # the weight each printed product implies
    half = 0.5 * 10.0**-DOC_HELLO_DECIMALS  # a printed p stands for [p − half, p + half]
    doc_z = t(DOC_HELLO_CONTEXT)
    return {
        "scores": omega[0],
        "exp_scores": e,
        "exp_sum": e.sum(),
        "weights": alpha[0],
        "weighted": weighted,
        "context": z[0],
        "doc_weighted": doc_weighted,
        "doc_context": doc_z,
        "doc_context_sum": doc_weighted.sum(dim=0),
        "implied_weights": implied,
        "implied_low": (doc_weighted - half) / X,
        "implied_high": (doc_weighted + half) / X,
        "difference": doc_z - z[0],
    }


def agree_at_decimals(a: Tensor, b: Tensor, decimals: int = DOC_HELLO_DECIMALS) -> bool:
    """``|a - b| <= ½·10^-decimals`` everywhere: what "equal when printed to 4 decimals" can mean.

    The document's vector and the exact one differ by up to 3.8e-4, so this tells them apart;
    a looser tolerance such as 1e-3 would call them equal.
    """
    return float((a - b).abs().max()) <= 0.5 * 10.0**-decimals + 1e-12


class Slip(TypedDict):
    """Two printed products of one token that no single weight can give."""

    token: str
    first: tuple[float, float, float, float]  # (p, x, weight from, weight to)
    second: tuple[float, float, float, float]


def slips(r: HelloNumbers) -> list[Slip]:
    """Tokens whose implied-weight intervals have an empty intersection, with the two witnesses.

    For token ``j`` the intersection of ``[low_jd, high_jd]`` over the dimensions ``d`` is
    ``[max_d low_jd, min_d high_jd]``; it is empty when the largest lower end exceeds the
    smallest upper end, and those two intervals are the pair that cannot share a weight.
    """
    out: list[Slip] = []
    X, doc = t(HELLO_X), r["doc_weighted"]
    for j, name in enumerate(HELLO_TOKENS):
        lo, hi = r["implied_low"][j], r["implied_high"][j]
        a, b = int(lo.argmax()), int(hi.argmin())
        if lo[a] > hi[b]:
            out.append(
                {
                    "token": name,
                    "first": (float(doc[j, a]), float(X[j, a]), float(lo[a]), float(hi[a])),
                    "second": (float(doc[j, b]), float(X[j, b]), float(lo[b]), float(hi[b])),
                }
            )
    return out


def document_note(r: HelloNumbers, lang: str = "en") -> str:
    """What the document's context vector is and is not, every clause computed here, in the
    words of ``lang`` (`attention_ref.worked.words_documents.HELLO`).

    The sum of its printed products (checked); the exact vector rounded or not (checked at
    half a unit of the 4th decimal); and, per token, whether one weight can give all three
    printed products (`slips`).
    """
    w, p = HELLO[lang], DOC_HELLO_DECIMALS

    def vec(v: Tensor) -> str:
        return w["sep"].join(said(x, f".{p}f", lang) for x in v.tolist())

    doc, exact = r["doc_context"], r["context"]
    sum_ok = agree_at_decimals(r["doc_context_sum"], doc, p)
    parts = [w["sum_is" if sum_ok else "sum_is_not"].format(doc=vec(doc))]
    if agree_at_decimals(doc, exact, p):
        parts.append(w["rounded"].format(p=p))
        return " ".join(parts)
    diff = said(float((doc - exact).abs().max()), f".{p}f", lang)
    parts.append(w["not_rounded"].format(p=p, exact=vec(exact), diff=diff))
    found = slips(r)
    if not found:
        parts.append(w["one_weight"])
        return " ".join(parts)
    q = p + 1  # interval ends need one more decimal than the products

    def interval(v: tuple[float, float, float, float]) -> str:
        prod, x, lo, hi = (said(v[0], f".{p}f", lang), said(v[1], ".2f", lang), *v[2:])
        return w["interval"].format(
            prod=prod, x=x, lo=said(lo, f".{q}f", lang), hi=said(hi, f".{q}f", lang)
        )

    per_token = "; ".join(
        w["for_token"].format(
            token=repr(s["token"]), first=interval(s["first"]), second=interval(s["second"])
        )
        for s in found
    )
    parts.append(
        w["slips"].format(
            p=p,
            half=said(0.5 * 10.0**-p, f".{q}f", lang),
            per_token=per_token[:1].upper() + per_token[1:],
            names=w["and"].join(repr(s["token"]) for s in found),
        )
    )
    return " ".join(parts)


def hello_sections(r: HelloNumbers, lang: str = "en") -> list[Section]:
    """Embeddings, the three steps, then the document's numbers beside the exact ones."""
    w, tok = HELLO[lang], list(HELLO_TOKENS)
    # columns are embedding dimensions: "x1" would read as the token x_1
    x_cols, z_cols = column_names("dim ", 3), column_names("z", 3)
    return [
        Section(
            title=w["embeddings"],
            text=w["embeddings_text"],
            items=[Mat(symbol="X", value=L(t(HELLO_X)), rows=tok, cols=x_cols)],
        ),
        Section(
            title=w["step1"],
            items=[
                Mat(
                    symbol="\\omega",
                    value=L(r["scores"]),
                    formula="x_{shiny} X^\\top",
                    rows=["shiny"],
                    cols=tok,
                )
            ],
        ),
        Section(
            title=w["step2"],
            text=w["step2_text"],
            items=[
                Mat(
                    symbol="e^{\\omega}",
                    value=L(r["exp_scores"]),
                    formula="e^{\\omega_j}",
                    rows=["shiny"],
                    cols=tok,
                ),
                Mat(
                    symbol="\\Sigma",
                    value=[[float(r["exp_sum"])]],
                    formula="\\sum_l e^{\\omega_l}",
                    rows=["shiny"],
                    cols=["Σ"],
                ),
                Mat(
                    symbol="\\alpha",
                    value=L(r["weights"]),
                    formula="e^{\\omega_j} / \\Sigma",
                    rows=["shiny"],
                    cols=tok,
                ),
            ],
        ),
        Section(
            title=w["step3"],
            items=[
                Mat(
                    symbol="\\alpha_j x_j",
                    value=L(r["weighted"]),
                    formula_text=w["weighted"],
                    rows=tok,
                    cols=x_cols,
                ),
                Mat(
                    symbol="z",
                    value=L(r["context"]),
                    formula="\\sum_j \\alpha_j x_j",
                    formula_text=w["context"],
                    rows=["shiny"],
                    cols=z_cols,
                ),
            ],
        ),
        Section(
            title=w["beside"],
            text=document_note(r, lang),
            items=[
                Mat(
                    symbol="\\text{doc } \\alpha_j x_j",
                    text=w["doc_weighted"],
                    value=L(r["doc_weighted"]),
                    rows=tok,
                    cols=x_cols,
                ),
                Mat(
                    symbol="\\text{implied } \\alpha_j",
                    value=L(r["implied_weights"]),
                    formula_text=w["implied"],
                    rows=tok,
                    cols=x_cols,
                ),
                Mat(
                    symbol="z_{doc}",
                    text=w["doc_z"],
                    value=L(r["doc_context"]),
                    rows=["shiny"],
                    cols=z_cols,
                ),
                Mat(
                    symbol="z",
                    text=w["exact_z"],
                    value=L(r["context"]),
                    rows=["shiny"],
                    cols=z_cols,
                ),
                Mat(
                    symbol="z_{doc} - z",
                    text=w["difference"],
                    value=L(r["difference"]),
                    rows=["shiny"],
                    cols=z_cols,
                ),
            ],
        ),
    ]


def hello_json(r: HelloNumbers) -> dict[str, JSONValue]:
    """The payload of ``--format json``: exact values, then the document's."""
    return {
        "tokens": list(HELLO_TOKENS),
        "query": HELLO_QUERY,
        "X": L(t(HELLO_X)),
        "scores": r["scores"].tolist(),
        "exp_scores": r["exp_scores"].tolist(),
        "exp_sum": float(r["exp_sum"]),
        "weights": r["weights"].tolist(),
        "weighted": L(r["weighted"]),
        "context": r["context"].tolist(),
        "document": {
            "weighted": L(r["doc_weighted"]),
            "context": r["doc_context"].tolist(),
            "implied_weights": L(r["implied_weights"]),
            "implied_weights_low": L(r["implied_low"]),
            "implied_weights_high": L(r["implied_high"]),
            "slips": [s["token"] for s in slips(r)],
        },
        "difference": r["difference"].tolist(),
    }


def explain(lang: str = "en") -> Explanation:
    """Seeds 001/004: plain dot-product attention for the query "shiny", with the slips note,
    in the words of ``lang`` (`attention_ref.worked.words_documents.HELLO`)."""
    r, w = hello_numbers(), HELLO[lang]
    return Explanation(
        title=w["title"],
        source=w["source"],
        sections=hello_sections(r, lang),
        # what --input needs to give this again (all rows; the "shiny" row is z)
        data={**hello_json(r), "input": unscaled_input_json(t(HELLO_X), HELLO_TOKENS)},
        precision=DOC_HELLO_DECIMALS,
        lang=lang,
    )
