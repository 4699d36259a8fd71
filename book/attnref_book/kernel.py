"""What runs in a notebook of the book: its first cell (`setup`) and its API cells (`api`).

What a cell prints is shown as the page shows it, Markdown with math, tables and the SVG
figures (`render_output`), and `attnref_book.pages.RESULTS` points to the recorded
results of the checkout wherever the notebook runs from (`find_docs`). No torch, no Jupyter
needed to import this module (IPython is imported when `setup` runs in a kernel).
"""

from __future__ import annotations

import base64
import html
import importlib
import inspect
import io
import mimetypes
import os
import posixpath
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

from attnref_book.notebooks import (
    ATTR_LIST,
    PLAIN_MARK,
    WORDS,
    page_language,
    to_jupyter_markdown,
)

_BLOCK_OPEN = re.compile(r"^[ \t]*<(figure|div|svg|table|details|section)\b", re.M | re.I)
#: the book's figure classes (docs/assets/extra.css), inline: a notebook has no stylesheet
_FIGURE_STYLE = {
    'class="attn-panels"': 'class="attn-panels" style="display:flex;flex-wrap:wrap;'
    'gap:0.8rem 1.6rem;align-items:flex-start"',
    'class="attn-panel"': 'class="attn-panel" style="min-width:0;max-width:100%"',
}


def _close(text: str, start: int, tag: str) -> int | None:
    """The end of the element ``tag`` opened at ``start`` (nested ones counted)."""
    depth = 0
    for m in re.finditer(rf"<(/?){tag}\b[^>]*?(/?)>", text[start:], re.I):
        if m[2]:
            continue
        depth += -1 if m[1] else 1
        if depth == 0:
            return start + m.end()
    return None


def page_url_dir(page: str, directory_urls: bool = True) -> str:
    """The folder of a page's URL in the site, against which the page's relative links
    resolve: ``"experiments.md"`` → ``"experiments/"``, ``"index.md"`` → ``""``,
    ``"pt/experiments.md"`` → ``"pt/experiments/"`` (without directory URLs: the page's own
    folder)."""
    stem = page[: -len(".md")]
    if not directory_urls:
        return posixpath.dirname(page)
    return stem[: -len("index")] if stem == "index" or stem.endswith("/index") else stem + "/"


_OUTPUT_IMAGE = re.compile(rf"!\[(?P<alt>[^\]\n]*)\]\((?P<src>[^)\s]+)\)(?:{ATTR_LIST})?")


def render_output(
    text: str, page: str = "page.md", docs: Path | None = None, directory_urls: bool = True
) -> list[tuple[str, str]]:
    """What an exec block printed, as ``(mime type, data)`` parts in order: raw HTML blocks
    (the figures) as ``text/html``; images the page links relative to its URL
    (``../results/x.png``) and ``docs`` holds, as the file's bytes (base64, ``image/png``…),
    the notebook's own image output; the rest as ``text/markdown`` that Jupyter reads like the
    page (`to_jupyter_markdown`)."""
    parts: list[tuple[str, str]] = []
    url_dir = page_url_dir(page, directory_urls)

    def markdown(s: str) -> None:
        if s.strip():
            parts.append(("text/markdown", to_jupyter_markdown(s, page).strip("\n")))

    def images(s: str) -> None:
        pos = 0
        for m in _OUTPUT_IMAGE.finditer(s):
            rel = posixpath.normpath(posixpath.join(url_dir, m["src"]))
            path = None if docs is None or rel.startswith("..") else docs / rel
            mime = mimetypes.guess_type(m["src"])[0]
            if re.match(r"^[a-z]+:", m["src"]) or path is None or not path.is_file() or not mime:
                continue
            markdown(s[pos : m.start()])
            parts.append((mime, base64.b64encode(path.read_bytes()).decode("ascii")))
            pos = m.end()
        markdown(s[pos:])

    pos = 0
    for m in _BLOCK_OPEN.finditer(text):
        if m.start() < pos:
            continue
        end = _close(text, m.start(), m[1])
        if end is None:
            break
        images(text[pos : m.start()])
        block = text[m.start() : end]
        for plain, styled in _FIGURE_STYLE.items():
            block = block.replace(plain, styled)
        parts.append(("text/html", block))
        pos = end
    images(text[pos:])
    return parts


