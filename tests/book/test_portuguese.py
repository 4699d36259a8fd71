"""The Portuguese book: a page for each page a student reads, the theme and the navigation in
Portuguese, the pages it shows in English marked as such, decimal commas, every matrix of the
worked example with its row labels, the figures of the pages, links that resolve.

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
from tests.book.conftest import ROOT, built_pages, mkdocs_config
from tests.book.test_figures import captions, cells, figures

pytestmark = pytest.mark.slow

#: the book's pages a student reads, each with its Portuguese file ``docs/<page>.pt.md``
STUDENT_PAGES = (
    "index",
    "by-hand",
    "trainable-weights",
    "scaled-dot-product",
    "causal-mask",
    "multi-head",
    "worked-example",
    "experiments",
    "explorer",
    "gradients",
    "exercises",
    "gqa",
    "rope",
    "windows-alibi",
    "kv-cache",
    "online-softmax",
    "variants-ablation",
    "teaching",
    "class-gate",
    "cli",
    "develop",
)
#: the pages the Portuguese book shows in English (the API reference)
IN_ENGLISH = ("api",)


def pt_page(page: str) -> str:
    """A page's place in the Portuguese book: ``"causal-mask"`` → ``"pt/causal-mask"``
    (the home page, ``"index"``, is ``"pt"``)."""
    return "pt" if page == "index" else f"pt/{page}"


#: the Portuguese pages: every ``docs/*.pt.md`` (the i18n plugin's suffix), as built
PT_PAGES = tuple(
    pt_page(f.name.removesuffix(".pt.md")) for f in sorted((ROOT / "docs").glob("*.pt.md"))
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


def test_every_page_a_student_reads_has_its_portuguese_page():
    assert {pt_page(p) for p in STUDENT_PAGES} <= set(PT_PAGES)
    assert not set(IN_ENGLISH) & set(STUDENT_PAGES)
    # every page of the English book is a student's page or one shown in English
    english = {f.stem for f in (ROOT / "docs").glob("*.md") if "." not in f.stem}
    assert english == set(STUDENT_PAGES) | set(IN_ENGLISH)


def test_every_portuguese_page_is_built_in_the_themes_portuguese(site):
    pages = built_pages(site)
    shown = {pt_page(p) for p in IN_ENGLISH}
    assert set(PT_PAGES) <= set(pages)
    # the Portuguese book: its pages and the ones it shows in English, nothing else
    assert set(PT_PAGES) | shown == {p for p in pages if p == "pt" or p.startswith("pt/")}
    for page in (*PT_PAGES, *shown):
        text = html_of(site, page)
        assert '<html lang="pt"' in text, page
        assert 'placeholder="Buscar"' in text and "Índice" in text, page
        assert 'placeholder="Search"' not in text and "Table of contents" not in text, page
        # the navigation in Portuguese, the language switcher to English
        nav = text[text.index("md-nav--primary") : text.index('class="md-content"')]
        for title in ("4. A máscara causal", "5. Atenção multi-cabeça", "1. Atenção à mão"):
            assert title in nav, (page, title)
        assert "1. Attention by hand" not in nav, page
        assert 'hreflang="en"' in text and 'hreflang="pt"' in text, page
        # a page shown in English says so, a Portuguese one does not
        assert ("Página em inglês" in text) == (page in shown), page
        # its text is marked English, its note Portuguese; a Portuguese page's text is not
        article = re.search(r'<article class="md-content__inner md-typeset"([^>]*)>', text)
        assert article and article[1] == (' lang="en"' if page in shown else ""), page
        assert ('<div class="admonition note" lang="pt">' in text) == (page in shown), page
    english = html_of(site, "causal-mask")  # negative control: an English page stays English
    assert '<html lang="en"' in english and 'placeholder="Search"' in english
    nav = english[english.index("md-nav--primary") : english.index('class="md-content"')]
    assert "1. Attention by hand" in nav and "Página em inglês" not in english


def test_the_language_switcher_leads_to_the_same_page_in_the_other_language(site):
    for page in STUDENT_PAGES:
        en = "" if page == "index" else page
        pt = pt_page(page)
        assert target(site, en, switcher(html_of(site, en))["pt"]) == (site / pt).resolve(), page
        assert target(site, pt, switcher(html_of(site, pt))["en"]) == (site / en).resolve(), page
    # a page shown in English leads to its English page too
    to_en = switcher(html_of(site, "pt/cli"))["en"]
    assert target(site, "pt/cli", to_en) == (site / "cli").resolve()


def target(site: Path, page: str, href: str) -> Path:
    """Where a link of ``page`` leads in the built site (an absolute path from its root)."""
    path = urlsplit(href).path
    return (site / path.lstrip("/") if path.startswith("/") else site / page / path).resolve()


def switcher(page_html: str) -> dict[str, str]:
    """The language switcher's links of a page: language → href."""
    return {
        lang: href
        for href, lang in re.findall(
            r'<a href="([^"]*)" hreflang="(\w+)" class="md-select__link"', page_html
        )
    }


