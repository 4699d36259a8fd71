"""The book's helpers (`attnref_book.pages` and `.figures`), without building the site."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from attention_ref.worked.life_is_awesome import life_trace
from attnref_book import figures, pages


def test_plain_heading_drops_a_unicode_formula_only():
    assert pages.plain_heading("Scores: S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k, with d_k = 2") == "Scores"
    assert pages.plain_heading("Causal mask: S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M") == "Causal mask"
    kept = "Split into heads: reshape, then swap"
    assert pages.plain_heading(kept) == kept
    assert pages.plain_heading("Inputs") == "Inputs"


def test_decimal_commas():
    assert pages.prose("erro 4.8e-04, em attnref_book, v 0.5", "pt") == (
        "erro 4,8e-04, em attnref_book, v 0,5"
    )
    assert pages.math_said(r"\begin{bmatrix} 1.414 & -2.5 \end{bmatrix}", "pt") == (
        r"\begin{bmatrix} 1{,}414 & -2{,}5 \end{bmatrix}"
    )
    # English keeps its points
    assert pages.prose("v 0.5", "en") == "v 0.5"
    assert pages.math_said("1.414", "en") == "1.414"


def test_labelled_puts_a_label_on_each_row():
    out = pages.labelled("A", [[0.5, 0.25], [1.0, 0.0]], ["Life", "a_b"], 2, lang="pt")
    assert r"\begin{array}{r} \text{Life} \\ \text{a\_b} \end{array}" in out
    assert "0{,}50" in out and "0.50" not in out
    assert "0.50" in pages.labelled("A", [[0.5, 0.25], [1.0, 0.0]], ["x", "y"], 2)
    with pytest.raises(ValueError, match="2 rows but 1 labels"):
        pages.labelled("A", [[0.5], [1.0]], ["x"])


def test_example_places_figures_after_their_step_and_refuses_an_unknown_step():
    text = pages.example("life-is-awesome", heading=2, after={"Softmax": "FIGURE-HERE"})
    lines = text.split("\n")
    at = lines.index("FIGURE-HERE")
    before = [ln for ln in lines[:at] if ln.startswith("## ")]
    after = [ln for ln in lines[at:] if ln.startswith("## ")]
    assert before[-1].startswith("## Softmax") and after[0].startswith("## Head outputs")
    with pytest.raises(ValueError, match="no step"):
        pages.example("life-is-awesome", heading=2, after={"Nonexistent": "x"})


def test_figure_helpers_draw_what_the_trace_holds():
    tr = life_trace()
    heat = figures.attention_heatmaps(tr, precision=3)
    assert len(heat) == tr.h
    for i, svg in enumerate(heat):
        texts = {t.text for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")}
        assert {f"{v:.3f}" for row in tr.head(i)["A"].tolist() for v in row} <= texts
    flow = figures.flow_figure(tr)
    assert f"output ({tr.output.shape[0]}, {tr.output.shape[1]})" in flow
    assert f"Concat das {tr.h} cabeças" in figures.flow_figure(tr, lang="pt")
    html = figures.figure(heat, "A caption <with> markup")
    assert html.count('<div class="attn-panel">') == tr.h
    assert "<figcaption>A caption &lt;with&gt; markup</figcaption>" in html