def find_docs(docs: str | Path | None = None) -> tuple[Path | None, list[Path]]:
    """The book's ``docs`` folder: ``docs``, else ``$ATTNREF_DOCS``, else the checkout that
    attnref is installed from (``pip install -e .``), else ``./docs``; the first holding a
    ``results`` folder, and every place tried."""
    import attention_ref

    given = docs if docs is not None else os.environ.get("ATTNREF_DOCS")
    tried = (
        [Path(given).expanduser()]
        if given
        else [Path(attention_ref.__file__).resolve().parents[1] / "docs", Path.cwd() / "docs"]
    )
    return next((p for p in tried if (p / "results").is_dir()), None), tried


class _Printed:
    """IPython's cell events: stdout captured while a cell runs, then shown as the page."""

    def __init__(self, page: str, docs: Path | None, directory_urls: bool) -> None:
        self.page, self.docs, self.directory_urls = page, docs, directory_urls
        self.saved: Any = None
        self.buffer: io.StringIO | None = None

    def start(self, info: Any) -> None:
        if (getattr(info, "raw_cell", "") or "").lstrip().startswith(PLAIN_MARK):
            return
        self.saved, self.buffer = sys.stdout, io.StringIO()
        sys.stdout = self.buffer

    def stop(self, result: Any) -> None:
        if self.buffer is None:
            return
        from IPython.display import display

        sys.stdout, text = self.saved, self.buffer.getvalue()
        self.buffer = None
        for mime, data in render_output(text, self.page, self.docs, self.directory_urls):
            display({mime: data, "text/plain": _plain(mime, data)}, raw=True)


def _plain(mime: str, data: str) -> str:
    """The text a console shows for a part of `render_output`."""
    if mime == "text/markdown":
        return data
    caption = re.search(r"<figcaption>(.*?)</figcaption>", data, re.S)
    return f"[{mime}] {html.unescape(caption[1]) if caption else ''}".rstrip()


_ACTIVE: list[tuple[Any, _Printed]] = []


def setup(page: str, docs: str | Path | None = None, *, directory_urls: bool = True) -> None:
    """The first code cell of a page's notebook: `attnref_book.pages.RESULTS` set to the
    book's recorded results (`find_docs`), and, in IPython/Jupyter, what each later cell
    prints shown as Markdown and HTML as on the page (a cell starting with `PLAIN_MARK` prints
    plain text). Says where the results are (or that they were not found: the pages that read
    them will fail)."""
    import attention_ref
    from attnref_book import pages

    found, tried = find_docs(docs)
    if found is not None:
        pages.RESULTS = found / "results"
        print(f"attnref {attention_ref.__version__}; the book's results: {pages.RESULTS}")
    else:
        print(WORDS[page_language(page)]["missing"].format(tried=", ".join(map(str, tried))))
    try:
        from IPython import get_ipython
    except ImportError:  # a plain Python run of the exported script: plain prints
        return
    shell = get_ipython()
    if shell is None:
        return
    for old_shell, old in _ACTIVE:
        old_shell.events.unregister("pre_run_cell", old.start)
        old_shell.events.unregister("post_run_cell", old.stop)
    _ACTIVE.clear()
    printed = _Printed(page, found, directory_urls)
    shell.events.register("pre_run_cell", printed.start)
    shell.events.register("post_run_cell", printed.stop)
    _ACTIVE.append((shell, printed))


def _doc(obj: object) -> str:
    return textwrap.dedent(inspect.getdoc(obj) or "").strip()


def api(identifier: str) -> None:
    """Print (Markdown) what the API page shows of a module: its docstring, then each public
    function and class defined in it, in source order, with its signature and docstring (and
    a class's public methods). The notebook's stand-in for a ``::: module`` directive."""
    module = importlib.import_module(identifier)
    print(f"## `{identifier}`\n\n{_doc(module)}\n")

    def line(obj: Any) -> int:
        try:
            return inspect.getsourcelines(obj)[1]
        except (OSError, TypeError):
            return 0

    members = [
        (name, obj)
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and getattr(obj, "__module__", None) == identifier
    ]
    for name, obj in sorted(members, key=lambda m: line(m[1])):
        try:
            signature = str(inspect.signature(obj))
        except (TypeError, ValueError):
            signature = ""
        kind = "class " if inspect.isclass(obj) else ""
        print(f"### `{kind}{name}{signature}`\n\n{_doc(obj)}\n")
        if inspect.isclass(obj):
            for method_name, member in vars(obj).items():
                method = getattr(member, "__func__", member)  # classmethod, staticmethod
                if not method_name.startswith("_") and inspect.isfunction(method):
                    sig = str(inspect.signature(method))
                    print(f"#### `{name}.{method_name}{sig}`\n\n{_doc(method)}\n")