def test_the_site_title_is_portuguese_on_the_portuguese_pages(site):
    config = mkdocs_config()
    i18n = next(p["i18n"] for p in config["plugins"] if isinstance(p, dict) and "i18n" in p)
    en = config["site_name"]
    pt = next(lang["site_name"] for lang in i18n["languages"] if lang["locale"] == "pt")
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
    page = html_of(site, "pt/worked-example")
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
    figs = figures(site, "pt/causal-mask")
    mask = next(t for _, t in figs if t[0] == "M")
    assert mask.count("\u2212∞") == n * (n - 1) // 2 and "consulta ↓" in mask
    heat = next(t for _, t in figs if t[0] == "A = softmax(S + M)")
    assert cells(A.tolist(), 3, ",") <= set(heat) and "chave →" in heat
    page = html_of(site, "pt/causal-mask")
    for lhs, labels, _ in displays(page):
        assert labels == [str(i + 1) for i in range(n)], lhs  # every matrix: a label per row
    assert len(displays(page)) == 4  # M, S̃, A and the expected dropout
    assert all(c.strip() for c in captions(site, "pt/causal-mask"))


def test_the_multi_head_page_shows_its_figures_in_portuguese(site):
    r = pizza_numbers()
    figs = figures(site, "pt/multi-head")
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
    assert len(captions(site, "pt/multi-head")) == len(set(captions(site, "pt/multi-head")))
    # the split of seed 002 in matrices with a token (or a head) on each row
    page = html_of(site, "pt/multi-head")
    rows = {lhs.split(" = ")[0]: labels for lhs, labels, _ in displays(page)}
    tokens = list(r.trace.tokens)
    assert rows["X"] == tokens and rows["Q^{(1)}"] == tokens and rows["A^{(3)}"] == tokens


def test_the_q03_answer_draws_its_curves_in_portuguese(site):
    figs = figures(site, "pt/experiments")
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
        hrefs = re.findall(r'href="([^"]+)"', html_of(site, page))
        reached = {target(site, page, h) for h in hrefs if not urlsplit(h).scheme}
        # the navigation of each page links every other Portuguese page
        for other in PT_PAGES:
            assert (site / other).resolve() in reached, (page, other)
    # negative control: a link to a page that was not built, or a .md link left unrewritten
    assert broken_hrefs(site, "pt/worked-example", ["causal-mask.md", "../nada/"]) == [
        "causal-mask.md",
        "../nada/",
    ]


def test_every_link_of_every_page_resolves(site):
    """Site-wide, not only the Portuguese pages: a ``.md`` link printed by a page's code block
    is left as it is by the build (``variants-ablation``'s ``gqa.md`` was, and led nowhere)."""
    broken = {page: bad for page in built_pages(site) if (bad := broken_links(site, page))}
    assert broken == {}
