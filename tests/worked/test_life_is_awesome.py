"""Seed 000's numbers: every matrix of "Life is awesome" to 3 decimals."""

from __future__ import annotations

import math

import pytest
import torch

from attention_ref import reference as ref
from attention_ref.worked.life_is_awesome import (
    DOC_LIFE_A,
    DOC_LIFE_CONCAT,
    DOC_LIFE_H,
    DOC_LIFE_K,
    DOC_LIFE_M,
    DOC_LIFE_OUTPUT,
    DOC_LIFE_Q,
    DOC_LIFE_QKT,
    DOC_LIFE_V,
    LIFE_TOKENS,
    LIFE_W_K,
    LIFE_W_O,
    LIFE_W_Q,
    LIFE_W_V,
    LIFE_X,
    life_trace,
)
from attention_ref.worked.registry import explain_example
from attention_ref.worked.trace import t
from tests.worked.document import assert_doc


@pytest.fixture(scope="module")
def life() -> ref.AttentionTrace:
    return ref.masked_multihead_attention(
        t(LIFE_X),
        t(LIFE_W_Q),
        t(LIFE_W_K),
        t(LIFE_W_V),
        t(LIFE_W_O),
        tokens=LIFE_TOKENS,
    )


@pytest.mark.parametrize("i", [0, 1], ids=["head1", "head2"])
@pytest.mark.parametrize(
    ("name", "doc"),
    [
        ("Q", DOC_LIFE_Q),
        ("K", DOC_LIFE_K),
        ("V", DOC_LIFE_V),
        ("QKt", DOC_LIFE_QKT),
        ("A", DOC_LIFE_A),
        ("H", DOC_LIFE_H),
    ],
)
def test_life_per_head_matrices_match_document(life, name, doc, i):
    assert_doc(life.head(i)[name], doc[i])


@pytest.mark.parametrize("i", [0, 1])
def test_life_scaled_scores_are_doc_matrix_over_sqrt2(life, i):
    # The document writes S = (1/√2) [QKᵀ]; d_k = d_model / h = 2.
    assert life.d_k == 2
    assert_doc(life.head(i)["S"], (torch.tensor(DOC_LIFE_QKT[i]) / math.sqrt(2)).tolist())


def test_life_mask_is_document_M(life):
    M = life.M
    doc = torch.tensor(DOC_LIFE_M, dtype=torch.float64)
    assert torch.equal(torch.isinf(M), torch.isinf(doc))
    assert torch.equal(M[~torch.isinf(M)], doc[~torch.isinf(doc)])
    assert (M[torch.isinf(M)] < 0).all()


def test_life_first_row_of_A_is_one_zero_zero(life):
    for i in range(2):
        assert life.head(i)["A"][0].tolist() == [1.0, 0.0, 0.0]


def test_life_masked_scores_are_S_plus_M(life):
    for i in range(2):
        hd = life.head(i)
        blocked = torch.ones(3, 3, dtype=torch.bool).triu(1)
        assert torch.isneginf(hd["S_masked"][blocked]).all()
        assert torch.equal(hd["S_masked"][~blocked], hd["S"][~blocked])


def test_life_concat_and_output_match_document(life):
    assert_doc(life.concat, DOC_LIFE_CONCAT)
    assert_doc(life.output, DOC_LIFE_OUTPUT)
    assert torch.equal(life.W_O, torch.eye(4, dtype=torch.float64))


def test_life_explanation_json_carries_the_same_numbers():
    data = explain_example("life-is-awesome").data
    assert data["tokens"] == list(LIFE_TOKENS)
    assert_doc(torch.tensor(data["heads"][1]["A"]), DOC_LIFE_A[1])
    assert_doc(torch.tensor(data["output"]), DOC_LIFE_OUTPUT)


def test_life_trace_is_the_document_example(life):
    # the module's own numbers function is the fixture's computation
    mine = life_trace()
    assert mine.tokens == life.tokens
    assert torch.equal(mine.output, life.output)
    assert torch.equal(mine.A, life.A)


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_notation_notes_rest_on_the_computed_shapes(lang):
    from attention_ref.worked.life_is_awesome import life_trace, notation_notes

    trace = life_trace()
    notes = notation_notes(trace, lang)
    assert len(notes) == 3
    assert "Q^(i) = X W_Q^(i)" in notes[0] and "MultiHead(X)" in notes[0]
    assert "(3, 4)" in notes[1] and "(3, 2)" in notes[1]
    assert "∈ H ∈" in notes[2] and "ℝ^{3×4}" in notes[2]
    # with other weights in the trace than the document's, the first note says so
    other = ref.masked_multihead_attention(
        trace.X, torch.ones(2, 4, 2, dtype=trace.X.dtype), *(trace.X.new_ones(2, 4, 2),) * 2
    )
    assert "Q^(i) ≠ X W_Q^(i)" in notation_notes(other, lang)[0]
