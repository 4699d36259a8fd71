r"""``explain --format latex`` typesets every symbol of its prose and headings as math (issue 31,
item 8): no ``W\_O = I\_4``, ``d\_model``, ``X W\_Q$^{(i)}$`` (a text subscript, a math
superscript), over every example of the registry and every backward pass it has.

The measure counts escaped subscripts between letters (``W\_O``) outside math; a name of code
(``\texttt{attn\_weights}``) prints its underscore as itself and is not counted. The controls
show it counting the old text and the math it must not count.
"""

from __future__ import annotations

import re

import pytest

from attention_ref.render.latex import to_latex
from attention_ref.worked.registry import (
    EXAMPLE_NAMES,
    OWN_BACKWARD,
    explain_example,
    explain_example_backward,
)

ESCAPED_SUBSCRIPT = re.compile(r"[A-Za-z]\\_[A-Za-z0-9]")
#: display math, inline math, and code: where ``\_`` is not a symbol's subscript
NOT_PROSE = re.compile(
    r"\\\[.*?\\\]|\$[^$]*\$|\\texttt\{(?:[^{}]|\{[^{}]*\})*\}|^%.*$", re.S | re.M
)


def escaped_subscripts(latex: str) -> list[str]:
    """The escaped subscripts between letters outside math and code, with some context."""
    prose = NOT_PROSE.sub(" ", latex)
    return [prose[max(0, m.start() - 20) : m.end() + 20] for m in ESCAPED_SUBSCRIPT.finditer(prose)]


def explanations():
    for name in EXAMPLE_NAMES:
        yield pytest.param(name, False, id=name)
        if name in OWN_BACKWARD:
            yield pytest.param(name, True, id=f"{name}-backward")


@pytest.mark.parametrize(("name", "backward"), list(explanations()))
def test_every_symbol_of_the_prose_is_math(name, backward):
    expl = explain_example_backward(name) if backward else explain_example(name)
    latex = to_latex(expl, expl.precision)
    assert escaped_subscripts(latex) == []
    # the headings' formulas are math too, whole: no superscript outside a formula's $…$
    headings = re.findall(r"\\(?:sub)?section\*\{(.*)\}", latex)
    assert headings and not [h for h in headings if re.search(r"[A-Za-z]\$\^", h)]


def test_the_homeworks_symbols():
    latex = to_latex(explain_example("life-is-awesome"))
    assert "$W_O = I_4$" in latex and "$d_{\\text{model}} = 4$" in latex
    assert "$Q = X W_Q$" in latex and "$q_i \\cdot k_j$" in latex
    assert "\\subsection*{Projections: $Q^{(i)} = X W_Q^{(i)}$" in latex


def test_control_the_old_text_is_counted():
    """What the writer printed before: counted; the same symbols in math or code: not."""
    old = "(d\\_model = 4, h = 2, causal mask, W\\_O = I\\_4) Q$^{(i)}$ = X W\\_Q$^{(i)}$"
    assert len(escaped_subscripts(old)) == 4
    assert escaped_subscripts("one W\\_O here") == ["one W\\_O here"]
    assert escaped_subscripts("$W_O = I_4$, $\\sqrt{\\text{head\\_dim}}$") == []
    assert escaped_subscripts("\\texttt{attn\\_weights} and \\[ \\text{x\\_y} \\]") == []
