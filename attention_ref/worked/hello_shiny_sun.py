r"""Seeds 001/004: plain dot-product attention on "Hello shiny sun!" for the query "shiny".

No trainable weights and no scaling yet: ``\omega_j = x_{shiny} \cdot x_j``,
``\alpha = \operatorname{softmax}(\omega)``, ``z = \sum_j \alpha_j x_j``. The document works
with 4 decimals and prints a context vector computed from rounded weights; the explanation
shows the exact numbers beside the document's and says where they drift.
"""

from __future__ import annotations

from typing import Final, TypedDict

from torch import Tensor

from attention_ref import reference as ref
from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section
from attention_ref.worked.trace import L, column_names, t

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
    weights: Tensor  # α, (3,)
    weighted: Tensor  # row j = α_j x_j, (3, 3)
    context: Tensor  # z, (3,)
    doc_weighted: Tensor
    doc_context: Tensor
    doc_context_sum: Tensor
    implied_weights: Tensor  # the document's α_j x_j / x_j, entry by entry, (3, 3)
    difference: Tensor  # document's z − exact z, (3,)


def hello_numbers() -> HelloNumbers:
    """Dot-product self-attention for the query "shiny", exactly and as the document has it.

    ``omega = x_shiny X^T`` (no weights, no scaling), ``alpha = softmax(omega)``,
    ``z = alpha X``. The document's weighted embeddings imply, entry by entry, the weight
    ``doc_weighted[j][d] / X[j][d]``; comparing that with the exact ``alpha_j`` shows where the
    document's rounded numbers drift.
    """
    X = t(HELLO_X)
    q = X[HELLO_TOKENS.index(HELLO_QUERY)].unsqueeze(0)  # (3,) -> (1, 3)
    omega = ref.scores(q, X)  # (1, 3) @ (3, 3)ᵀ -> (1, 3): no 1/√d scaling in this first example
    alpha = ref.softmax_rows(omega)
    weighted = alpha.T * X  # row j = alpha_j x_j
    z = ref.weighted_sum(alpha, X)  # (1, 3) @ (3, 3) -> (1, 3)
    doc_weighted = t(DOC_HELLO_WEIGHTED)
    implied = doc_weighted / X  # the weight each printed product implies
    doc_z = t(DOC_HELLO_CONTEXT)
    return {
        "scores": omega[0],
        "weights": alpha[0],
        "weighted": weighted,
        "context": z[0],
        "doc_weighted": doc_weighted,
        "doc_context": doc_z,
        "doc_context_sum": doc_weighted.sum(dim=0),
        "implied_weights": implied,
        "difference": doc_z - z[0],
    }


def rounding_note(r: HelloNumbers) -> str:
    """Why the document's context vector differs from the exact one: every claim computed here.

    Names the tokens whose implied weights differ from the exact softmax at the document's
    decimals (and says so when none does), and the largest difference in the context vector.
    """
    tok, p = HELLO_TOKENS, DOC_HELLO_DECIMALS
    imp = r["implied_weights"]
    w = r["weights"].tolist()
    ranges = "; ".join(
        f"{name}: exact {w[j]:.{p}f}, implied {imp[j].min():.{p}f}–{imp[j].max():.{p}f}"
        for j, name in enumerate(tok)
    )
    diff = max(abs(d) for d in r["difference"].tolist())
    drift = [
        name
        for j, name in enumerate(tok)
        if any(round(v, p) != round(w[j], p) for v in imp[j].tolist())
    ]
    verdict = (
        f"The implied weights of {' and '.join(repr(d) for d in drift)} differ from the exact "
        f"softmax at {p} decimals and are not even one number per token, so the error is in the "
        f"rounded intermediate values, not in the method; it reaches {diff:.{p}f} in the context "
        f"vector."
        if drift
        else f"The implied weights agree with the exact softmax at {p} decimals; the context "
        f"vectors differ by at most {diff:.{p}f}."
    )
    return (
        f"The document's vector is the sum of its printed weighted embeddings (that sum is right: "
        f"{', '.join(f'{v:.{p}f}' for v in r['doc_context_sum'].tolist())}). Those products were "
        f"computed from rounded attention weights, not from the exact softmax: dividing each "
        f"printed "
        f"product by its embedding entry gives the weight it implies ({ranges}). " + verdict
    )


