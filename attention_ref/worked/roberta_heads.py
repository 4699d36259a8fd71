r"""Seed 003: RoBERTa with 4 and 12 heads has the same number of parameters.

Each head has ``W_Q^{(i)}, W_K^{(i)}, W_V^{(i)} ∈ R^{d_{model} × d_k}`` with
``d_k = d_{model} / h`` and ``W_O ∈ R^{h d_v × d_{model}}``, so a layer holds
``4 d_{model}^2`` weights (+ biases) for every ``h``. `params_table` is the view of
``attnref params``: the counts of `attention_ref.reference.params` for several ``h``, and the
claim they support.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from attention_ref.reference.params import attention_params, model_params
from attention_ref.render import Table

DOC_ROBERTA_PARAMS: Final = 109_514_298  # both head counts, as the document prints

COLUMNS: Final = (
    "h",
    "d_k",
    "W_Q^(i), W_K^(i), W_V^(i)",
    "W_O",
    "per head",
    "attention layer",
    "model",
)


def counts_claim(layer_totals: Sequence[int], model_totals: Sequence[int]) -> tuple[bool, str]:
    """Whether the counts are equal across ``h``, and the clause that says so."""
    same = len(set(layer_totals)) == 1 and len(set(model_totals)) == 1
    verdict = (
        "equal for every h: more heads means narrower heads, not more weights"
        if same
        else "NOT equal across h"
    )
    return same, f"parameter counts {verdict}"


def params_table(d_model: int, heads: Sequence[int]) -> Table:
    """One attention layer and the default model (biases included) for each ``h`` in ``heads``.

    ``ValueError`` (from `attention_ref.reference.params.attention_params`) when an ``h`` does
    not divide ``d_model`` or a size is out of range.
    """
    layers = [attention_params(d_model, h) for h in heads]
    models = [model_params(n_embd=d_model, n_head=h) for h in heads]
    rows = [
        (p.h, p.d_k, f"{p.h} × ({p.d_model}×{p.d_k})", f"({p.h * p.d_k})×{p.d_model}",
         p.per_head, p.total, m)
        for p, m in zip(layers, models, strict=True)
    ]  # fmt: skip
    same, claim = counts_claim([p.total for p in layers], models)
    return Table(
        title=f"One attention layer and the default model (d_model = {d_model}, biases included)",
        context=f"d_model = {d_model}",
        columns=COLUMNS,
        rows=rows,
        claim=claim,
        data={
            "d_model": d_model,
            "rows": [dict(zip(COLUMNS, row, strict=True)) for row in rows],
            "equal": same,
        },
        plain_columns=frozenset({"h", "d_k"}),
    )
