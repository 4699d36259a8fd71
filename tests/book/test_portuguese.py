"""The Portuguese pages of the built book: the theme in Portuguese, decimal commas, every matrix
of the worked example with its row labels, the figures of the new pages, links that resolve.

Expected numbers are recomputed here from `attention_ref` (never typed); each scanner is shown
failing on a page that breaks its rule (a negative control), so a pass means something.
"""

from __future__ import annotations

import html as htmllib
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import torch

from attention_ref import reference as ref
from attention_ref.render.latex import bmatrix
from attention_ref.worked.i_want_pizza import pizza_numbers
from attention_ref.worked.life_is_awesome import life_trace
from tests.book.conftest import built_pages, mkdocs_config
from tests.book.test_figures import captions, cells, figures

pytestmark = pytest.mark.slow

#: the pages of the "Português" section of the nav
PT_PAGES = (
    "pt/mascara-causal",
    "pt/multi-cabeca",
    "pt/exemplo-resolvido",
    "pt/q03",
    "pt/gradientes",
    "pt/exercicios",
    "pt/gqa",
    "pt/rope",
    "pt/janelas-alibi",
    "pt/cache-kv",
    "pt/softmax-online",
    "pt/ablacao-variantes",
    "pt/licao-de-casa",
)

#: a number written with a decimal point (or a thousands point, which reads as one)
DECIMAL_POINT = re.compile(r"\d\.\d")


class _Reading(HTMLParser):
    """What a reader reads in a page's article: prose and math (TeX source, as arithmatex
    leaves it for KaTeX), figure text (SVG ``<text>`` and ``<title>``), never code listings."""

    SKIP = frozenset({"pre", "code", "script", "style"})

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self._article = 0
        self._skip = 0
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "article":
            self._article += 1
        if tag in self.SKIP:
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self._article -= 1
        if tag in self.SKIP:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if self._article and not self._skip:
            self.chunks.append(data)


def decimal_points(page: str) -> list[str]:
    """Each number with a point between two digits that a reader reads on ``page`` (with its
    surroundings); code blocks, inline code and file names in code are left out."""
    text = " ".join(_Reading(page).chunks)
    return [text[max(0, m.start() - 30) : m.end() + 30] for m in DECIMAL_POINT.finditer(text)]


def html_of(site: Path, page: str) -> str:
    return (site / page / "index.html").read_text(encoding="utf-8")


def test_every_portuguese_page_is_built_in_the_themes_portuguese(site):
    pages = built_pages(site)
    assert set(PT_PAGES) <= set(pages)
    assert set(PT_PAGES) == {p for p in pages if p.startswith("pt/")}  # no PT page off the nav
    for page in PT_PAGES:
        text = html_of(site, page)
        assert '<html lang="pt"' in text, page
        assert 'placeholder="Buscar"' in text and "Índice" in text, page
        assert 'placeholder="Search"' not in text and "Table of contents" not in text, page
        # the nav lists the Portuguese pages under their Portuguese titles
        for title in ("A máscara causal", "Atenção multi-cabeça", "Exemplo resolvido"):
            assert title in text, (page, title)
    english = html_of(site, "causal-mask")  # negative control: an English page stays English
    assert '<html lang="en"' in english and 'placeholder="Search"' in english


def test_the_site_title_is_portuguese_on_the_portuguese_pages(site):
    config = mkdocs_config()
    en, pt = config["site_name"], config["extra"]["site_name_by_language"]["pt"]
    assert en != pt
    for page in PT_PAGES:
        text = html_of(site, page)
        title = re.search(r"<title>(.*?)</title>", text, re.S)
        assert title and title[1].strip().endswith(pt), (page, title)
        assert en not in text, page
        header = text.split('class="md-header__topic"', 1)[1][:400]
        assert pt in header, page
    english = html_of(site, "causal-mask")  # the control: an English page keeps its title
    assert en in english and pt not in english


def test_no_decimal_point_where_a_portuguese_reader_reads(site):
    found = {page: decimal_points(html_of(site, page)) for page in PT_PAGES}
    assert {p: hits for p, hits in found.items() if hits} == {}
    # the scanner finds points in prose, math and figures, and leaves code alone
    assert decimal_points(html_of(site, "causal-mask"))
    assert decimal_points(html_of(site, "worked-example"))
    sample = (
        "<article><p>a 0.5 b</p><span class='arithmatex'>\\(1.25\\)</span>"
        "<svg><text>2.0</text></svg><pre><code>x = 0.5</code></pre><code>v1.2</code>"
        "<p>429.824 parâmetros; 0,5 e 1\u202f000</p></article>"
    )
    assert len(decimal_points(sample)) == 4  # 0.5, 1.25, 2.0, 429.824; not the code


