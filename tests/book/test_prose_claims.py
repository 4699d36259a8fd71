"""Every formula the book prints states one relation between two different sides.

Over the built site: no relation sign follows another with nothing between them ("≈ =",
"= ="), and no side repeats the one before it ("Q Kᵀ = Q Kᵀ = …"), in the typeset math and
in the prose (code listings excluded). The judge is tested first on what it must refuse (the
issue's two cases), then on the helpers that made them: a left-hand side ending in a relation
is refused by the page helpers, a matrix whose formula repeats its symbol by the document
model.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from attention_ref.render import Mat
from attnref_book.pages import labelled, matrix

#: a relation between two sides, as LaTeX or as text
RELATION = re.compile(r"\\approx(?![A-Za-z])|≈|(?<![=!<>])=(?![=])")
MATH = re.compile(r'<(div|span) class="arithmatex">(.*?)</\1>', re.S)
DELIMITERS = re.compile(r"\\[\[\]()]")
NOT_PROSE = re.compile(r"<(pre|code|script|style|svg)\b.*?</\1>", re.S)


def chain_faults(text: str) -> list[str]:
    """The faults of a chain of relations ``a = b ≈ c``: an empty side between two relations,
    or a side equal to the one before it, or to its end in prose ("the scores Q Kᵀ = Q Kᵀ")."""
    sides = [" ".join(s.split()) for s in RELATION.split(text)]
    faults = []
    for i in range(1, len(sides) - 1):  # the inner sides: each between two relations
        side, before = sides[i], sides[i - 1]
        if side == "":
            faults.append(f"two relations in a row in {text.strip()[:80]!r}")
        elif side == before or before.endswith(" " + side):
            faults.append(f"{side!r} repeats the side before it in {text.strip()[:80]!r}")
    return faults


def page_faults(page_html: str) -> list[str]:
    """`chain_faults` of each formula of a page, then of each line of its prose."""
    faults = []
    for _, body in MATH.findall(page_html):
        body = DELIMITERS.sub(" ", html.unescape(body))
        for line in body.split(r"\\"):  # each row of a display on its own
            faults += chain_faults(line)
    prose = html.unescape(re.sub(r"<[^>]+>", " ", NOT_PROSE.sub(" ", MATH.sub(" ", page_html))))
    for line in prose.splitlines():
        faults += chain_faults(line)
    return faults


# ------------------------------------------------------------------------- the judge


@pytest.mark.parametrize(
    "bad",
    [
        r'<div class="arithmatex">\[\mathbb{E}[\operatorname{dropout}_{0{,}5}(A)] \approx = '
        r"\begin{bmatrix} 1 \end{bmatrix}\]</div>",
        r'<div class="arithmatex">\[Q K^\top = Q K^\top = \begin{bmatrix} 0.29 \end{bmatrix}\]'
        "</div>",
        "<p>𝔼[dropout₀,₅(A)] ≈ = [1]</p>",
        "<p>the scores Q Kᵀ = Q Kᵀ = [0.29]</p>",
        "<p>x = = 1</p>",
    ],
)
def test_the_judge_refuses_a_double_relation_or_a_repeated_side(bad):
    assert page_faults(bad), bad


@pytest.mark.parametrize(
    "good",
    [
        r'<div class="arithmatex">\[\mathbb{E}[\operatorname{dropout}_{0.5}(A)] \approx '
        r"\begin{bmatrix} 1 \end{bmatrix}\]</div>",
        r'<div class="arithmatex">\[Q K^\top = \begin{bmatrix} 0.29 \end{bmatrix}\]</div>',
        r'<div class="arithmatex">\[\tilde S = S + M = \begin{bmatrix} 1 \end{bmatrix}\]</div>',
        r'<span class="arithmatex">\(e^{-\infty} = 0\)</span>',
        "<p>a = b = c, and <code>d_out % num_heads == 0</code></p>",
        "<pre><code>if x == y:\n    z = z = 1</code></pre>",
        r'<div class="arithmatex">\[\begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}\]'
        "</div>",
    ],
)
def test_the_judge_passes_one_relation_between_different_sides(good):
    assert page_faults(good) == [], good


# ----------------------------------------------------------------------- the helpers


@pytest.mark.parametrize("lhs", [r"\mathbb{E}[A] \approx", "A =", "A ≈ ", r"A \le"])
def test_a_left_hand_side_ending_in_a_relation_is_refused(lhs):
    with pytest.raises(ValueError, match="ends in a relation; pass relation="):
        matrix(lhs, [[1.0]])
    with pytest.raises(ValueError, match="ends in a relation"):
        labelled(lhs, [[1.0]], ["a"])


def test_the_relation_is_written_once():
    approx = labelled(r"\mathbb{E}[A]", [[0.5]], ["1"], relation="≈")
    assert r"\mathbb{E}[A] \approx \begin{array}" in approx and "= " not in approx
    assert r"\tilde S = S + M = \begin{bmatrix}" in matrix(r"\tilde S = S + M", [[1.0]])
    assert chain_faults(approx.strip("$\n")) == []
    with pytest.raises(ValueError, match="relation '<'"):
        matrix("A", [[1.0]], relation="<")


def test_a_matrix_whose_formula_repeats_its_symbol_is_refused():
    with pytest.raises(ValueError, match="its formula repeats its symbol"):
        Mat(symbol="Q K^\\top", value=[[1.0]], formula="Q K^\\top")
    with pytest.raises(ValueError, match="repeats its symbol"):
        Mat(symbol="QK^\\top", value=[[1.0]], formula="Q K^\\top")  # spacing is not a difference
    assert Mat(symbol="S", value=[[1.0]], formula="Q K^\\top / \\sqrt{2}").formula


# --------------------------------------------------------------------- the built book


@pytest.mark.slow
def test_no_page_of_the_book_writes_two_relations_or_repeats_a_side(site: Path):
    faults = {}
    for page in sorted(site.rglob("*.html")):
        found = page_faults(page.read_text(encoding="utf-8"))
        if found:
            faults[str(page.relative_to(site))] = found
    assert faults == {}
