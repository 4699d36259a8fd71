"""The built pages carry their figures: inline SVG drawn from numbers the reference computes.

Each expected value is recomputed here from `attention_ref` (never typed), then looked for in
the SVG text of the page where that step is taught. The Portuguese pages get the theme's
Portuguese strings and decimal commas.
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from attention_ref.reference.params import attention_params
from attention_ref.render import matrix_cells
from attention_ref.worked.i_want_pizza import pizza_numbers
from attention_ref.worked.life_is_awesome import life_trace
from tests.book.conftest import SHOTS

pytestmark = pytest.mark.slow

SVG_NS = "{http://www.w3.org/2000/svg}"
SVG = re.compile(r"<svg\b.*?</svg>", re.S)


class _Figures(HTMLParser):
    """The ``<figure class="attn-figure">`` elements of a page: their SVGs and caption."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.captions: list[str] = []
        self._in_caption = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_caption = self._in_caption or tag == "figcaption"
        if tag == "figcaption":
            self.captions.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "figcaption":
            self._in_caption = False

    def handle_data(self, data: str) -> None:
        if self._in_caption:
            self.captions[-1] += data


def figures(site: Path, page: str) -> list[tuple[str, list[str]]]:
    """``(svg text, texts)`` of each SVG figure on ``page``; every SVG must parse as XML."""
    html = (site / page / "index.html").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r'<figure class="attn-figure">.*?</figure>', html, re.S):
        for svg in SVG.findall(block):
            root = ET.fromstring(svg)
            assert root.tag == f"{SVG_NS}svg"
            out.append((svg, [t.text or "" for t in root.iter(f"{SVG_NS}text")]))
    return out


def captions(site: Path, page: str) -> list[str]:
    return _Figures((site / page / "index.html").read_text(encoding="utf-8")).captions


def cells(values, precision: int, decimal: str = ".") -> set[str]:
    """The strings a heatmap prints for ``values`` (rows of floats)."""
    return {f"{v:.{precision}f}".replace(".", decimal) for row in values for v in row}


def test_worked_example_shows_a_heatmap_of_each_head_the_mask_and_the_flow(site):
    tr = life_trace()
    figs = figures(site, "worked-example")
    heat = {i: t for _, t in figs for i in range(tr.h) if f"A, head {i + 1}" in t}
    assert sorted(heat) == list(range(tr.h))
    for i, shown in heat.items():
        for tok in tr.tokens:
            assert shown.count(tok) == 2  # a query row and a key column
        assert cells(tr.head(i)["A"].tolist(), 3) <= set(shown)
    mask = next(t for _, t in figs if "M" in t)
    assert mask.count("\u2212∞") == len(tr.tokens) * (len(tr.tokens) - 1) // 2
    flow = next(t for _, t in figs if any(s.startswith("Concat of") for s in t))
    shape = "(" + ", ".join(str(d) for d in tr.output.shape) + ")"
    assert f"output {shape}" in flow
    assert f"({len(tr.tokens)}, {tr.d_k})" in " ".join(flow)  # a head's Q, K, V
    assert len(captions(site, "worked-example")) == 3
    assert all(c.strip() for c in captions(site, "worked-example"))


def test_home_page_shows_the_data_flow_with_the_examples_shapes(site):
    tr = life_trace()
    figs = figures(site, ".")
    assert len(figs) == 1
    shown = figs[0][1]
    assert f"X ({tr.X.shape[0]}, {tr.X.shape[1]})" == " ".join(shown[shown.index("X") :][:2])
    assert sum(s.startswith("H = A V") for s in shown) == tr.h


def test_multi_head_shows_seed_002s_split_and_seed_003s_weight_blocks(site):
    r = pizza_numbers()
    figs = figures(site, "multi-head")
    titles = [t[0] for _, t in figs]  # each SVG's first text is its title
    for shape in (r.Q.shape, r.Q_reshaped.shape, r.Q_swapped.shape):
        dims = "(" + ", ".join(str(d) for d in shape) + ")"
        assert any(title.endswith(dims) for title in titles), dims
    # the tensor pictures show every entry of Q
    split = next(t for _, t in figs if t[0].startswith("swap ("))
    assert {f"{v:g}" for v in r.Q.flatten().tolist()} <= set(split)
    blocks = next(svg for svg, t in figs if t[0].startswith("The weights of one attention layer"))
    root = ET.fromstring(blocks)
    rects = [g.find(f"{SVG_NS}rect") for g in root.iter(f"{SVG_NS}g") if g.get("class") == "block"]
    area: dict[str, float] = {}
    for rect in rects:
        assert rect is not None
        w, h = float(rect.get("width", 0)), float(rect.get("height", 0))
        area[rect.get("y", "")] = area.get(rect.get("y", ""), 0.0) + w * h
    assert len(area) == 3 and len(set(area.values())) == 1  # equal areas for h = 1, 2, 4
    d_model = 8
    total = attention_params(d_model, 1, bias=False).total
    assert next(iter(area.values())) == pytest.approx(total * 8.0**2)  # 8 px per unit
    heat = [t for _, t in figs if t[0].startswith("A, head")]
    assert len(heat) == r.trace.h


