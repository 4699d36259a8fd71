"""Seed 002's shapes walkthrough: "Я хочу пиццу <eos>"."""

from __future__ import annotations

import torch

from attention_ref.worked.i_want_pizza import (
    DOC_PIZZA_ROW,
    DOC_PIZZA_SHAPES,
    DOC_PIZZA_SPLIT,
    DOC_PIZZA_TOKEN,
    PIZZA_TOKENS,
    pizza_numbers,
    provenance,
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


def test_reshape_then_swap_scrambles_tokens_and_heads():
    r = pizza_numbers()
    B, T, d = 1, 4, 6
    h = DOC_PIZZA_SHAPES["Q after reshape"][2]
    # the right inverse, swap then reshape, gives Q back: "Пиццу" is [13..18] again
    assert torch.equal(r.Q_swapped.transpose(1, 2).reshape(B, T, d), r.Q)
    i = list(PIZZA_TOKENS).index(DOC_PIZZA_TOKEN)
    # the document's words, reshape first: its row holds other tokens' and other heads' pieces
    first = r.Q_swapped.reshape(B, T, h, d // h)
    assert torch.equal(first, r.Q_reshape_first)
    row = first[0, i]
    assert row.flatten().tolist() != DOC_PIZZA_ROW
    where = [provenance(r, piece) for piece in row]
    assert where == [(1, 2), (1, 3), (2, 0)]  # head 2 of Пиццу, head 2 of <eos>, head 3 of Я
    assert len({t for _, t in where}) > 1 and len({k for k, _ in where}) > 1
    # ...and a swap moves whole axes, so no swap after it restores Q
    assert not torch.equal(first.transpose(1, 2).reshape(B, T, d), r.Q)
    assert not torch.equal(first.reshape(B, T, d), r.Q)


def test_pizza_note_names_the_slips_from_the_numbers():
    text = next(s.text for s in explain_pizza().sections if s.title.startswith("Concat"))
    assert "[[15, 16], [21, 22], [5, 6]]" in text
    assert "head 2 of `Пиццу`, head 2 of `<eos>`, head 3 of `Я`" in text
    assert "tokens and heads are scrambled" in text and "gives Q back: exactly" in text
    assert "(batch_size, text, seq_len, head_dim)" in text and "the axis is heads" in text


def test_the_row_and_its_split_have_different_symbols():
    split = next(s for s in explain_pizza().sections if s.title.startswith("Split"))
    symbols = [m.symbol for m in split.items if hasattr(m, "symbol")]
    assert len(symbols) == len(set(symbols))
