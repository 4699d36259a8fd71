"""Seed 002's shapes walkthrough: "Я хочу пиццу <eos>"."""

from __future__ import annotations

from attention_ref.worked.i_want_pizza import (
    DOC_PIZZA_ROW,
    DOC_PIZZA_SHAPES,
    DOC_PIZZA_SPLIT,
    DOC_PIZZA_TOKEN,
)
from attention_ref.worked.i_want_pizza import explain as explain_pizza


def test_pizza_token_split_and_shapes():
    data = explain_pizza().data
    assert data["token"] == DOC_PIZZA_TOKEN
    assert data["token_row"] == DOC_PIZZA_ROW
    assert data["token_split"] == DOC_PIZZA_SPLIT
    s, doc = data["shapes"], DOC_PIZZA_SHAPES
    assert tuple(s["X"]) == doc["X"]
    assert tuple(s["Q"]) == doc["Q"]
    assert tuple(s["Q_reshaped"]) == doc["Q after reshape"]
    assert tuple(s["Q_swapped"]) == doc["Q after swap"]
    assert tuple(s["head_output"]) == doc["head output"]
    assert tuple(s["head_output_swapped"]) == doc["after swap back"]
    assert tuple(s["concat"]) == doc["after reshape back"]
    assert tuple(s["output"]) == doc["final output"]


def test_pizza_heads_hold_the_token_pieces():
    data = explain_pizza().data
    i = data["tokens"].index(DOC_PIZZA_TOKEN)
    for k, piece in enumerate(DOC_PIZZA_SPLIT):
        assert data["Q_heads"][k][i] == piece
