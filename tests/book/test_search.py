"""A search per language: each book searches its own pages (overrides/hooks/search_languages).

On disk, the English index holds the English book and the Portuguese index the Portuguese book,
the pages it shows in English included, each with its language's stemmer. Every page's ``base``
leads to its own book's index. In Chromium, a reader searching from a Portuguese page gets
Portuguese pages, and from an English page English ones.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.book.test_portuguese import IN_ENGLISH, PT_PAGES, STUDENT_PAGES, html_of, pt_page

ROOT = Path(__file__).resolve().parents[2]


def index(site: Path, lang: str = "") -> dict:
    return json.loads((site / lang / "search" / "search_index.json").read_text(encoding="utf-8"))


def pages(idx: dict) -> set[str]:
    """The pages an index finds, as folders of the site (``""`` the home page)."""
    return {d["location"].split("#", 1)[0].rstrip("/") for d in idx["docs"]}


def base_of(page_html: str) -> str:
    config = re.search(r'<script id="__config" type="application/json">(.*?)</script>', page_html)
    assert config, "no __config block"
    return json.loads(config[1])["base"]


def load_hook():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "search_languages", ROOT / "overrides" / "hooks" / "search_languages.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_split_keeps_each_book_and_its_stemmer():
    hook = load_hook()
    combined = {
        "config": {"lang": ["en", "pt"], "separator": " "},
        "docs": [
            {"location": "", "title": "Home", "text": ""},
            {"location": "causal-mask/#mask", "title": "The mask", "text": ""},
            {"location": "cli/", "title": "CLI", "text": ""},
            {"location": "pt/", "title": "Início", "text": ""},
            {"location": "pt/causal-mask/#mask", "title": "A máscara", "text": ""},
        ],
    }
    out = hook.split(combined, ["pt"])
    assert out[""]["config"]["lang"] == ["en"] and out["pt"]["config"]["lang"] == ["pt"]
    assert [d["title"] for d in out[""]["docs"]] == ["Home", "The mask", "CLI"]
    # the Portuguese book: its pages from its own folder, and the page it shows in English
    assert [(d["location"], d["title"]) for d in out["pt"]["docs"]] == [
        ("", "Início"),
        ("causal-mask/#mask", "A máscara"),
        ("cli/", "CLI"),
    ]
    # a page's base: one folder less, and a page without the theme's block refused
    page = '<script id="__config" type="application/json">{"annotate": null, "base": "../..",'
    assert '"base": ".."' in hook.rebase(page)
    assert '"base": "."' in hook.rebase(page.replace("../..", ".."))
    with pytest.raises(ValueError, match="no base to move"):
        hook.rebase("<html></html>")


def test_each_book_has_its_own_index(site):
    en, pt = index(site), index(site, "pt")
    assert en["config"]["lang"] == ["en"] and pt["config"]["lang"] == ["pt"]
    # the English index: the English book, no Portuguese page (the control: the plugin's own
    # index had both)
    assert not any(d["location"].startswith("pt/") for d in en["docs"])
    assert {"" if p == "index" else p for p in (*STUDENT_PAGES, *IN_ENGLISH)} <= pages(en)
    # the Portuguese index: every page of its book, each where it is built
    assert {p.removeprefix("pt").lstrip("/") for p in PT_PAGES} <= pages(pt)
    assert set(IN_ENGLISH) <= pages(pt)
    for page in pages(pt):
        assert (site / "pt" / page / "index.html").is_file(), page
    titles = {d["title"] for d in pt["docs"]}
    assert "4. A máscara causal" in titles and "4. The causal mask" not in titles


def test_each_page_finds_its_books_index(site):
    for page in ("", "causal-mask", "cli"):
        assert (site / page / base_of(html_of(site, page))).resolve() == site.resolve(), page
    for page in (*PT_PAGES, *(pt_page(p) for p in IN_ENGLISH)):
        found = (site / page / base_of(html_of(site, page))).resolve()
        assert found == (site / "pt").resolve(), page


@pytest.mark.slow
def test_a_reader_searches_the_book_of_the_page(site, chromium):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.book.browser import RecordingProxy, make_driver, serve_dir

    def results(drv, url: str, query: str) -> list[str]:
        drv.get(url)
        box = WebDriverWait(drv, 30).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "input.md-search__input")
        )
        drv.execute_script("arguments[0].focus()", box)
        box.send_keys(query)
        WebDriverWait(drv, 30).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, ".md-search-result__item a")
        )
        return [
            a.get_attribute("href")
            for a in drv.find_elements(By.CSS_SELECTOR, ".md-search-result__item a")
        ]

    with serve_dir(site) as base, RecordingProxy() as proxy:
        drv = make_driver(proxy)
        try:
            pt = results(drv, f"{base}/pt/causal-mask/", "máscara causal")
            en = results(drv, f"{base}/causal-mask/", "causal mask")
            both = results(drv, f"{base}/pt/causal-mask/", "softmax")
            # typed without its accents, as a reader may: the page with "distribuições"
            plain = results(drv, f"{base}/pt/causal-mask/", "distribuicoes")
            shown = " ".join(
                e.text for e in drv.find_elements(By.CSS_SELECTOR, ".md-search-result__item")
            )
            hidden = drv.find_elements(By.CSS_SELECTOR, ".md-search-result__item span[hidden]")
            hidden_shown = [e.text for e in hidden if e.is_displayed()]
            errors = [e for e in drv.get_log("browser") if e["level"] == "SEVERE"]
        finally:
            drv.quit()
    assert pt and all("/pt/" in href for href in pt), pt
    assert en and not any("/pt/" in href for href in en), en
    # a word both books use: from a Portuguese page, only the Portuguese book's pages
    assert both and all("/pt/" in href for href in both), both
    assert any("/pt/causal-mask/" in href for href in plain), plain
    # no page writes "distribuicoes": the hidden folded words found "distribuições", and
    # they stay hidden in the preview
    assert hidden and not hidden_shown, hidden_shown
    assert "distribuicoes" not in shown, shown
    assert not errors, errors


def test_each_section_also_carries_its_accented_words_without_accents(site):
    """lunr matches letters as they are: "mascara" found nothing where "máscara" found page 4.
    Each section keeps its text as written and, hidden, its accented words unaccented."""
    hook = load_hook()
    doc = {"location": "x/", "title": "A máscara", "text": "<p>ação &amp; não</p>"}
    assert hook.folded(doc)["text"] == "<p>ação &amp; não</p> <span hidden>acao mascara nao</span>"
    plain = {"location": "x/", "title": "The mask", "text": "<p>no accent</p>"}
    assert hook.folded(plain) == plain  # the control: nothing to add
    mask = [d for d in index(site, "pt")["docs"] if d["location"].startswith("causal-mask/")]
    assert mask and all("máscara" not in d["text"] or "mascara" in d["text"] for d in mask)
    assert any("<span hidden>" in d["text"] for d in mask)
    # the word the browser test searches is written only with its accents: only folding finds it
    # (the pages' prose and the book's package, where their printed words live)
    sources = [*(ROOT / "docs").glob("*.md"), *(ROOT / "book").rglob("*.py")]
    pages_text = [p.read_text(encoding="utf-8") for p in sources]
    assert any("distribuições" in t for t in pages_text)
    assert not any("distribuicoes" in t.lower() for t in pages_text)
