"""Seeds 001/004's numbers: "Hello shiny sun!", exact, and the document's arithmetic slips."""

from __future__ import annotations

import math

import torch

from attention_ref.worked.hello_shiny_sun import (
    DOC_HELLO_CONTEXT,
    DOC_HELLO_WEIGHTED,
    HELLO_X,
    agree_at_decimals,
    document_note,
    explain,
    hello_numbers,
    slips,
)
from tests.worked.document import assert_doc


def test_hello_exact_context_and_the_document_sum():
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


def test_the_missing_steps_exponentials_and_their_sum():
    r = hello_numbers()
    expected = [math.exp(w) for w in r["scores"].tolist()]
    assert_doc(r["exp_scores"], expected, tol=1e-12)
    assert math.isclose(float(r["exp_sum"]), sum(expected), rel_tol=1e-12)
    assert_doc(r["weights"], [e / sum(expected) for e in expected], tol=1e-12)
    text = next(s for s in explain().sections if s.title.startswith("Step 2")).text
    assert "missing" in text


def test_the_tolerance_tells_the_document_vector_from_the_exact_one():
    r = hello_numbers()
    doc, exact = r["doc_context"], r["context"]
    assert not agree_at_decimals(doc, exact)  # they differ in the 4th decimal
    assert agree_at_decimals(torch.round(exact, decimals=4), exact)  # rounding is within ½e-4
    assert (doc - exact).abs().max().item() < 1e-3  # the old check's 1e-3 could not tell


def test_implied_weight_intervals_of_shiny_do_not_overlap():
    r = hello_numbers()
    lo, hi = r["implied_low"], r["implied_high"]
    # shiny = row 1; its products 0.2156 (x = 0.53) and 0.3983 (x = 0.98): the intervals
    assert [round(lo[1, 0].item(), 5), round(hi[1, 0].item(), 5)] == [0.40670, 0.40689]
    assert [round(lo[1, 2].item(), 5), round(hi[1, 2].item(), 5)] == [0.40638, 0.40648]
    assert lo[1, 0] > hi[1, 2]  # disjoint: no weight, rounded or not, prints both
    assert lo[1].max() > hi[1].min()
    # "Hello"'s three intervals share a weight, and the exact weight is in it
    assert lo[0].max() <= r["weights"][0] <= hi[0].min()
    found = slips(r)
    assert [s["token"] for s in found] == ["shiny", "sun"]
    assert found[0]["first"][:2] == (0.2156, 0.53) and found[0]["second"][:2] == (0.3983, 0.98)


def test_no_rounded_weight_gives_the_document_products():
    # every weight printed to 4 or 5 decimals near the exact one: none gives shiny's products
    r = hello_numbers()
    doc, x = r["doc_weighted"][1], torch.tensor(HELLO_X[1], dtype=torch.float64)
    exact = r["weights"][1].item()
    for decimals in (4, 5):
        step = 10.0**-decimals
        for k in range(-20, 21):
            w = round(exact, decimals) + k * step
            assert not torch.equal(torch.round(w * x, decimals=4), doc)


def test_document_note_says_slips_from_the_numbers():
    r = hello_numbers()
    note = document_note(r)
    assert "[0.40670, 0.40689]" in note and "[0.40638, 0.40648]" in note
    assert "arithmetic slips" in note and "not the exact vector rounded" in note
    assert "computed from rounded" not in note
    # the exact products in place of the document's: the vector is the exact one, rounded
    exact = {
        **r,
        "doc_weighted": r["weighted"],
        "doc_context": torch.round(r["context"], decimals=4),
        "doc_context_sum": r["weighted"].sum(0),
    }
    note = document_note(exact)
    assert "It is the exact vector, rounded to 4 decimals." in note and "slips" not in note
