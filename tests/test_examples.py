"""The documents' numbers: every matrix of seed 000 to 3 decimals, and the other examples."""

from __future__ import annotations

import math

import pytest
import torch

from attention_ref import examples as ex
from attention_ref import reference as ref
from attention_ref.explain import (
    draw_linear_weights,
    explain_example,
    explain_pizza,
    hello_numbers,
    journey_numbers,
    t,
)

DOC_3 = 0.5e-3 + 1e-12  # "matches to 3 decimals": |computed - printed| <= half a unit of 1e-3


@pytest.fixture(scope="module")
def life() -> ref.AttentionTrace:
    return ref.masked_multihead_attention(
        t(ex.LIFE_X),
        t(ex.LIFE_W_Q),
        t(ex.LIFE_W_K),
        t(ex.LIFE_W_V),
        t(ex.LIFE_W_O),
        tokens=ex.LIFE_TOKENS,
    )


def assert_doc(computed: torch.Tensor, printed: list, tol: float = DOC_3) -> None:
    """Computed values equal the printed ones to the document's decimals."""
    expected = torch.tensor(printed, dtype=torch.float64)
    assert computed.shape == expected.shape
    err = (computed - expected).abs().max().item()
    assert err <= tol, f"max deviation {err:.2e} from the document\n{computed}\nvs\n{expected}"


@pytest.mark.parametrize("i", [0, 1], ids=["head1", "head2"])
@pytest.mark.parametrize(
    ("name", "doc"),
    [
        ("Q", ex.DOC_LIFE_Q),
        ("K", ex.DOC_LIFE_K),
        ("V", ex.DOC_LIFE_V),
        ("QKt", ex.DOC_LIFE_QKT),
        ("A", ex.DOC_LIFE_A),
        ("H", ex.DOC_LIFE_H),
    ],
)
def test_life_per_head_matrices_match_document(life, name, doc, i):
    assert_doc(life.head(i)[name], doc[i])


@pytest.mark.parametrize("i", [0, 1])
def test_life_scaled_scores_are_doc_matrix_over_sqrt2(life, i):
    # The document writes S = (1/√2) [QKᵀ]; d_k = d_model / h = 2.
    assert life.d_k == 2
    assert_doc(life.head(i)["S"], (torch.tensor(ex.DOC_LIFE_QKT[i]) / math.sqrt(2)).tolist())


def test_life_mask_is_document_M(life):
    M = life.M
    doc = torch.tensor(ex.DOC_LIFE_M, dtype=torch.float64)
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
    assert_doc(life.concat, ex.DOC_LIFE_CONCAT)
    assert_doc(life.output, ex.DOC_LIFE_OUTPUT)
    assert torch.equal(life.W_O, torch.eye(4, dtype=torch.float64))


def test_life_explanation_json_carries_the_same_numbers():
    data = explain_example("life-is-awesome").data
    assert data["tokens"] == list(ex.LIFE_TOKENS)
    assert_doc(torch.tensor(data["heads"][1]["A"]), ex.DOC_LIFE_A[1])
    assert_doc(torch.tensor(data["output"]), ex.DOC_LIFE_OUTPUT)


# --- hello-shiny-sun --------------------------------------------------------------------------


def test_hello_exact_context_and_document_rounding():
    r = hello_numbers()
    # the seeds' README: exact arithmetic gives about [0.3990, 0.3854, 0.8610]
    assert_doc(r["context"], [0.3990, 0.3854, 0.8610], tol=0.5e-4)
    # the document's printed vector is the sum of its printed weighted embeddings
    assert_doc(r["doc_context_sum"], ex.DOC_HELLO_CONTEXT, tol=1e-9)
    # ...and differs from the exact one by a few 1e-4, never more than 1e-3
    diff = r["difference"].abs()
    assert 1e-4 < diff.max().item() < 1e-3
    # weights sum to 1 and the exact weighted embeddings round to the document's where it is right
    assert math.isclose(r["weights"].sum().item(), 1.0, abs_tol=1e-12)
    assert_doc(r["weighted"][0], ex.DOC_HELLO_WEIGHTED[0], tol=0.5e-4)  # "Hello" row agrees


def test_hello_scores_are_dot_products_with_shiny():
    r = hello_numbers()
    X = ex.HELLO_X
    expected = [sum(a * b for a, b in zip(x, X[1], strict=True)) for x in X]
    assert_doc(r["scores"], expected, tol=1e-12)


# --- your-journey-starts (seed 001 code) ------------------------------------------------------


def test_journey_weights_are_drawn_like_the_document_code():
    torch.manual_seed(ex.JOURNEY_SEED_SELF)
    lin = [torch.nn.Linear(3, 2, bias=False) for _ in range(3)]
    drawn = draw_linear_weights(ex.JOURNEY_SEED_SELF, [(3, 2, False)] * 3)
    for (W, b), layer in zip(drawn, lin, strict=True):
        assert b is None
        assert torch.equal(W, layer.weight.detach().T.double())


@pytest.mark.parametrize(
    ("part", "book"),
    [
        ("self", ex.BOOK_JOURNEY_SELF),
        ("causal", ex.BOOK_JOURNEY_CAUSAL),
        ("multihead", ex.BOOK_JOURNEY_MULTIHEAD),
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


# --- i-want-pizza (seed 002) ------------------------------------------------------------------


def test_pizza_token_split_and_shapes():
    data = explain_pizza().data
    assert data["token"] == ex.DOC_PIZZA_TOKEN
    assert data["token_row"] == ex.DOC_PIZZA_ROW
    assert data["token_split"] == ex.DOC_PIZZA_SPLIT
    s, doc = data["shapes"], ex.DOC_PIZZA_SHAPES
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
    i = data["tokens"].index(ex.DOC_PIZZA_TOKEN)
    for k, piece in enumerate(ex.DOC_PIZZA_SPLIT):
        assert data["Q_heads"][k][i] == piece


@pytest.mark.parametrize("name", ex.EXAMPLE_NAMES)
def test_every_example_explains(name):
    expl = explain_example(name)
    assert expl.sections and expl.data
    assert all(sec.title for sec in expl.sections)


def test_unknown_example_lists_valid_names():
    with pytest.raises(ValueError, match="life-is-awesome, hello-shiny-sun"):
        explain_example("nope")
