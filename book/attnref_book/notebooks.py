"""The book's pages as Jupyter notebooks: page → notebook, plain text work (no torch, no
Jupyter needed to import this module).

`page_notebook`, run by the book's mkdocs hook (``overrides/hooks/notebooks.py``) on every
page with code: the prose becomes markdown cells (math as ``$…$``/``$$…$$``, admonitions as
block quotes, attribute lists dropped, ``--8<--`` snippets resolved, links to pages as links
to their notebooks, local images as cell attachments), every ```` ```python exec="on" ````
block a code cell with the page's code unchanged, and each ``::: module`` (mkdocstrings) a
code cell calling `attnref_book.kernel.api`. A first pair of cells says where the
notebook comes from and calls `attnref_book.kernel.setup` (what runs in the notebook
is in `attnref_book.kernel`).
"""

from __future__ import annotations

import base64
import json
import mimetypes
import posixpath
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

#: where the notebooks live in the built site: ``notebooks/<page>.ipynb``, the docs' layout
NOTEBOOK_DIR = "notebooks"
#: the first line of a code cell whose printed output is shown as plain text, not Markdown
#: (markdown-exec's ``result="…"`` blocks)
PLAIN_MARK = "# output: plain text"

#: the notebooks' own words, per language of the book (a page at ``pt/…`` is Portuguese)
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "download": "Download this page as a Jupyter notebook",
        "intro": (
            "*This notebook was generated from the page `{page}` of the attnref book: the "
            "prose of the page, and each of its code blocks as a code cell, unchanged. Run it "
            "top to bottom in a kernel where attnref and the book's package are installed: in a "
            "clone of the repository, `make setup-dev` installs attnref, the book's package "
            "(`book/`) and ipykernel into `.venv`; choose `.venv/bin/python` as the kernel "
            "(JupyterLab, VS Code). Or `pip install -e CLONE -e CLONE/book` in your own "
            "environment. The next cell shows what a cell prints as the page shows it (Markdown, "
            "math, tables, figures) and finds the book's recorded results in the checkout's "
            "`docs/results`.*"
        ),
        "setup": (
            "# print() shows Markdown as on the page; the recorded results are read from\n"
            "# docs/results of the attnref checkout ($ATTNREF_DOCS names another docs folder).\n"
            "# Tiny Shakespeare, where a page reads it: $ATTNREF_DATA, else attnref's cache.\n"
        ),
        "missing": "the book's results folder was not found ({tried}): set ATTNREF_DOCS",
    },
    "pt": {
        "download": "Baixe esta página como notebook do Jupyter",
        "intro": (
            "*Este notebook foi gerado da página `{page}` do livro do attnref: o texto da "
            "página e cada um dos seus blocos de código como uma célula, sem mudanças. Rode-o "
            "de cima a baixo num kernel com o attnref e o pacote do livro instalados: num clone "
            "do repositório, `make setup-dev` instala o attnref, o pacote do livro (`book/`) e "
            "o ipykernel em `.venv`; escolha `.venv/bin/python` como kernel (JupyterLab, VS "
            "Code). Ou `pip install -e CLONE -e CLONE/book` no seu ambiente. A próxima célula "
            "mostra o que cada célula imprime como a página mostra (Markdown, fórmulas, tabelas, "
            "figuras) e acha os resultados registrados do livro em `docs/results` do clone.*"
        ),
        "setup": (
            "# print() mostra Markdown como na página; os resultados registrados vêm de\n"
            "# docs/results do clone do attnref ($ATTNREF_DOCS indica outra pasta docs).\n"
            "# Tiny Shakespeare, onde a página o lê: $ATTNREF_DATA, senão o cache do attnref.\n"
        ),
        "missing": "a pasta de resultados do livro não foi achada ({tried}): defina ATTNREF_DOCS",
    },
}


#: the book's default language (mkdocs.yml's i18n ``default: true``): its pages have no suffix
DEFAULT_LANGUAGE = "en"


def site_page(src_uri: str) -> str:
    """A page's place in the built book, from its file under ``docs/``: the Portuguese file of
    a page (the i18n plugin's suffix, ``"experiments.pt.md"``) is ``"pt/experiments.md"``, as
    its URL is ``pt/experiments/``; any other file is where it is."""
    stem, dot, lang = src_uri[: -len(".md")].rpartition(".")
    if src_uri.endswith(".md") and dot and lang in WORDS and lang != DEFAULT_LANGUAGE:
        return f"{lang}/{stem}.md"
    return src_uri


def page_language(page: str) -> str:
    """The language of a page from its place in the book (`site_page`): ``"pt/x.md"`` is pt."""
    first = page.split("/", 1)[0]
    return first if "/" in page and first in WORDS else DEFAULT_LANGUAGE


