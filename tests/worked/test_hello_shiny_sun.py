"""Seeds 001/004's numbers: "Hello shiny sun!", exact and as the document rounds them."""

from __future__ import annotations

import math

from attention_ref.worked.hello_shiny_sun import (
    DOC_HELLO_CONTEXT,
    DOC_HELLO_WEIGHTED,
    HELLO_X,
    hello_numbers,
    rounding_note,
)
from tests.worked.document import assert_doc


def test_hello_exact_context_and_document_rounding():
    r = hello_numbers()
    # the seeds' README: exact arithmetic gives about [0.3990, 0.3854, 0.8610]
    assert_doc(r["context"], [0.3990, 0.3854, 0.8610], tol=0.5e-4)
    # the document's printed vector is the sum of its printed weighted embeddings
    assert_doc(r["doc_context_sum"], DOC_HELLO_CONTEXT, tol=1e-9)
    # ...and differs from the exact one by a few 1e-4, never more than 1e-3
    diff = r["difference"].abs()
    assert 1e-4 < diff.max().item() < 1e-3
    # weights sum to 1 and the exact weighted embeddings round to the document's where it is right
    assert math.isclose(r["weights"].sum().item(), 1.0, abs_tol=1e-12)
    assert_doc(r["weighted"][0], DOC_HELLO_WEIGHTED[0], tol=0.5e-4)  # "Hello" row agrees


def test_hello_scores_are_dot_products_with_shiny():
    r = hello_numbers()
    X = HELLO_X
    expected = [sum(a * b for a, b in zip(x, X[1], strict=True)) for x in X]
    assert_doc(r["scores"], expected, tol=1e-12)


def test_rounding_note_names_the_drifting_tokens_from_the_numbers():
    r = hello_numbers()
    note = rounding_note(r)
    assert "'shiny' and 'sun'" in note  # "Hello"'s implied weight is right at 4 decimals
    assert f"{r['difference'].abs().max().item():.4f} in the context vector" in note
    # with the exact products in place of the document's, nothing drifts
    exact = {**r, "implied_weights": r["weights"].unsqueeze(1).expand(3, 3)}
    note = rounding_note(exact)
    assert "agree with the exact softmax at 4 decimals" in note and "differ from" not in note