def displays(page: str) -> list[tuple[str, list[str], str]]:
    r"""Every display formula of the page as ``(lhs, row labels, bmatrix)``: ``lhs`` is what
    stands before ``= \begin{array}`` (the labels) or ``= \begin{bmatrix}``."""
    out = []
    for raw in re.findall(r'<div class="arithmatex">(.*?)</div>', page, re.S):
        tex = " ".join(htmllib.unescape(raw).split())
        m = re.search(r"\\begin\{array\}\{r\} (.*?) \\end\{array\}", tex)
        b = tex.find(r"\begin{bmatrix}")
        if b < 0:
            continue
        cut = m.start() if m else b
        lhs = tex[:cut].strip().removeprefix(r"\[").strip().removesuffix("=").strip()
        labels = re.findall(r"\\text\{(.*?)\}", m.group(1)) if m else []
        body = tex[b : tex.index(r"\end{bmatrix}", b) + len(r"\end{bmatrix}")]
        out.append((lhs, labels, body))
    return out


def missing_matrices(page: str, decimal: str = ",") -> list[str]:
    """The matrices of the worked example (seed 000) that ``page`` does not show as the
    reference computes them, ``decimal`` the decimal mark, with a token on each row where rows
    are tokens: X, the weights of each head, Q, K, V, Q Kᵀ, S, S̃, A, H per head, M, the concat,
    W_O and the output."""
    tr = life_trace()
    tokens = list(tr.tokens)
    shown = {lhs.split(" = ")[0]: (labels, body) for lhs, labels, body in displays(page)}
    sup = [f"^{{({i + 1})}}" for i in range(tr.h)]
    assert tr.W_O is not None and tr.M is not None
    want: list[tuple[str, torch.Tensor, bool]] = [("X", tr.X, True), ("M", tr.M, True)]
    for i, s in enumerate(sup):
        hd = tr.head(i)
        want += [(f"W_{r}{s}", getattr(tr, f"W_{r}")[i], False) for r in ("Q", "K", "V")]
        want += [(f"{r}{s}", hd[r], True) for r in ("Q", "K", "V")]
        want += [
            (f"Q{s} K^{{({i + 1})\\top}}", hd["QKt"], True),
            (f"S{s}", hd["S"], True),
            (f"\\tilde S{s}", hd["S_masked"], True),
            (f"A{s}", hd["A"], True),
            (f"H{s}", hd["H"], True),
        ]
    want += [
        ("\\operatorname{Concat}", tr.concat, True),
        ("W_O", tr.W_O, False),
        ("\\operatorname{MultiHead}", tr.output, True),
    ]
    missing = []
    for name, value, rows_are_tokens in want:
        p = 0 if name == "M" else 3
        expected = bmatrix(value.tolist(), p, decimal=decimal)
        labels, body = shown.get(name, (None, None))
        if body != expected or (rows_are_tokens and labels != tokens):
            missing.append(name)
    return missing


def test_the_worked_example_shows_every_matrix_with_its_row_labels(site):
    page = html_of(site, "pt/exemplo-resolvido")
    assert missing_matrices(page) == []
    # negative controls: a page without one display is caught
    first_a = page.index(r"A^{(1)} = \operatorname{softmax}")
    start = page.rindex('<div class="arithmatex">', 0, first_a)
    cut = page[:start] + page[page.index("</div>", first_a) + len("</div>") :]
    assert missing_matrices(cut) == ["A^{(1)}"]
    # the English page, one writer with it, shows the same matrices and labels in decimal
    # points; a page without the row labels misses them
    english = html_of(site, "worked-example")
    assert missing_matrices(english, ".") == [] and "S^{(1)}" in missing_matrices(english)
    unlabelled = re.sub(r"\\begin\{array\}\{r\}.*?\\end\{array\}", "", page, flags=re.S)
    assert "X" in missing_matrices(unlabelled)


