"""Seed 001's code ("Your journey starts with one step"): the notebook's printed outputs."""

from __future__ import annotations

import math

import pytest
import torch

from attention_ref.worked.your_journey_starts import (
    BOOK_JOURNEY_CAUSAL,
    BOOK_JOURNEY_MULTIHEAD,
    BOOK_JOURNEY_SELF,
    JOURNEY_SEED_MULTIHEAD,
    JOURNEY_SEED_SELF,
    b_o_note,
    document_words,
    draw_linear_weights,
    explain,
    init_bound,
    journey_numbers,
)
from tests.worked.document import assert_doc


def test_journey_weights_are_drawn_like_the_document_code():
    torch.manual_seed(JOURNEY_SEED_SELF)
    lin = [torch.nn.Linear(3, 2, bias=False) for _ in range(3)]
    drawn = draw_linear_weights(JOURNEY_SEED_SELF, [(3, 2, False)] * 3)
    for (W, b), layer in zip(drawn, lin, strict=True):
        assert b is None
        assert torch.equal(W, layer.weight.detach().T.double())


@pytest.mark.parametrize(
    ("part", "book"),
    [
        ("self", BOOK_JOURNEY_SELF),
        ("causal", BOOK_JOURNEY_CAUSAL),
        ("multihead", BOOK_JOURNEY_MULTIHEAD),
    ],
)
def test_journey_reproduces_the_printed_outputs_of_the_code(part, book):
    trace = journey_numbers()[part]["trace"]
    out = trace.output if trace.output.dim() == 2 else trace.output[0]
    assert_doc(out, book, tol=0.5e-4 + 1e-7)


def test_journey_shapes_as_in_the_code():
    r = journey_numbers()
    causal, mha = r["causal"]["trace"], r["multihead"]["trace"]
    assert tuple(causal.output.shape) == (2, 6, 2)
    assert torch.equal(causal.output[0], causal.output[1])
    assert tuple(mha.Q.shape) == (2, 2, 6, 1)  # (b, num_heads, num_tokens, head_dim)
    assert tuple(mha.output.shape) == (2, 6, 2)


def test_out_proj_bound_is_one_over_root_two_and_b_O_lies_beyond_one_over_root_three():
    # the bound of nn.Linear's default init is 1/√in_features, measured on many layers
    torch.manual_seed(0)
    for fan_in in (2, 3):
        layers = [torch.nn.Linear(fan_in, 2) for _ in range(500)]
        w = torch.cat([lay.weight.detach().flatten() for lay in layers]).abs().max().item()
        b = torch.cat([lay.bias.detach() for lay in layers]).abs().max().item()
        assert init_bound(fan_in) * 0.99 < max(w, b) <= init_bound(fan_in)
    assert math.isclose(init_bound(2), 1 / math.sqrt(2))
    b_O = journey_numbers()["multihead"]["b_O"]
    assert 1 / math.sqrt(3) < b_O.abs().max().item() <= 1 / math.sqrt(2)  # 0.6825
    assert "inside ±1/√2 ≈ 0.707 and beyond ±1/√3 ≈ 0.577" in b_o_note(b_O)
    text = next(s.text for s in explain().sections if s.title.startswith("Multi-head"))
    assert f"torch.manual_seed({JOURNEY_SEED_MULTIHEAD})" in text
    assert "out_proj (with bias): fan_in = 2, bound 1/√2 ≈ 0.707" in text
    assert "with d_in = 3" not in text


def test_document_words_on_the_query_and_per_token_vectors():
    words = document_words(journey_numbers())
    assert "queries = X W_query is (6, 2), not the data X (6, 3)" in words
    assert "requires_grad = True" in words
    assert "(shape (2,))" in words and "(3, 2) are shared by every token" in words