def notebook_path(page: str) -> str:
    """A page's notebook (its place, `site_page`): ``"pt/x.md"`` → ``"notebooks/pt/x.ipynb"``."""
    if not page.endswith(".md"):
        raise ValueError(f"a page is a .md file under docs/, got {page!r}")
    return f"{NOTEBOOK_DIR}/{page[: -len('.md')]}.ipynb"


# --- reading a page: snippets, fences, exec blocks, mkdocstrings ------------------------------

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_OPTION = re.compile(r"""([\w-]+)=("[^"]*"|'[^']*'|\S+)""")
_SNIPPET = re.compile(
    r"""^(?P<indent>[ \t]*)(?P<escape>;*)-+8<-+[ \t]+(?P<q>["'])(?P<path>.+?)(?P=q)[ \t]*$"""
)
_SECTION = re.compile(r"-+8<-+\s*\[(start|end):(\w+)\]")
_API = re.compile(r"^:::[ \t]+(?P<name>[\w.]+)[ \t]*$")
_ON = {"on", "true", "1", "yes"}
#: markdown-exec options that change nothing in a notebook (where the code is always shown)
#: (``html="on"`` output is HTML, which `render_output` passes on as HTML blocks)
_IGNORED = {"exec", "source", "session", "id", "idprefix", "title", "tabs", "updatetoc", "html"}


def _options(info: str) -> tuple[str, dict[str, str]]:
    """A fence's language and its ``key="value"`` options."""
    info = info.strip()
    lang = info.split(None, 1)[0].lstrip("{.") if info else ""
    return lang, {k: v.strip("\"'") for k, v in _OPTION.findall(info)}


def resolve_snippets(text: str, bases: Sequence[Path], depth: int = 0) -> str:
    """``text`` with each ``--8<-- "file"`` line replaced by the file (pymdownx.snippets'
    single-line form, ``"file:section"`` for a section marked ``--8<-- [start:section]`` …
    ``[end:section]``); a ``;--8<--`` line is kept, one ``;`` lighter."""
    if depth > 8:
        raise ValueError("snippets nest more than 8 deep")
    out: list[str] = []
    for line in text.split("\n"):
        m = _SNIPPET.match(line)
        if not m:
            out.append(line)
            continue
        if m["escape"]:
            out.append(line.replace(";", "", 1))
            continue
        name, _, section = m["path"].partition(":")
        found = next((b / name for b in bases if (b / name).is_file()), None)
        if found is None:
            raise ValueError(f"snippet {name!r} is in none of {[str(b) for b in bases]}")
        lines = found.read_text(encoding="utf-8").split("\n")
        if section:
            marks = [i for i, s in enumerate(lines) if re.search(rf"\[(start|end):{section}\]", s)]
            if len(marks) != 2:
                raise ValueError(f"snippet {name!r} has no section {section!r}")
            lines = lines[marks[0] + 1 : marks[1]]
        body = "\n".join(s for s in lines if not _SECTION.search(s)).rstrip("\n")
        body = resolve_snippets(body, bases, depth + 1)
        out.extend(m["indent"] + s if s else s for s in body.split("\n"))
    return "\n".join(out)


@dataclass(frozen=True)
class Block:
    """A piece of a page: ``kind`` is ``"markdown"`` (prose), ``"code"`` (an exec block) or
    ``"api"`` (a ``::: module`` line, ``text`` the identifier)."""

    kind: Literal["markdown", "code", "api"]
    text: str
    plain: bool = False  # a code block whose output the page shows as text


def split_page(markdown: str, page: str = "page") -> list[Block]:
    """The page's prose, exec blocks and mkdocstrings lines, in order."""
    blocks: list[Block] = []
    prose: list[str] = []

    def flush() -> None:
        if "".join(prose).strip():
            blocks.append(Block("markdown", "\n".join(prose).strip("\n")))
        prose.clear()

    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        fence, api = _FENCE.match(line), _API.match(line)
        if api:
            flush()
            blocks.append(Block("api", api["name"]))
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                i += 1  # the directive's indented options
            continue
        if not fence:
            prose.append(line)
            i += 1
            continue
        mark, indent = fence["fence"], fence["indent"]
        close = re.compile(rf"^[ \t]*{re.escape(mark[0])}{{{len(mark)},}}[ \t]*$")
        end = next((j for j in range(i + 1, len(lines)) if close.match(lines[j])), len(lines))
        lang, opts = _options(fence["info"])
        if lang == "python" and opts.get("exec", "").lower() in _ON:
            unknown = set(opts) - _IGNORED - {"result"}
            if unknown:
                raise ValueError(f"{page}: exec block option(s) {sorted(unknown)} not supported")
            flush()
            body = [s[len(indent) :] if s.startswith(indent) else s for s in lines[i + 1 : end]]
            blocks.append(Block("code", "\n".join(body).strip("\n"), plain="result" in opts))
        else:
            prose.extend(lines[i : end + 1])
        i = end + 1
    flush()
    return blocks


