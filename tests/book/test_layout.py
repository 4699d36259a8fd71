"""The layout fits: no page of the book scrolls sideways on a desktop (1280 px) or a phone
(390 px), the long formulas of the teaching pages fit their column on a desktop, no matrix is
cut at either width (docs/assets/katex-init.js shrinks a display formula wider than its column,
down to half its size: a formula wider than that may scroll inside its box only when it holds
no matrix), no code block's content is wider than its box at either width (docs/assets/
extra.css wraps a long line: nothing cut, nothing behind a scroll bar), and KaTeX writes no
warning to the console (e.g. Unicode text inside math).

Every page the build produced is visited (pages added later are covered without a change
here). Negative controls show the measures can fail.
"""

from __future__ import annotations

import time

import pytest

from tests.book.conftest import built_pages

pytestmark = [pytest.mark.slow, pytest.mark.soak]

WIDTHS = (1280, 390)
#: pages whose display formulas are written to fit a desktop column (no inner scroll bar)
FORMULAS_FIT = (
    "index",
    "by-hand",
    "trainable-weights",
    "scaled-dot-product",
    "causal-mask",
    "multi-head",
    "worked-example",
    "pt/worked-example",
    "pt/causal-mask",
    "pt/multi-head",
    "pt/gradients",
    "pt/exercises",
)

#: the smallest size katex-init.js shrinks a display formula to (its FIT_FLOOR)
FIT_FLOOR = 0.5

OVERFLOW = r"""
const W = window.innerWidth;
const over = [...document.querySelectorAll('article div.arithmatex')]
  .filter(e => e.scrollWidth > e.clientWidth + 1);
const source = e => (e.querySelector('annotation') || {textContent: ''}).textContent;
const fit = e => parseFloat((e.querySelector('.katex') || {dataset: {}}).dataset.fit || '1');
const cut = over
  .filter(e => /\\begin\{[bpvBV]?matrix\}/.test(source(e)) || fit(e) > arguments[0] + 0.005)
  .map(e => e.textContent.trim().slice(0, 60));
const longest = e => e.textContent.split('\n').reduce((a, l) => l.length > a.length ? l : a, '');
const code = [...document.querySelectorAll('article pre > code')]
  .filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => `${e.scrollWidth} > ${e.clientWidth} px: ${longest(e).trim().slice(0, 60)}`);
return {page: document.documentElement.scrollWidth, inner: W,
        math: over.map(e => e.textContent.trim().slice(0, 60)), cut: cut, code: code};
"""


def settle(drv) -> None:
    """Wait until KaTeX has typeset the page (or it has no math)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(drv, 15, poll_frequency=0.05).until(
        lambda d: d.execute_script(
            "return document.querySelectorAll('article .arithmatex').length === 0 ||"
            " document.querySelectorAll('article .katex').length > 0"
        )
    )
    time.sleep(0.2)


def katex_warnings(drv) -> list[str]:
    """Console warnings that KaTeX writes (strict mode, missing character metrics)."""
    words = ("KaTeX", "LaTeX-incompatible", "character metrics", "math mode")
    return [
        e["message"]
        for e in drv.get_log("browser")
        if e["level"] in ("WARNING", "SEVERE") and any(w in e["message"] for w in words)
    ]


REFITTED = r"""
return window.innerWidth === arguments[0] &&
  [...document.querySelectorAll('.arithmatex .katex-display > .katex')]
    .every(k => k.dataset.fit !== undefined);
