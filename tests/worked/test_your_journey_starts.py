"""Seed 001's code ("Your journey starts with one step"): the notebook's printed outputs."""

from __future__ import annotations

import pytest
import torch

from attention_ref.worked.your_journey_starts import (
    BOOK_JOURNEY_CAUSAL,
    BOOK_JOURNEY_MULTIHEAD,
    BOOK_JOURNEY_SELF,
    JOURNEY_SEED_SELF,
    draw_linear_weights,
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
