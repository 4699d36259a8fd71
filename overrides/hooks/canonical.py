"""mkdocs hook: canonical links only for a book published at an address.

``sitemap.xml`` (the i18n plugin's, with each page's other language) and the canonical links
are written from ``site_url``; the book's default, ``http://127.0.0.1:8000/`` (``make docs``),
is no address a search engine should be sent to. Built with that default, the pages carry no
``<link rel="canonical">`` (the sitemap stays, with this machine's addresses); built for
publishing (``ATTNREF_SITE_URL=https://…/ make site``, read by
``mkdocs.yml``'s ``!ENV``), the canonical links and the sitemap point to that address.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from mkdocs.config.defaults import MkDocsConfig

#: hosts of a book served on this machine, never published
LOCAL = frozenset({"127.0.0.1", "localhost", "::1"})
_CANONICAL = re.compile(r'\s*<link rel="canonical" href="[^"]*"\s*/?>')


def published(site_url: str | None) -> bool:
    """Whether ``site_url`` is an address readers reach (not this machine's)."""
    return bool(site_url) and (urlsplit(site_url).hostname or "") not in LOCAL


def on_post_page(output: str, page: object, config: MkDocsConfig) -> str:
    """The page without its canonical link where the book is not published."""
    return output if published(config.site_url) else _CANONICAL.sub("", output, count=1)
