"""Seed 003's view (``attnref params``): the counts, and a claim only the numbers support."""

from __future__ import annotations

from attention_ref.reference.params import attention_params, model_params
from attention_ref.worked.roberta_heads import COLUMNS, counts_claim, params_table


def test_table_rows_are_the_reference_counts():
    table = params_table(128, [1, 2, 4, 8])
    assert tuple(table.columns) == COLUMNS
    assert [row[0] for row in table.rows] == [1, 2, 4, 8]
    for row in table.rows:
        h = row[0]
        p = attention_params(128, h)
        assert row[1:] == (
            128 // h, f"{h} × (128×{128 // h})", "(128)×128", p.per_head, p.total,
            model_params(n_embd=128, n_head=h),
        )  # fmt: skip
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
