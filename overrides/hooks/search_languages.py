"""mkdocs hook: a search per language. Each book searches its own pages.

The i18n plugin (``mkdocs-static-i18n``) leaves one search index, over both books, at
``search/search_index.json``. Material's search reads ``search/search_index.json`` beside the
page's ``base`` (the `__config` block), and builds each result's link from that base.

After the plugin writes that index, this hook splits it in two:

* ``search/search_index.json`` holds the default language's pages (English), with lunr's
  stemmer for that language;
* ``pt/search/search_index.json`` holds the Portuguese book. That is its own pages, located
  from ``pt/``, plus the pages it shows in English (``cli/``, which lives at ``pt/cli/``), with
  lunr's Portuguese stemmer.

The Portuguese pages' ``base`` then points at ``pt/``, the root of their book. The base is
only used to find the index and to scope the theme's stored settings, since
``navigation.instant`` and the version selector are off. The assets keep their own
relative links.

Each section of both indexes also carries, hidden, its accented words written without their
accents (`folded`): lunr matches letters as they are, so "mascara" found nothing where
"máscara" found the causal mask's page. A reader types either; the preview shows the text as
written (the folded words are in a ``hidden`` span).

``tests/book/test_search.py`` holds each book to its own index (its controls: the combined
index, a Portuguese page searched with the English index) and the search to find a word typed
without its accents.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority

INDEX = Path("search") / "search_index.json"
_BASE = re.compile(
    r'(<script id="__config" type="application/json">\{"annotate": [^,]*, "base": ")([^"]*)(")'
)


_TAG = re.compile(r"<[^>]*>")
_WORD = re.compile(r"\w+")


def unaccented(word: str) -> str:
    """The word without its accents: each letter's combining marks dropped (NFD), ``ç`` as
    ``c``."""
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def folded(doc: dict) -> dict:
    """A section of the index with its accented words (title and text) also written without
    their accents, in a hidden span at the end of its text; a section without one as it is."""
    words = _WORD.findall(html.unescape(_TAG.sub(" ", f"{doc['title']} {doc['text']}")))
    plain = sorted({unaccented(w) for w in words} - set(words))
    if not plain:
        return doc
    return {**doc, "text": f"{doc['text']} <span hidden>{' '.join(plain)}</span>"}


def languages(config: MkDocsConfig) -> tuple[str, list[str]]:
    """``(the default language, the other languages)`` of the i18n plugin, or no others."""
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return str(config.theme["language"]), []
    default = str(i18n.default_language)
    return default, [str(lang) for lang in i18n.build_languages if lang != default]


def split(index: dict, others: list[str]) -> dict[str, dict]:
    """The one index as one per language: ``""`` (the default's, at the root) and each other
    language's, its locations from its own folder; a page the other book has no copy of
    (shown there in the default language) is in both."""
    docs = index["docs"]

    def page(location: str) -> str:
        return location.split("#", 1)[0]

    out: dict[str, dict] = {}
    own = [d for d in docs if not any(d["location"].startswith(f"{o}/") for o in others)]
    for lang in others:
        prefix = f"{lang}/"
        mine = [
            {**d, "location": d["location"][len(prefix) :]}
            for d in docs
            if d["location"].startswith(prefix)
        ]
        have = {page(d["location"]) for d in mine}
        shown = [d for d in own if page(d["location"]) not in have]
        out[lang] = {**index, "config": {**index["config"], "lang": [lang]}, "docs": mine + shown}
    default_lang = [x for x in index["config"]["lang"] if x not in others] or ["en"]
    out[""] = {**index, "config": {**index["config"], "lang": default_lang}, "docs": own}
    return {lang: {**part, "docs": [folded(d) for d in part["docs"]]} for lang, part in out.items()}


def rebase(page_html: str) -> str:
    """A page of another language's book with its ``base`` at that book's root (one folder
    less than the site's root: ``../..`` → ``..``, ``..`` → ``.``)."""

    def one_less(m: re.Match[str]) -> str:
        base = m[2]
        parts = base.split("/")
        up = "/".join(parts[:-1]) if len(parts) > 1 else "."
        return m[1] + up + m[3]

    new, n = _BASE.subn(one_less, page_html, count=1)
    if n != 1:
        raise ValueError("the theme's __config block changed: no base to move")
    return new


@event_priority(-200)  # after the i18n plugin's own post_build (-100), which writes the index
def on_post_build(config: MkDocsConfig) -> None:
    _, others = languages(config)
    site = Path(config.site_dir)
    path = site / INDEX
    if not others or not path.is_file():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    theirs = [any(d["location"].startswith(f"{o}/") for o in others) for d in index["docs"]]
    if not (any(theirs) and not all(theirs)):
        return  # an inner build's index (one book), or one already split: the last call splits
    for lang, part in split(index, others).items():
        target = site / lang / INDEX
        target.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(part, ensure_ascii=False, separators=(",", ":"))
        target.write_text(text, encoding="utf-8")
    for lang in others:
        for page in (site / lang).rglob("*.html"):
            text = page.read_text(encoding="utf-8")
            if '<script id="__config"' in text:
                page.write_text(rebase(text), encoding="utf-8")
