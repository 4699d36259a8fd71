r"""Seed 003: RoBERTa with 4 and 12 heads has the same number of parameters.

Each head has ``W_Q^{(i)}, W_K^{(i)}, W_V^{(i)} ∈ R^{d_{model} × d_k}`` with
``d_k = d_{model} / h`` and ``W_O ∈ R^{h d_v × d_{model}}``, so a layer holds
``4 d_{model}^2`` weights (+ biases) for every ``h``. Seed 003's key point: every head reads
the whole input (all ``d_model`` columns of ``X``: ``W_Q^{(i)}`` has ``d_model`` rows); only
the projections are split, into ``h`` narrower ones. `params_table` is the view of
``attnref params``: the counts of `attention_ref.reference.params` for several ``h``, and the
claim they support; `preset_table` counts a whole ``RobertaForMaskedLM`` (``--preset``).

Seed 003's number, 109,514,298 for 4 and for 12 heads, is what its code builds:
``RobertaForMaskedLM(RobertaConfig(num_attention_heads=h))``, the library's *default*
configuration. ``RobertaConfig`` then inherited ``BertConfig``'s defaults (vocab 30,522,
512 positions, 2 token types; huggingface/transformers#23388), so that count is BERT-base's
sizes with RoBERTa's head: preset ``seed-003``. roberta-base's published configuration
(vocab 50,265, 514 positions, 1 token type) gives 124,697,433: preset ``roberta-base``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from attention_ref.reference.params import (
    AttentionParams,
    EncoderMLMConfig,
    attention_params,
    encoder_mlm_params,
    model_params,
)
from attention_ref.render import Table

DOC_ROBERTA_PARAMS: Final = 109_514_298  # both head counts, as the document prints
DOC_ROBERTA_HEADS: Final = (4, 12)  # its code's num_attention_heads (it prints "3 heads")

#: ``--preset`` name -> (description, sizes; ``heads`` is replaced by each ``--heads`` value).
ROBERTA_PRESETS: Final[dict[str, tuple[str, EncoderMLMConfig]]] = {
    "roberta-base": (
        "RobertaForMaskedLM, roberta-base's published configuration "
        "(vocab 50,265, 514 positions, 1 token type)",
        EncoderMLMConfig(
            vocab_size=50_265,
            hidden=768,
            layers=12,
            heads=12,
            intermediate=3072,
            max_positions=514,
            type_vocab_size=1,
        ),
    ),
    "seed-003": (
        "RobertaForMaskedLM(RobertaConfig(num_attention_heads=h)) as seed 003 ran it: the "
        "defaults RobertaConfig inherited from BertConfig (vocab 30,522, 512 positions, "
        "2 token types)",
        EncoderMLMConfig(
            vocab_size=30_522,
            hidden=768,
            layers=12,
            heads=12,
            intermediate=3072,
            max_positions=512,
            type_vocab_size=2,
        ),
    ),
}

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


def whole_input_clause(layers: Sequence[AttentionParams]) -> str:
    """Seed 003's key point, said only when every head's ``W_Q^(i)`` has ``d_model`` rows."""
    if all(p.shapes()["W_Q^(i)"][0] == p.d_model for p in layers):
        return (
            "every head reads the whole input (W_Q^(i) has d_model rows); only the "
            "projections are split"
        )
    return "NOT every head reads the whole input"


def params_table(d_model: int, heads: Sequence[int]) -> Table:
    """One attention layer and the default model (biases included) for each ``h`` in ``heads``.

    ``ValueError`` (from `attention_ref.reference.params.attention_params`) when an ``h`` does
    not divide ``d_model`` or a size is out of range.
    """
    layers = [attention_params(d_model, h) for h in heads]
    models = [model_params(n_embd=d_model, n_head=h) for h in heads]
    rows = [
        (
            p.h,
            p.d_k,
            f"{p.h} × ({p.d_model}×{p.d_k})",
            f"({p.h * p.d_k})×{p.d_model}",
            p.per_head,
            p.total,
            m,
        )
        for p, m in zip(layers, models, strict=True)
    ]
    same, claim = counts_claim([p.total for p in layers], models)
    return Table(
        title=f"One attention layer and the default model (d_model = {d_model}, biases included)",
        context=f"d_model = {d_model}",
        columns=COLUMNS,
        rows=rows,
        claim=f"{claim}; {whole_input_clause(layers)}",
        data={
            "d_model": d_model,
            "rows": [dict(zip(COLUMNS, row, strict=True)) for row in rows],
            "equal": same,
        },
        plain_columns=frozenset({"h", "d_k"}),
    )


def seed_003_clause(totals: Sequence[int]) -> str:
    """Whether the model counts are seed 003's printed 109,514,298, computed."""
    if set(totals) == {DOC_ROBERTA_PARAMS}:
        return f"seed 003's {DOC_ROBERTA_PARAMS:,} reproduced"
    return (
        f"not seed 003's {DOC_ROBERTA_PARAMS:,}, which counts RobertaConfig()'s defaults of its "
        "time (--preset seed-003)"
    )


def preset_table(preset: str, heads: Sequence[int]) -> Table:
    """``RobertaForMaskedLM`` of a `ROBERTA_PRESETS` configuration for each ``h`` in ``heads``.

    The columns of `params_table`, with ``model`` = `encoder_mlm_params`'s total (tied decoder
    weight counted once, no pooler). ``ValueError`` for an unknown preset or an ``h`` that does
    not divide 768.
    """
    if preset not in ROBERTA_PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of: {', '.join(ROBERTA_PRESETS)}")
    description, base = ROBERTA_PRESETS[preset]
    d = base.hidden
    layers = [attention_params(d, h) for h in heads]
    counts = [encoder_mlm_params(replace(base, heads=h)) for h in heads]
    models = [c["total"] for c in counts]
    rows = [
        (p.h, p.d_k, f"{p.h} × ({d}×{p.d_k})", f"({p.h * p.d_k})×{d}", p.per_head, p.total, m)
        for p, m in zip(layers, models, strict=True)
    ]
    same, claim = counts_claim([p.total for p in layers], models)
    return Table(
        title=f"{description}: one attention layer and the whole model (biases included)",
        context=f"{preset} (d_model = {d}, {base.layers} layers)",
        columns=COLUMNS,
        rows=rows,
        claim=f"{claim}; {whole_input_clause(layers)}; {seed_003_clause(models)}",
        data={
            "preset": preset,
            "description": description,
            "d_model": d,
            "rows": [dict(zip(COLUMNS, row, strict=True)) for row in rows],
            "breakdown": [dict(c) for c in counts],
            "equal": same,
            "seed_003": set(models) == {DOC_ROBERTA_PARAMS},
        },
        plain_columns=frozenset({"h", "d_k"}),
    )