"""


def resize(drv, width: int) -> None:
    """The window at ``width`` px, once katex-init.js has fitted every display formula to it
    (its resize handler, what a reader turning a phone or narrowing a window gets)."""
    from selenium.webdriver.support.ui import WebDriverWait

    drv.execute_script(
        "document.querySelectorAll('.katex[data-fit]').forEach(k => delete k.dataset.fit)"
    )
    drv.set_window_size(width, 900)
    WebDriverWait(drv, 15, poll_frequency=0.05).until(lambda d: d.execute_script(REFITTED, width))


def visit(base: str, pages: list[str]) -> tuple[list, list, list, list]:
    """Every page in ``pages`` loaded once in a browser of its own and measured at each width
    of ``WIDTHS`` (the first as loaded, the others resized to): what is too wide, what is cut,
    what KaTeX warned of, which code blocks are wider than their box."""
    from tests.book.browser import make_driver

    wide: list[tuple[int, str, int, int]] = []
    cut: list[tuple[str, list[str]]] = []
    warned: list[tuple[str, list[str]]] = []
    code: list[tuple[str, list[str]]] = []
    drv = make_driver()
    try:
        for page in pages:
            drv.set_window_size(WIDTHS[0], 900)
            drv.get(f"{base}/" if page == "." else f"{base}/{page}/")
            settle(drv)
            for width in WIDTHS:
                if width != WIDTHS[0]:
                    resize(drv, width)
                r = drv.execute_script(OVERFLOW, FIT_FLOOR)
                assert r["inner"] == width, (page, r["inner"])  # the width is the one asked
                if r["page"] > r["inner"]:
                    wide.append((width, page, r["page"], r["inner"]))
                name = "index" if page == "." else page
                if width == 1280 and name in FORMULAS_FIT and r["math"]:
                    cut.append((page, r["math"]))
                elif r["cut"]:  # a matrix cut, or a formula scrolling before its floor
                    cut.append((f"{page} at {width} px", r["cut"]))
                if r["code"]:
                    code.append((f"{page} at {width} px", r["code"][:3]))
            if found := katex_warnings(drv):
                warned.append((page, found[:3]))
    finally:
        drv.quit()
    return wide, cut, warned, code


def test_no_page_scrolls_sideways_and_formulas_fit(site, chromium):
    from concurrent.futures import ThreadPoolExecutor

    from tests.book.browser import make_driver, serve_dir

    pages = built_pages(site)
    assert len(pages) >= 12 and "." in pages and "pt/worked-example" in pages
    with serve_dir(site) as base:
        # the pages in two halves, a browser each (the machine's two cores both draw); each
        # page is typeset once and measured at every width
        with ThreadPoolExecutor(2) as pool:
            found = list(pool.map(lambda half: visit(base, pages[half::2]), (0, 1)))
        wide = [x for f in found for x in f[0]]
        cut = [x for f in found for x in f[1]]
        warned = [x for f in found for x in f[2]]
        code = [x for f in found for x in f[3]]
        drv = make_driver()
        try:
            drv.get(f"{base}/pt/worked-example/")
            settle(drv)
            assert drv.execute_script(OVERFLOW, FIT_FLOOR)["page"] <= drv.execute_script(
                "return window.innerWidth"
            )
            # negative controls: a too-wide block is seen; a KaTeX warning is seen
            drv.execute_script(
                "document.querySelector('article').insertAdjacentHTML('beforeend',"
                " '<div style=\"width: 3000px; height: 1px\"></div>')"
            )
            r = drv.execute_script(OVERFLOW, FIT_FLOOR)
            assert r["page"] > r["inner"]
            # a 30-column matrix typeset without the fit (as KaTeX alone does) is seen as cut
            drv.execute_script(
                "const d = document.createElement('div'); d.className = 'arithmatex';"
                "document.querySelector('article').prepend(d);"
                "katex.render('A = \\\\begin{bmatrix}' + Array(30).fill('0.123').join('&')"
                " + '\\\\end{bmatrix}', d, {displayMode: true});"
            )
            assert drv.execute_script(OVERFLOW, FIT_FLOOR)["cut"]
            drv.execute_script("katex.renderToString('\\\\text{Пиццу} Я', {strict: 'warn'})")
            assert katex_warnings(drv)
            # a code line far wider than the page: wrapped by the book's CSS, so it fits; the
            # same line unwrapped (white-space: pre, as before) is seen as wider than its box
            long_line = (
                "'<pre id=\"long\"><code>' + 'explain --example '.repeat(80) + '</code></pre>'"
            )
            drv.execute_script(
                f"document.querySelector('article').insertAdjacentHTML('beforeend', {long_line})"
            )
            assert drv.execute_script(OVERFLOW, FIT_FLOOR)["code"] == []
            drv.execute_script("document.querySelector('#long > code').style.whiteSpace = 'pre'")
            assert drv.execute_script(OVERFLOW, FIT_FLOOR)["code"]
            # the phone's measure follows the resize: the worked example, typeset at 1280 px and
            # narrowed to 390, has its matrices refitted (none cut); the same formulas at the
            # size typeset for 1280 px are seen as cut at 390
            drv.set_window_size(1280, 900)
            drv.get(f"{base}/worked-example/")
            settle(drv)
            resize(drv, 390)
            assert drv.execute_script(OVERFLOW, FIT_FLOOR)["cut"] == []
            drv.execute_script(
                "document.querySelectorAll('.katex').forEach(k => k.style.fontSize = '')"
            )
            assert drv.execute_script(OVERFLOW, FIT_FLOOR)["cut"]
        finally:
            drv.quit()
    assert wide == [], wide
    assert cut == [], cut
    assert warned == [], warned
    assert code == [], code