def hello_sections(r: HelloNumbers) -> list[Section]:
    """Embeddings, the three steps, then the document's numbers beside the exact ones."""
    tok = list(HELLO_TOKENS)
    x_cols, z_cols = column_names("x", 3), column_names("z", 3)
    return [
        Section(
            title="Embeddings",
            text="Three tokens, 3-dimensional embeddings; the query is the embedding of "
            "\"shiny\" itself (no trainable weights yet).",
            items=[Mat(symbol="X", value=L(t(HELLO_X)), rows=tok, cols=x_cols)],
        ),
        Section(
            title="Step 1, attention scores: ω_j = x_shiny · x_j",
            items=[Mat(symbol="\\omega", value=L(r["scores"]), formula="x_{shiny} X^\\top",
                       rows=["shiny"], cols=tok)],
        ),
        Section(
            title="Step 2, attention weights: α = softmax(ω)",
            text="The weights sum to 1.",
            items=[Mat(symbol="\\alpha", value=L(r["weights"]),
                       formula="\\operatorname{softmax}(\\omega)", rows=["shiny"], cols=tok)],
        ),
        Section(
            title="Step 3, context vector: z = Σ_j α_j x_j",
            items=[
                Mat(symbol="\\alpha_j x_j", value=L(r["weighted"]),
                    formula_text="weighted embeddings (exact)", rows=tok, cols=x_cols),
                Mat(symbol="z", value=L(r["context"]), formula="\\sum_j \\alpha_j x_j",
                    formula_text="Σ_j α_j x_j (exact)", rows=["shiny"], cols=z_cols),
            ],
        ),
        Section(
            title="The document's numbers beside the exact ones",
            text=rounding_note(r),
            items=[
                Mat(symbol="\\text{doc } \\alpha_j x_j", text="document: α_j x_j",
                    value=L(r["doc_weighted"]), rows=tok, cols=x_cols),
                Mat(symbol="\\text{implied } \\alpha_j", value=L(r["implied_weights"]),
                    formula_text="document's α_j x_j / x_j", rows=tok, cols=x_cols),
                Mat(symbol="z_{doc}", text="document: z", value=L(r["doc_context"]),
                    rows=["shiny"], cols=z_cols),
                Mat(symbol="z", text="exact: z", value=L(r["context"]), rows=["shiny"],
                    cols=z_cols),
                Mat(symbol="z_{doc} - z", text="document − exact", value=L(r["difference"]),
                    rows=["shiny"], cols=z_cols),
            ],
        ),
    ]  # fmt: skip


def hello_json(r: HelloNumbers) -> dict[str, JSONValue]:
    """The payload of ``--format json``: exact values, then the document's."""
    return {
        "tokens": list(HELLO_TOKENS),
        "query": HELLO_QUERY,
        "X": L(t(HELLO_X)),
        "scores": r["scores"].tolist(),
        "weights": r["weights"].tolist(),
        "weighted": L(r["weighted"]),
        "context": r["context"].tolist(),
        "document": {
            "weighted": L(r["doc_weighted"]),
            "context": r["doc_context"].tolist(),
            "implied_weights": L(r["implied_weights"]),
        },
        "difference": r["difference"].tolist(),
    }


def explain() -> Explanation:
    """Seeds 001/004: plain dot-product attention for the query "shiny", with the rounding note."""
    r = hello_numbers()
    return Explanation(
        title='Dot-product attention by hand: "Hello shiny sun!"',
        source='seeds 001 (Portuguese) and 004 (English/Korean): context vector of "shiny"',
        sections=hello_sections(r),
        data=hello_json(r),
        precision=DOC_HELLO_DECIMALS,
    )
