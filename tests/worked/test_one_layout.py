"""One layout of a worked trace (issue 41): the homework's page and today's examples lay out
the one `AttentionTrace` through the same builder of each step, and every label is said in the
page's language."""

from __future__ import annotations

import importlib
import inspect

import pytest

from attention_ref import reference as ref
from attention_ref.render import Mat
from attention_ref.worked import life_is_awesome as life
from attention_ref.worked.layout import forward_sections, trace_sections
from attention_ref.worked.registry import EXAMPLES
from attention_ref.worked.trace import t


def matrices(sections: list) -> list[tuple[str, list, str | None]]:
    """Each step's matrices as (symbol, numbers rounded to 12 places, formula), in order."""
    out = []
    for s in sections:
        for m in s.items:
            assert isinstance(m, Mat)
            rounded = [[round(x, 12) for x in row] for row in m.value]
            out.append((m.symbol, rounded, m.formula))
    return out


def test_the_homeworks_layout_and_todays_lay_out_its_trace_alike():
    mha = life.life_trace()
    assert (mha.h, mha.g, mha.rope_base) == (2, 2, None)
    homework, today = trace_sections(mha), forward_sections(mha)
    # every step but the output's (its words name it MultiHead or out) is the same matrices
    assert len(homework) == len(today) == 7
    assert matrices(homework[:6]) == matrices(today[:6])
    assert [m.symbol for m in homework[0].items[:4]] == ["X", "W_Q^{(1)}", "W_K^{(1)}", "W_V^{(1)}"]
    # the output: the same numbers, each under its own symbol
    (out_hw,), (out_today,) = (
        [m for m in s.items if m.symbol.startswith("\\operatorname{")][-1:]
        for s in (homework[6], today[6])
    )
    assert (
        out_hw.symbol == "\\operatorname{MultiHead}" and out_today.symbol == "\\operatorname{out}"
    )
    assert out_hw.value == out_today.value and out_hw.formula == out_today.formula


def test_a_grouped_trace_keeps_query_heads_then_kv_heads():
    """With g < h the weights and projections are the h query heads' first, then each K/V
    head's K and V (the control of the head-by-head order above)."""
    tr = ref.masked_multihead_attention(
        t(life.LIFE_X),
        t(life.LIFE_W_Q),
        t(life.LIFE_W_K)[:1],
        t(life.LIFE_W_V)[:1],
        tokens=life.LIFE_TOKENS,
    )
    inputs, projections = forward_sections(tr)[:2]
    assert [m.symbol for m in inputs.items] == [
        "X",
        "W_Q^{(1)}",
        "W_Q^{(2)}",
        "W_K^{(1)}",
        "W_V^{(1)}",
    ]
    assert [m.symbol for m in projections.items] == ["Q^{(1)}", "Q^{(2)}", "K^{(1)}", "V^{(1)}"]


def test_biases_are_laid_out_where_the_trace_has_them():
    X, (Wq, Wk, Wv) = t(life.LIFE_X), (t(w) for w in (life.LIFE_W_Q, life.LIFE_W_K, life.LIFE_W_V))
    biased = ref.masked_multihead_attention(
        X, Wq, Wk, Wv, t(life.LIFE_W_O), b_K=t([[1, 0], [0, 1]]), b_O=t([1, 2, 3, 4])
    )
    sections = trace_sections(biased)
    symbols = [m.symbol for m in sections[0].items]
    assert "b_K^{(1)}" in symbols and "b_Q^{(1)}" not in symbols
    formulas = {m.symbol: m.formula for s in sections for m in s.items}
    assert formulas["K^{(2)}"] == "X W_K^{(2)} + b_K^{(2)}"
    assert formulas["Q^{(2)}"] == "X W_Q^{(2)}"
    assert formulas["\\operatorname{MultiHead}"] == "\\operatorname{Concat} \\cdot W_O + b_O"
    assert "b_O" in [m.symbol for m in sections[6].items]


#: The labels that are symbols or the documents' code (seeds 001's and 002's names and
#: expressions), the same in every language.
SYMBOLS = {
    "cos mθ_i",
    "sin mθ_i",
    "queries",
    "keys",
    "values",
    "attn_scores",
    "attn_weights",
    "context_vec",
    "context_vecs[0]",
    "W_O = out_proj.weight.T",
    "b_O = out_proj.bias",
    "isnan(mask) (1: NaN)",
    "isnan(softmax(S + mask)) (1: NaN)",
    "softmax(S + M)",
    "X[0]",
    "concat[0]",
    'Q[0, 2] ("Пиццу")',
}


@pytest.mark.parametrize(
    "name",
    [
        n
        for n, m in EXAMPLES.items()
        if "lang" in inspect.signature(importlib.import_module(m).explain).parameters
    ],
)
def test_every_matrix_label_is_said_in_the_pages_language(name):
    """A label under a matrix is words: the Portuguese page says none of the English ones."""
    explain = importlib.import_module(EXAMPLES[name]).explain

    def labels(lang: str) -> set[str]:
        e = explain(lang=lang)
        return {m.text for s in e.sections for m in s.items if isinstance(m, Mat) and m.text}

    en, pt = labels("en") - SYMBOLS, labels("pt") - SYMBOLS
    assert en, "the control: the English page labels some matrix"
    assert not en & pt, f"English labels on the Portuguese page: {sorted(en & pt)}"
