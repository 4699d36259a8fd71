r"""`latex_text` and `math_label`: the prose and labels as LaTeX that pdflatex compiles."""

from __future__ import annotations

import pytest

from attention_ref.render import Explanation, Mat, Section, latex_text, to_book
from attention_ref.render.latex import math_label, to_latex


@pytest.mark.parametrize(
    ("text", "latex"),
    [
        ("d_model = 4", "$d_{\\text{model}} = 4$"),
        (
            "50% & #1 {x} $5 a^b ~c \\d",
            "50\\% \\& \\#1 \\{x\\} \\$$5 a^b$ \\textasciitilde{}c \\textbackslash{}d",
        ),
        ("<eos> | x", "\\textless{}eos\\textgreater{} \\textbar{} x"),
        ("--input", "-{}-input"),
        ('"Life is awesome"', "``Life is awesome''"),
        ('("Пиццу" = [13..18])', "(``Пиццу'' = [13..18])"),
        ("Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾", "$Q^{(i)} = X W_Q^{(i)}$"),
        ("K⁽¹⁾ᵀ", "$K^{(1)\\top}$"),
        ("H⁽ʰ⁾", "$H^{(h)}$"),
        ("x₁ + xᵢ", "$x_1 + x_i$"),
        ("exercício", "exerc\\'{\\i}cio"),  # a dotless i under the accent
        ("divided by √2.", "divided by $\\sqrt{2}$."),
        ("/ √d_k, with", "/ $\\sqrt{d_k}$, with"),
        ("1/√d_in", "$1/\\sqrt{d_{\\text{in}}}$"),
        ("√head_dim + M", "$\\sqrt{\\text{head\\_dim}} + M$"),
        ("√ alone", "$\\surd$ alone"),
        ("−∞ above", "$-\\infty$ above"),  # one formula, never "$-$$\infty$"
        ("e^(−∞) = 0", "$e^{-\\infty} = 0$"),
        ("S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M", "$\\tilde{S}^{(i)} = S^{(i)} + M$"),
        ("α = softmax(ω)", "$\\alpha = \\operatorname{softmax}(\\omega)$"),
        ("z = Σ_j α_j x_j", "$z = \\Sigma_j \\alpha_j x_j$"),
        ("q · k, 2 × 3 → 6", "$q \\cdot k$, $2 \\times 3 \\to 6$"),
        ("∂L/∂W ∈ ℝ^{3×4}", "$\\partial L/\\partial W \\in \\mathbb{R}^{3\\times4}$"),
        # the prose's formulas as math, whole (issue 31, item 8)
        ("W_O = I_4 in the document", "$W_O = I_4$ in the document"),
        ("Entry (i, j) is q_i · k_j, the", "Entry (i, j) is $q_i \\cdot k_j$, the"),
        ("a token is a row of X and Q = X W_Q.", "a token is a row of X and $Q = X W_Q$."),
        ("n = 3 tokens, h = 2 heads", "$n = 3$ tokens, $h = 2$ heads"),
        ("x'_2i+1 = x_2i sin mθ_i", "$x'_{2i+1} = x_{2i} \\sin m\\theta_i$"),
        ("B⁽ⁱ⁾_tu = −m_i (t − u)", "$B^{(i)}_{\\text{tu}} = -m_i (t - u)$"),
        ("slopes 2^(−8i/h)", "slopes $2^{-8i/h}$"),
        ("Q^(i) = X W_Q^(i)", "$Q^{(i)} = X W_Q^{(i)}$"),
        ("QW_1^Q", "$QW_1^Q$"),
        ("∂W_O = Concatᵀ G", "$\\partial W_O = \\operatorname{Concat}^{\\top} G$"),
        ("G = ∂L/∂output is", "$G = \\partial L/\\partial \\mathrm{output}$ is"),
        ("The largest |b_O| = 0.68 is", "The largest $|b_O| = 0.68$ is"),
        ("(largest |row sum − 1| 2e-16)", "(largest \\textbar{}row sum $-$ 1\\textbar{} 2e-16)"),
        ("one head's Attention(·) is", "one head's Attention($\\cdot$) is"),
        ("token t's query", "token t's query"),
        ("(j > t)", "$(j > t)$"),
        ("x = 0,5", "$x = 0{,}5$"),
        # names of code: \texttt, whole (a code span loses its backticks)
        (
            "fan_in = 3, bound 1/√3 ≈ 0.577",
            "\\texttt{fan\\_in} = 3, bound $1/\\sqrt{3} \\approx 0.577$",
        ),
        ("torch.manual_seed(789), then", "\\texttt{torch.manual\\_seed}(789), then"),
        ("as `mask = torch.triu(x)` does", "as \\texttt{mask = torch.triu(x)} does"),
        ("W_query, d_out", "$W_{\\text{query}}$, $d_{\\text{out}}$"),
        ("Questão, fórmula, ç", "Quest\\~{a}o, f\\'{o}rmula, \\c{c}"),
        ("0.2291–0.2291 … (1, 0, …, 0)", "0.2291--0.2291 \\dots{} (1, 0, \\dots{}, 0)"),
        ("Я хочу пиццу", "Я хочу пиццу"),
        ("", ""),
    ],
)
def test_latex_text(text, latex):
    assert latex_text(text) == latex