def has_code(markdown: str) -> bool:
    """Whether a page runs anything when it is built (an exec block or a ``:::`` directive)."""
    return any(b.kind != "markdown" for b in split_page(markdown))


# --- markdown for Jupyter: the same text without mkdocs-only syntax ---------------------------


def _outside_fences(text: str, change: Callable[[str], str]) -> str:
    """``change`` applied to the text outside fenced code and inline code spans."""
    out: list[str] = []
    chunk: list[str] = []
    mark = ""
    for line in text.split("\n"):
        m = _FENCE.match(line.lstrip("> "))
        if not mark and m:
            if chunk:
                out.append(_outside_code_spans("\n".join(chunk), change))
            chunk = []
            mark = m["fence"]
            out.append(line)
        elif mark:
            out.append(line)
            if re.match(rf"^[ \t]*{re.escape(mark[0])}{{{len(mark)},}}[ \t]*$", line.lstrip("> ")):
                mark = ""
        else:
            chunk.append(line)
    if chunk:
        out.append(_outside_code_spans("\n".join(chunk), change))
    return "\n".join(out)


def _outside_code_spans(text: str, change: Callable[[str], str]) -> str:
    parts = re.split(r"(`+[^`\n]*?`+)", text)
    return "".join(p if i % 2 else change(p) for i, p in enumerate(parts))


def _math(text: str) -> str:
    r"""Arithmatex's ``\(…\)`` and ``\[…\]`` as ``$…$`` and ``$$…$$``, the delimiters every
    notebook front end reads."""
    text = re.sub(r"(?<!\\)\\\[(.+?)(?<!\\)\\\]", lambda m: f"$${m[1]}$$", text, flags=re.S)
    return re.sub(r"(?<!\\)\\\((.+?)(?<!\\)\\\)", lambda m: f"${m[1].strip()}$", text, flags=re.S)


ATTR_LIST = r"\{:?[ \t]*(?:[#.][\w-]|[\w-]+=)[^}\n]*\}"


def _attr_lists(text: str) -> str:
    """attr_list's ``{ … }`` after links, images and headings, and on lines of their own,
    dropped (Jupyter's Markdown has no attributes)."""
    text = re.sub(rf"\){ATTR_LIST}", ")", text)
    text = re.sub(rf"^(#{{1,6}} .*?)[ \t]*{ATTR_LIST}[ \t]*$", r"\1", text, flags=re.M)
    return re.sub(rf"^[ \t]*{ATTR_LIST}[ \t]*\n", "", text, flags=re.M)


_ADMONITION = re.compile(
    r"""^(?P<indent>[ \t]*)(?P<mark>!!!|\?\?\?\+?|===\+?)[ \t]*(?P<kind>[\w-]+(?:[ \t]+[\w-]+)*)?"""
    r"""[ \t]*(?:"(?P<title>(?:[^"\\]|\\.)*)")?[ \t]*$"""
)


def _admonitions(text: str) -> str:
    """Admonitions (``!!! note "Title"``), collapsible blocks (``???``) and content tabs
    (``=== "Tab"``) as block quotes with their title in bold; nested ones too."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _ADMONITION.match(lines[i])
        if not m or (m["mark"].startswith("=") and m["title"] is None):
            out.append(lines[i])
            i += 1
            continue
        indent = m["indent"]
        body_indent = indent + "    "
        j = i + 1
        body: list[str] = []
        while j < len(lines) and (not lines[j].strip() or lines[j].startswith(body_indent)):
            body.append(lines[j][len(body_indent) :])
            j += 1
        while body and not body[-1].strip():
            body.pop()
            j -= 1
        kind = (m["kind"] or "note").split()[0]
        title = m["title"].replace('\\"', '"') if m["title"] is not None else kind.capitalize()
        inner = _admonitions("\n".join(body)).split("\n") if body else []
        quoted = ([f"**{title}**", ""] if title else []) + inner
        out.extend(f"{indent}> {s}".rstrip() for s in quoted)
        i = j
    return "\n".join(out)


_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]+)\]\((?P<target>[^)\s#]+\.md)(?P<anchor>#[^)\s]*)?\)")
_IMAGE = re.compile(r"!\[(?P<alt>[^\]\n]*)\]\((?P<src>[^)\s]+)\)")


def _links(text: str, page: str, notebooks: Collection[str] | None) -> str:
    """Links to other pages as links to their notebooks (same layout, ``.ipynb``); a page
    without one keeps the link's text only."""

    def change(m: re.Match[str]) -> str:
        target = m["target"]
        if re.match(r"^[a-z]+:", target):
            return m[0]
        full = posixpath.normpath(posixpath.join(posixpath.dirname(page), target))
        if notebooks is not None and full not in notebooks:
            return m["text"]
        return f"[{m['text']}]({target[: -len('.md')]}.ipynb{m['anchor'] or ''})"

    return _LINK.sub(change, text)


