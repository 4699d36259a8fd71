"""mkdocs hook: every page with code as a Jupyter notebook, and a link to it on the page.

The notebooks are generated from the pages' sources by `attnref_book.notebooks` and added to
the site as ``notebooks/<page>.ipynb`` (the book's layout: a Portuguese page's under
``notebooks/pt/``), as mkdocs files: the link
at the top of each page is checked by ``mkdocs build --strict`` like any other link, and
``mkdocs serve`` serves them too. A hook, not a plugin: nothing to install, and the theme's
folder (``overrides/``) is where Material keeps its own hooks; mkdocs never copies ``*.py``
from it into the site.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from attnref_book.notebooks import (
    WORDS,
    has_code,
    notebook_path,
    page_language,
    page_notebook,
    site_page,
    to_json,
)

#: page (its file under docs/) -> its notebook (path in the site), for this build (the i18n
#: plugin builds the book once per language)
_NOTEBOOKS: dict[str, str] = {}


def _snippet_bases(config: MkDocsConfig) -> list[Path]:
    """pymdownx.snippets' base paths (default: the folder mkdocs runs from)."""
    options = config.mdx_configs.get("pymdownx.snippets", {})
    bases = options.get("base_path", ["."])
    return [Path(b) for b in ([bases] if isinstance(bases, str) else bases)]


@event_priority(-110)  # after the i18n plugin (-100) has chosen this language's files
def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Write the notebook of every page of this language's build that runs code, before the
    pages are rendered (a page shown in English in the Portuguese book has its English
    notebook)."""
    _NOTEBOOKS.clear()
    sources = {f.src_uri: f.content_string for f in files.documentation_pages()}
    places = {src: site_page(src) for src, text in sources.items() if has_code(text)}
    for src, page in places.items():
        notebook = page_notebook(
            page,
            sources[src],
            docs_dir=Path(config.docs_dir),
            snippet_bases=_snippet_bases(config),
            notebooks=list(places.values()),
            directory_urls=config.use_directory_urls,
            source=src,
        )
        _NOTEBOOKS[src] = notebook_path(page)
        files.append(File.generated(config, _NOTEBOOKS[src], content=to_json(notebook)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """The download link, under the page's title (or first, on a page without one)."""
    target = _NOTEBOOKS.get(page.file.src_uri)
    if target is None:
        return markdown
    href = posixpath.relpath(target, posixpath.dirname(page.file.src_uri) or ".")
    text = WORDS[page_language(site_page(page.file.src_uri))]["download"]
    link = f'[{text}]({href}){{ .attn-notebook download="{posixpath.basename(target)}" }}\n'
    title = re.search(r"^# .*\n", markdown, flags=re.M)
    if title is None:
        return f"{link}\n{markdown}"
    return f"{markdown[: title.end()]}\n{link}{markdown[title.end() :]}"