@pytest.mark.parametrize(
    ("page", "what"),
    [
        ("causal-mask", "M"),
        ("causal-mask", "A = softmax(S + M)"),
        ("by-hand", "α for the query “shiny”"),
        ("trainable-weights", "A"),
        ("scaled-dot-product", "softmax weights of one query"),
    ],
)
def test_the_other_pages_show_their_figure(site, page, what):
    figs = figures(site, page)
    assert any(t[0].startswith(what) for _, t in figs), [t[0] for _, t in figs]
    html = (site / page / "index.html").read_text(encoding="utf-8")
    said = [c for c in captions(site, page) if c.strip()]
    assert len(said) == html.count('<figure class="attn-figure">') > 0  # each has a caption


def test_portuguese_page_has_the_themes_portuguese_decimal_commas_and_row_labels(site):
    tr = life_trace()
    html = (site / "pt" / "worked-example" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="pt"' in html and "Índice" in html
    assert 'lang="en"' in (site / "worked-example" / "index.html").read_text(encoding="utf-8")
    # every matrix of the English page's steps, with decimal commas and token rows
    math = " ".join(re.findall(r'class="arithmatex">(.*?)</', html, re.S))
    assert not re.search(r"\d\.\d", math)  # no decimal point in any formula
    for i in range(tr.h):
        for name in ("Q", "K", "V", "QKt", "S", "S_masked", "A", "H"):
            rows = matrix_cells(tr.head(i)[name].tolist(), 3, latex=True)
            for cells_ in rows:  # each row as bmatrix writes it, decimal commas, HTML-escaped
                row = " &amp; ".join(cells_).replace(".", "{,}")
                assert row in math, (name, i, row)
    label = r"\begin{array}{r} " + r" \\ ".join(rf"\text{{{t}}}" for t in tr.tokens)
    assert math.count(label) >= 3 * tr.h + 2  # X, Q, K, V, QKt, S, S̃, A, H, concat, output
    for section in ("Entradas", "Projeções", "Scores", "Softmax", "Concatenação"):
        assert section in html
    pt_figs = figures(site, "pt/worked-example")
    flow = next(t for _, t in pt_figs if any(s.startswith("Concat das") for s in t))
    assert f"saída ({len(tr.tokens)}, {tr.d_model})" in flow and "causal mask" not in " ".join(flow)
    heat = [t for _, t in pt_figs if t[0].startswith("A, cabeça")]
    assert len(heat) == tr.h
    assert cells(tr.head(0)["A"].tolist(), 3, ",") <= set(heat[0])


def test_headings_are_plain_words_or_katex(site):
    """No heading writes a formula in Unicode sub/superscripts (S⁽ⁱ⁾, Kᵀ…)."""
    pseudo = re.compile(r"[⁽⁾ⁱʰᵀ⁰¹²³⁴⁵⁶⁷⁸⁹√\u0303]")
    bad = []
    for page in ("worked-example", "multi-head", "pt/worked-example", "causal-mask"):
        html = (site / page / "index.html").read_text(encoding="utf-8")
        for h in re.findall(r"<h[1-4][^>]*>(.*?)</h[1-4]>", html, re.S):
            text = re.sub(r"<[^>]+>", "", h)
            if pseudo.search(text):
                bad.append((page, text))
    assert bad == []
    assert pseudo.search("Scores: S⁽ⁱ⁾")  # the pattern can fail


def test_figures_render_in_the_browser_and_screenshots(site, chromium):
    from tests.book.browser import make_driver, serve_dir

    SHOTS.mkdir(parents=True, exist_ok=True)
    with serve_dir(site) as base:
        drv = make_driver()
        try:
            drv.set_window_size(1280, 900)
            drv.get(f"{base}/worked-example/")
            sizes = drv.execute_script(
                "return [...document.querySelectorAll('article figure.attn-figure svg')]"
                ".map(s => { const r = s.getBoundingClientRect();"
                " const col = s.closest('article').getBoundingClientRect();"
                " return [r.width, r.height, r.right <= col.right + 1]; })"
            )
            assert len(sizes) >= 4 and all(w > 50 and h > 50 and inside for w, h, inside in sizes)
            drv.execute_script(
                "[...document.querySelectorAll('article h2')]"
                ".find(h => h.textContent.startsWith('Softmax')).scrollIntoView()"
            )
            time.sleep(0.8)
            drv.save_screenshot(str(SHOTS / "figure-attention-heatmaps.png"))
            drv.get(f"{base}/multi-head/")
            drv.execute_script(
                "document.querySelectorAll('article figure.attn-figure')[1].scrollIntoView()"
            )
            time.sleep(0.8)
            drv.save_screenshot(str(SHOTS / "figure-split-merge.png"))
            drv.get(f"{base}/pt/worked-example/")
            time.sleep(0.8)
            drv.save_screenshot(str(SHOTS / "pt-exemplo-resolvido.png"))
            drv.set_window_size(390, 844)
            drv.get(f"{base}/pt/worked-example/")
            drv.execute_script(
                "[...document.querySelectorAll('article h2')]"
                ".find(h => h.textContent.includes('Softmax')).scrollIntoView()"
            )
            time.sleep(0.8)
            drv.save_screenshot(str(SHOTS / "pt-exemplo-resolvido-phone.png"))
        finally:
            drv.quit()
    for name in ("figure-attention-heatmaps", "figure-split-merge", "pt-exemplo-resolvido"):
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000
