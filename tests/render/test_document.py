"""The document model: keyword-only, labels written once in LaTeX."""

from __future__ import annotations

import dataclasses

import pytest

from attention_ref.render import Explanation, Mat, Section, Shape, Table


def test_every_type_is_keyword_only_and_frozen():
    with pytest.raises(TypeError):
        Mat("Q", [[1.0]])  # type: ignore[misc]
    with pytest.raises(TypeError):
        Shape("Q", "reshape", (1, 2), (2, 1))  # type: ignore[misc]
    with pytest.raises(TypeError):
        Section("title")  # type: ignore[misc]
    m = Mat(symbol="Q", value=[[1.0]])
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.symbol = "K"  # type: ignore[misc]
    for cls in (Mat, Shape, Section, Explanation, Table):
        assert all(f.kw_only for f in dataclasses.fields(cls)), cls


def test_plain_text_comes_from_the_latex():
    m = Mat(symbol="S^{(1)}", value=[[1.0]], formula="\\frac{Q^{(1)} K^{(1)\\top}}{\\sqrt{2}}")
    assert m.symbol_as_text() == "S^(1)"
    assert m.formula_as_text() == "Q^(1) K^(1)ᵀ / √2"
    assert Mat(symbol="W_O", value=[[1.0]]).formula_as_text() == ""


def test_an_override_replaces_the_plain_text_only():
    m = Mat(symbol="Q", value=[[1.0]], formula="X W_{query}", text="queries")
    assert m.symbol_as_text() == "queries"
    assert m.formula_as_text() == "X W_query"
    m = Mat(symbol="A", value=[[1.0]], formula_text="softmax(masked scores)")
    assert m.formula == "" and m.formula_as_text() == "softmax(masked scores)"
