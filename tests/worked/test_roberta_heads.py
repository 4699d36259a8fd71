"""Seed 003's view (``attnref params``): the counts, and a claim only the numbers support."""

from __future__ import annotations

from dataclasses import replace

import pytest

from attention_ref.reference.params import (
    AttentionParams,
    attention_params,
    encoder_mlm_params,
    model_params,
)
from attention_ref.worked.roberta_heads import (
    COLUMNS,
    DOC_ROBERTA_HEADS,
    DOC_ROBERTA_PARAMS,
    ROBERTA_PRESETS,
    counts_claim,
    params_table,
    preset_table,
    whole_input_clause,
)


def test_table_rows_are_the_reference_counts():
    table = params_table(128, [1, 2, 4, 8])
    assert tuple(table.columns) == COLUMNS
    assert [row[0] for row in table.rows] == [1, 2, 4, 8]
    for row in table.rows:
        h = row[0]
        p = attention_params(128, h)
        assert row[1:] == (
            128 // h,
            f"{h} × (128×{128 // h})",
            "(128)×128",
            p.per_head,
            p.total,
            model_params(n_embd=128, n_head=h),
        )
    assert table.data["equal"] is True
    assert table.data["rows"][2]["W_Q^(i), W_K^(i), W_V^(i)"] == "4 × (128×32)"


def test_claim_on_both_sides_of_equal():
    same, claim = counts_claim([66_048, 66_048], [10, 10])
    assert same and claim.startswith("parameter counts equal for every h")
    same, claim = counts_claim([66_048, 66_049], [10, 10])
    assert not same and claim == "parameter counts NOT equal across h"
    same, _ = counts_claim([66_048, 66_048], [10, 11])
    assert not same


def test_table_claim_is_equal_for_valid_head_counts():
    table = params_table(12, [1, 3, 12])
    assert table.claim.startswith("parameter counts equal")
    assert table.context == "d_model = 12"


def test_whole_input_clause_from_the_shapes():
    table = params_table(128, [1, 2, 4, 8])
    assert "every head reads the whole input" in table.claim
    assert whole_input_clause([attention_params(128, 4)]).startswith("every head reads")

    class SlicedInput(AttentionParams):  # heads that would each read a d_k slice of X
        def shapes(self):
            return {**super().shapes(), "W_Q^(i)": (self.d_k, self.d_k)}

    assert whole_input_clause([SlicedInput(128, 4, True)]) == "NOT every head reads the whole input"


@pytest.mark.parametrize(
    ("preset", "total", "seed_003"),
    [("seed-003", 109_514_298, True), ("roberta-base", 124_697_433, False)],
)
def test_presets_count_roberta_for_masked_lm(preset, total, seed_003):
    table = preset_table(preset, [4, 12])
    assert [row[0] for row in table.rows] == [4, 12]
    assert {row[-1] for row in table.rows} == {total}
    assert {row[-2] for row in table.rows} == {2_362_368}  # attention per layer, both h
    assert table.data["equal"] is True and table.data["seed_003"] is seed_003
    assert ("seed 003's 109,514,298 reproduced" in table.claim) is seed_003
    assert table.claim.startswith("parameter counts equal for every h")


def test_seed_003_constant_is_what_the_preset_reproduces():
    _, cfg = ROBERTA_PRESETS["seed-003"]
    assert all(
        encoder_mlm_params(replace(cfg, heads=h))["total"] == DOC_ROBERTA_PARAMS
        for h in DOC_ROBERTA_HEADS
    )


def test_unknown_preset_raises():
    with pytest.raises(ValueError, match="unknown preset 'nope'; choose one of: roberta-base"):
        preset_table("nope", [4])