def test_the_causal_mask_page_shows_the_mask_and_the_weights_in_portuguese(site):
    n = 4
    g = torch.Generator().manual_seed(0)  # the page's scores
    S = torch.randn(n, n, generator=g, dtype=torch.float64)
    A = ref.softmax_rows(ref.add_mask(S, ref.causal_mask(n)))
    figs = figures(site, "pt/mascara-causal")
    mask = next(t for _, t in figs if t[0] == "M")
    assert mask.count("\u2212∞") == n * (n - 1) // 2 and "consulta ↓" in mask
    heat = next(t for _, t in figs if t[0] == "A = softmax(S + M)")
    assert cells(A.tolist(), 3, ",") <= set(heat) and "chave →" in heat
    page = html_of(site, "pt/mascara-causal")
    for lhs, labels, _ in displays(page):
        assert labels == [str(i + 1) for i in range(n)], lhs  # every matrix: a label per row
    assert len(displays(page)) == 4  # M, S̃, A and the expected dropout
    assert all(c.strip() for c in captions(site, "pt/mascara-causal"))


def test_the_multi_head_page_shows_its_figures_in_portuguese(site):
    r = pizza_numbers()
    figs = figures(site, "pt/multi-cabeca")
    titles = [t[0] for _, t in figs]
    assert any(t.startswith("Atenção multi-cabeça com máscara") for t in titles)
    shape = "(" + ", ".join(str(d) for d in r.Q_swapped.shape) + ")"
    assert f"troca de eixos {shape}" in titles
    split = next(t for _, t in figs if t[0] == f"troca de eixos {shape}")
    assert {f"{v:g}" for v in r.Q.flatten().tolist()} <= set(split) and "cabeça 1" in split
    heat = [t for _, t in figs if t[0].startswith("A, cabeça")]
    assert len(heat) == r.trace.h
    assert cells(r.trace.A[0, 0].tolist(), 2, ",") <= set(heat[0])
    blocks = next(t for _, t in figs if t[0].startswith("Os pesos de uma camada de atenção"))
    assert any(s.endswith(" pesos") for s in blocks)
    assert len(captions(site, "pt/multi-cabeca")) == len(set(captions(site, "pt/multi-cabeca")))
    # the split of seed 002 in matrices with a token (or a head) on each row
    page = html_of(site, "pt/multi-cabeca")
    rows = {lhs.split(" = ")[0]: labels for lhs, labels, _ in displays(page)}
    tokens = list(r.trace.tokens)
    assert rows["X"] == tokens and rows["Q^{(1)}"] == tokens and rows["A^{(3)}"] == tokens


def test_the_q03_answer_draws_its_curves_in_portuguese(site):
    figs = figures(site, "pt/q03")
    curves = next(t for _, t in figs if "Perda de validação de cada braço" in t)
    assert "com atenção (Q02)" in curves and "sem atenção (Q03)" in curves
    assert any("," in s for s in curves)  # the axis has decimal commas


def broken_links(site: Path, page: str) -> list[str]:
    """The links of ``page`` to this site that lead to no file of the built site."""
    hrefs = re.findall(r'href="([^"]+)"', html_of(site, page) if page else "")
    return broken_hrefs(site, page, hrefs)


def broken_hrefs(site: Path, page: str, hrefs: list[str]) -> list[str]:
    bad = []
    for href in hrefs:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or not parts.path:
            continue  # another host, or an anchor on this page
        target = (site / page / parts.path).resolve()
        if not (target.is_file() or (target / "index.html").is_file()):
            bad.append(href)
    return bad


def test_the_portuguese_pages_link_to_each_other_and_every_link_resolves(site):
    for page in PT_PAGES:
        assert broken_links(site, page) == [], page
        text = html_of(site, page)
        others = [p for p in PT_PAGES if p != page]
        for other in others:  # the navigation of each page links every other Portuguese page
            assert f'href="../{other.removeprefix("pt/")}/"' in text, (page, other)
    # negative control: a link to a page that was not built, or a .md link left unrewritten
    assert broken_hrefs(site, "pt/exemplo-resolvido", ["mascara-causal.md", "../nada/"]) == [
        "mascara-causal.md",
        "../nada/",
    ]


def test_every_link_of_every_page_resolves(site):
    """Site-wide, not only the Portuguese pages: a ``.md`` link printed by a page's code block
    is left as it is by the build (``variants-ablation``'s ``gqa.md`` was, and led nowhere)."""
    broken = {page: bad for page in built_pages(site) if (bad := broken_links(site, page))}
    assert broken == {}
