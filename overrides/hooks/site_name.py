"""mkdocs hook: the site's title in the page's language.

Material writes ``config.site_name`` in the header and in every page's ``<title>``; the site
has one. A Portuguese page (under ``docs/pt/``, or front matter ``language: pt``, the rule of
``overrides/partials/language.html``) gets the title that ``extra.site_name_by_language``
gives for its language, everywhere the English one would stand.
"""

from __future__ import annotations

import html

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.pages import Page

from attention_ref.book.notebooks import page_language


def site_name(page: Page, config: MkDocsConfig) -> str:
    """The title of the site for ``page``: its language's, else ``site_name``."""
    language = page.meta.get("language") or page_language(page.file.src_uri)
    names = config.extra.get("site_name_by_language", {})
    return str(names.get(language, config.site_name))


def on_post_page(output: str, *, page: Page, config: MkDocsConfig) -> str:
    name = site_name(page, config)
    if name == config.site_name:
        return output
    english = html.escape(config.site_name, quote=False)
    return output.replace(english, html.escape(name, quote=False))