def to_jupyter_markdown(
    text: str, page: str = "page.md", notebooks: Collection[str] | None = None
) -> str:
    """Markdown of the book (arithmatex, attr_list, admonitions, links to ``.md`` pages) as
    Markdown that Jupyter renders the same."""

    def change(s: str) -> str:
        return _links(_attr_lists(_math(s)), page, notebooks)

    return _admonitions(_outside_fences(text, change))


def _attachments(text: str, page: str, docs_dir: Path | None) -> tuple[str, dict[str, Any]]:
    """Local images of a markdown cell as the cell's attachments (a notebook travels alone)."""
    found: dict[str, Any] = {}
    if docs_dir is None:
        return text, found

    def change(m: re.Match[str]) -> str:
        src = m["src"]
        path = docs_dir / posixpath.normpath(posixpath.join(posixpath.dirname(page), src))
        mime = mimetypes.guess_type(src)[0]
        if re.match(r"^[a-z]+:", src) or not path.is_file() or not mime:
            return m[0]
        name = path.name
        found[name] = {mime: base64.b64encode(path.read_bytes()).decode("ascii")}
        return f"![{m['alt']}](attachment:{name})"

    return _IMAGE.sub(change, text), found


# --- the notebook -----------------------------------------------------------------------------


def _cell(kind: str, source: str, index: int, **extra: Any) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind, "id": f"cell-{index}", "metadata": {}}
    cell["source"] = source.splitlines(keepends=True)
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    cell.update(extra)
    return cell


def _headed(text: str) -> Iterator[str]:
    """Prose cut before each heading outside code, one markdown cell per section."""
    chunk: list[str] = []
    mark = ""
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if m and not mark:
            mark = m["fence"]
        elif mark and line.strip().startswith(mark):
            mark = ""
        elif not mark and re.match(r"^#{1,6} ", line) and "".join(chunk).strip():
            yield "\n".join(chunk).strip("\n")
            chunk = []
        chunk.append(line)
    if "".join(chunk).strip():
        yield "\n".join(chunk).strip("\n")


def page_notebook(
    page: str,
    markdown: str,
    *,
    docs_dir: Path | None = None,
    snippet_bases: Sequence[Path] = (),
    notebooks: Collection[str] | None = None,
    directory_urls: bool = True,
    source: str | None = None,
) -> dict[str, Any]:
    """The notebook (nbformat 4.5, as a JSON-ready dict) of the page ``page`` (its path under
    place in the book, `site_page`, e.g. ``"pt/experiments.md"``) whose source is ``markdown``.

    ``docs_dir`` finds the page's local images (attached to their cells); ``snippet_bases``
    are pymdownx.snippets' base paths; ``notebooks`` lists the pages that have a notebook
    (links to the others keep their text only; ``None``: every page has one); ``source`` is
    the page's file under ``docs/`` that the notebook names (``"experiments.pt.md"``; by
    default ``page``).
    """
    lang = page_language(page)
    words = WORDS[lang]
    text = resolve_snippets(markdown, snippet_bases) if "8<-" in markdown else markdown
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)  # YAML front matter
    setup_args = repr(page) if directory_urls else f"{page!r}, directory_urls=False"
    cells = [
        _cell("markdown", words["intro"].format(page=source or page), 0),
        _cell(
            "code",
            f"{words['setup']}from attnref_book.kernel import setup\n\nsetup({setup_args})",
            1,
        ),
    ]
    for block in split_page(text, page):
        if block.kind == "code":
            source = f"{PLAIN_MARK}\n{block.text}" if block.plain else block.text
            cells.append(_cell("code", source, len(cells)))
        elif block.kind == "api":
            module = block.text
            cells.append(
                _cell(
                    "code",
                    f"from attnref_book.kernel import api\n\napi({module!r})",
                    len(cells),
                )
            )
        else:
            for section in _headed(block.text):
                source, attachments = _attachments(
                    to_jupyter_markdown(section, page, notebooks), page, docs_dir
                )
                extra = {"attachments": attachments} if attachments else {}
                cells.append(_cell("markdown", source, len(cells), **extra))
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
            "attnref": {"page": page},
        },
        "cells": cells,
    }


def to_json(notebook: dict[str, Any]) -> str:
    """A notebook as the text of an ``.ipynb`` file (Jupyter's own layout: indent 1)."""
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
