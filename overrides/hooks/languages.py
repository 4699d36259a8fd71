"""mkdocs hook: the two languages of the book, where the i18n plugin leaves a gap.

* A page the Portuguese book shows in English says so, in Portuguese, first. The i18n plugin
  (``mkdocs-static-i18n``) builds the book once per language; a page with no file in the
  build's language (no ``docs/cli.pt.md``) is the default language's page, in that language's
  navigation (``fallback_to_default``).
* Such a page's text is marked as English (``lang="en"`` on its article) and the note as the
  build's language, so that a screen reader or a browser's translation reads each in its own
  language; the page around them (``<html lang="pt">``, menus, search) stays Portuguese.
* The language switcher's links lead to the same page in the other language (the plugin writes
  them per page); Material also writes each as a ``<link rel="alternate">`` in the head, and its
  script fetches ``sitemap.xml`` beside each such link, there a page's folder, where there is
  none (a 404 on every page). Those head links are dropped; the switcher keeps its links, and
  the plugin's ``sitemap.xml`` names each page's other language (``xhtml:link``) for search
  engines.
"""

from __future__ import annotations

import re

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

#: the note on a page shown in another language than the build's, per build language
IN_ENGLISH = {
    "pt": (
        '!!! note "Página em inglês"\n'
        "    Esta página ainda não tem versão em português: o texto abaixo é o da versão em "
        "inglês. O menu lista as páginas em português.\n\n"
    ),
}


def shown_in(page: Page, config: MkDocsConfig) -> tuple[str, str]:
    """``(the build's language, the page's language)``: ``("pt", "en")`` for a page the
    Portuguese book shows in English."""
    build = str(config.theme["language"])
    return build, str(getattr(page.file, "locale", build))


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    build, language = shown_in(page, config)
    if language == build or build not in IN_ENGLISH:
        return markdown
    return IN_ENGLISH[build] + markdown


_HEAD_ALTERNATE = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')


_ARTICLE = '<article class="md-content__inner md-typeset">'
_NOTE = '<div class="admonition note">'


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    """The page without the head's language links (the switcher in the header keeps them);
    a page shown in another language marked as such, its note as the build's."""
    head, sep, body = output.partition("</head>")
    build, language = shown_in(page, config)
    if language != build and build in IN_ENGLISH:
        article = body.index(_ARTICLE)  # the theme's article: a build without it fails here
        note = body.index(_NOTE, article)
        body = (
            body[:article]
            + _ARTICLE.replace(">", f' lang="{language}">')
            + body[article + len(_ARTICLE) : note]
            + _NOTE.replace(">", f' lang="{build}">')
            + body[note + len(_NOTE) :]
        )
    return _HEAD_ALTERNATE.sub("", head) + sep + body
