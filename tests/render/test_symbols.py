"""`latex_to_unicode`: every label's plain form comes from its LaTeX."""

from __future__ import annotations

import pytest

from attention_ref.render.symbols import latex_to_unicode


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        ("X", "X"),
        ("W_Q^{(1)}", "W_Q^(1)"),
        ("Q^{(12)}", "Q^(12)"),
        ("X^\\top", "Xᵀ"),
        ("X^{\\top}", "Xᵀ"),
        ("Q^{(1)} K^{(1)\\top}", "Q^(1) K^(1)ᵀ"),
        ("\\tilde S^{(2)}", "S̃^(2)"),
        ("\\tilde S", "S\u0303"),
        ("\\frac{Q^{(1)} K^{(1)\\top}}{\\sqrt{2}}", "Q^(1) K^(1)ᵀ / √2"),
        ("\\sqrt{12}", "√12"),
        ("\\operatorname{softmax}(\\tilde S^{(1)})", "softmax(S̃^(1))"),
        ("\\operatorname{Concat} \\cdot W_O", "Concat · W_O"),
        ("[H^{(1)} \\mid H^{(2)}]", "[H^(1) | H^(2)]"),
        ("\\sum_j \\alpha_j x_j", "Σ_j α_j x_j"),
        ("\\omega", "ω"),
        ("\\Omega \\beta \\lambda \\pi", "Ω β λ π"),
        ("x_{shiny} X^\\top", "x_shiny Xᵀ"),
        ("W_{query}", "W_query"),
        ("\\text{implied } \\alpha_j", "implied α_j"),
        ("\\text{a_b {c}}", "a_b {c}"),
        ("z_{doc} - z", "z_doc - z"),
        ("q_{Пиццу}", "q_Пиццу"),
        ("\\operatorname{softmax}(Q K^\\top / \\sqrt{2})", "softmax(Q Kᵀ / √2)"),
        ("a \\times b \\to c", "a × b → c"),
        ("-\\infty", "-∞"),
        ("", ""),
    ],
)
def test_latex_to_unicode(latex, text):
    assert latex_to_unicode(latex) == text


@pytest.mark.parametrize(
    ("latex", "message"),
    [
        ("\\hat{x}", "unknown command \\hat"),
        ("\\frac{a}{b", "missing '}'"),
        ("a}", "unbalanced '}'"),
        ("x^", "ends where an argument was due"),
        ("\\text x", "expected '{' after \\text"),
    ],
)
def test_what_it_does_not_know_is_an_error(latex, message):
    with pytest.raises(ValueError, match="latex_to_unicode") as err:
        latex_to_unicode(latex)
    assert message in str(err.value)
