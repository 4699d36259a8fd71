r"""`latex_text` and `math_label`: the prose and labels as LaTeX that pdflatex compiles."""

from __future__ import annotations

import pytest

from attention_ref.render import Explanation, Mat, Section, latex_text, to_book
from attention_ref.render.latex import math_label, to_latex


@pytest.mark.parametrize(
    ("text", "latex"),
    [
        ("d_model = 4", "d\\_model = 4"),
        (
            "50% & #1 {x} $5 a^b ~c \\d",
            "50\\% \\& \\#1 \\{x\\} \\$5 a\\textasciicircum{}b "
            "\\textasciitilde{}c \\textbackslash{}d",
        ),
        ("<eos> | x", "\\textless{}eos\\textgreater{} \\textbar{} x"),
        ("--input", "-{}-input"),
        ('"Life is awesome"', "``Life is awesome''"),
        ('("Пиццу" = [13..18])', "(``Пиццу'' = [13..18])"),
        ("Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾", "Q$^{(i)}$ = X W\\_Q$^{(i)}$"),
        ("K⁽¹⁾ᵀ", "K$^{(1)\\top }$"),
        ("H⁽ʰ⁾", "H$^{(h)}$"),
        ("x₁ + xᵢ", "x$_{1}$ + x$_{i}$"),
        ("exercício", "exerc\\'{\\i}cio"),  # a dotless i under the accent
        ("divided by √2.", "divided by $\\sqrt{2}$."),
        ("/ √d_k, with", "/ $\\sqrt{d_k}$, with"),
        ("1/√d_in", "1/$\\sqrt{d_{\\text{in}}}$"),
        ("√head_dim + M", "$\\sqrt{\\text{head\\_dim}}$ + M"),
        ("√ alone", "$\\surd$ alone"),
        ("−∞ above", "$-\\infty$ above"),  # one formula, never "$-$$\infty$"
        ("e^(−∞) = 0", "e\\textasciicircum{}($-\\infty$) = 0"),
        ("S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M", "$\\tilde{S}^{(i)}$ = S$^{(i)}$ + M"),
        ("α = softmax(ω)", "$\\alpha$ = softmax($\\omega$)"),
        ("z = Σ_j α_j x_j", "z = $\\Sigma$\\_j $\\alpha$\\_j x\\_j"),
        ("q · k, 2 × 3 → 6", "q $\\cdot$ k, 2 $\\times$ 3 $\\to$ 6"),
        (
            "∂L/∂W ∈ ℝ^{3×4}",
            "$\\partial$L/$\\partial$W $\\in$ $\\mathbb{R}$\\textasciicircum{}\\{3$\\times$4\\}",
        ),
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
    assert (
        "{$\\displaystyle q_{\\text{Пиццу}} = \\begin{bmatrix} 13 & 14 \\end{bmatrix}$}"
        in to_latex(expl)
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
    lines = to_latex(expl).splitlines()
    assert sum("MaxMatrixCols" in line for line in lines) == 1
    i = lines.index("\\setcounter{MaxMatrixCols}{11}")
    assert (
        lines[i + 1].startswith("\\[\\resizebox")
        and "{$\\displaystyle W = \\begin{bmatrix}" in lines[i + 1]
    )