@pytest.mark.parametrize("char", ["你", "😀", "ℵ", "\u0301"])
def test_what_latex_cannot_typeset_is_an_error(char):
    with pytest.raises(ValueError, match=f"--format latex cannot typeset {char!r}"):
        latex_text(f"a {char} b")


@pytest.mark.parametrize(
    ("label", "latex"),
    [
        ("W_Q^{(1)}", "W_Q^{(1)}"),
        ("x_{shiny} X^\\top", "x_{\\text{shiny}} X^\\top"),
        ("W_{query}", "W_{\\text{query}}"),
        ("z_{doc} - z", "z_{\\text{doc}} - z"),
        ("q_{Пиццу}", "q_{\\text{Пиццу}}"),
        ("\\operatorname{softmax}(\\tilde S^{(1)})", "\\operatorname{softmax}(\\tilde S^{(1)})"),
        ("\\text{implied } \\alpha_j", "\\text{implied } \\alpha_j"),
    ],
)
def test_math_label(label, latex):
    assert math_label(label) == latex


def test_labels_are_made_safe_in_latex_and_the_book():
    expl = Explanation(
        title="T",
        source="S",
        sections=[Section(title="s", items=[Mat(symbol="q_{Пиццу}", value=[[13.0, 14.0]])])],
        data={},
    )
    assert "\\[ q_{\\text{Пиццу}} = \\begin{bmatrix} 13 & 14 \\end{bmatrix} \\]" in to_latex(expl)
    assert (
        "{$\\displaystyle q_{\\text{Пиццу}} = \\begin{bmatrix} 13 & 14 \\end{bmatrix}$}"
        in to_latex(expl, fit_width=True)
    )
    assert "q_{\\text{Пиццу}} = \\begin{bmatrix} 13 & 14 \\end{bmatrix}" in to_book(expl)


def test_wide_matrices_raise_the_column_limit():
    expl = Explanation(
        title="T",
        source="S",
        sections=[
            Section(
                title="s",
                items=[
                    Mat(symbol="N", value=[[0.5] * 10]),
                    Mat(symbol="W", value=[[0.5] * 11]),
                ],
            )
        ],
        data={},
    )
    for fit_width in (False, True):
        lines = to_latex(expl, fit_width=fit_width).splitlines()
        assert sum("MaxMatrixCols" in line for line in lines) == 1
        i = lines.index("\\setcounter{MaxMatrixCols}{11}")
        if fit_width:
            assert lines[i + 1].startswith("\\[\\resizebox")
            assert "{$\\displaystyle W = \\begin{bmatrix}" in lines[i + 1]
        else:
            assert lines[i + 1].startswith("\\[ W = \\begin{bmatrix}")
