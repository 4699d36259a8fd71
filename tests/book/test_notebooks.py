"""The book's notebooks: generated from the pages, shipped in the site, run top to bottom.

The conversion (`attnref_book.notebooks`) is checked on small pages without a kernel. The
slow tests read the notebooks the strict build wrote (``notebooks/<page>.ipynb``), execute
each in a kernel of this interpreter (nbclient + ipykernel) in an empty temporary folder, and
compare: every number with 3 or more decimals that the built page shows must appear in the
executed notebook, and the worked example's outputs hold the homework's values.
"""

from __future__ import annotations

import html
import json
import posixpath
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from attention_ref.worked import life_is_awesome as ex
from attnref_book.kernel import render_output
from attnref_book.notebooks import (
    PLAIN_MARK,
    has_code,
    notebook_path,
    page_notebook,
    resolve_snippets,
    site_page,
    split_page,
    to_json,
    to_jupyter_markdown,
)
from tests.book.conftest import ROOT, built_pages, mkdocs_config

DOCS = ROOT / "docs"


def book_pages() -> list[str]:
    """Every page of the book: the ``.md`` files under docs/ less mkdocs.yml's
    ``exclude_docs`` (data the pages read, not pages)."""
    import pathspec

    config = mkdocs_config()
    excluded = pathspec.GitIgnoreSpec.from_lines((config.get("exclude_docs") or "").splitlines())
    pages = (str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    return sorted(p for p in pages if not excluded.match_file(p))


PAGES = book_pages()
#: numbers as the pages print them: 0.123, -1.2345, 0{,}123 and 0,123 on Portuguese pages
NUMBER = re.compile(r"\d+(?:\.|\{,\}|,)\d{3,}")
#: what the executed notebook must print, beyond the page's numbers
EXPECTED_OUTPUTS = {
    # the homework's printed output matrix (W_O = I: the concat), to 3 decimals
    "worked-example.md": [f"{v:.3f}" for row in ex.DOC_LIFE_OUTPUT for v in row],
    "api.md": ["## `attention_ref.reference.attention`", "### `causal_mask("],
}


# --- the conversion, without a kernel ----------------------------------------------------------

PAGE = """# A page

Some prose with \\(x_q\\) and a [link](other.md#part) and [a missing one](gone.md).

```python exec="on"
print("$$x = 1$$")
```

```bash
echo "\\(not math\\)"
```

!!! note "A \\"quoted\\" title"
    Inside the note, `\\(code\\)` stays.

## Next { #next }

![a picture](pic.png){ width="50%" }

::: attnref_book.notebooks
    options:
      show_source: false

```python exec="on" result="text"
print("plain")
```
"""


def test_a_page_becomes_a_setup_cell_its_prose_and_its_code_unchanged(tmp_path):
    (tmp_path / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    nb = page_notebook("page.md", PAGE, docs_dir=tmp_path, notebooks=["page.md", "other.md"])
    nbformat.validate(nbformat.reads(to_json(nb), as_version=4))
    kinds = [c["cell_type"] for c in nb["cells"]]
    sources = ["".join(c["source"]) for c in nb["cells"]]
    assert kinds == ["markdown", "code", "markdown", "code", "markdown", "markdown", "code", "code"]
    assert "generated from the page `page.md`" in sources[0]
    assert sources[1].endswith("from attnref_book.kernel import setup\n\nsetup('page.md')")
    assert sources[3] == 'print("$$x = 1$$")'
    assert sources[2].startswith("# A page\n")
    prose = sources[2] + sources[4]
    assert "Some prose with $x_q$" in prose
    assert "[link](other.ipynb#part)" in prose and "[a missing one]" not in prose
    assert "a missing one" in prose
    assert 'echo "\\(not math\\)"' in prose  # code is not touched
    assert '> **A "quoted" title**\n>\n> Inside the note, `\\(code\\)` stays.' in prose
    assert sources[5].startswith("## Next\n")  # a section per cell, attr list dropped
    assert "![a picture](attachment:pic.png)\n" in sources[5] + "\n"
    assert "image/png" in nb["cells"][5]["attachments"]["pic.png"]
    assert sources[6] == ("from attnref_book.kernel import api\n\napi('attnref_book.notebooks')")
    assert sources[7] == f'{PLAIN_MARK}\nprint("plain")'


def test_portuguese_pages_get_portuguese_words_and_mirror_the_books_layout():
    # the Portuguese file of a page (the i18n plugin's suffix) has its place under pt/
    assert site_page("experiments.pt.md") == "pt/experiments.md"
    assert site_page("experiments.md") == "experiments.md"
    assert site_page("index.pt.md") == "pt/index.md"
    assert site_page("notes.xx.md") == "notes.xx.md"  # not a language of the book
    page = site_page("experiments.pt.md")
    nb = page_notebook(
        page, '# Q03\n\n```python exec="on"\nprint(1)\n```\n', source="experiments.pt.md"
    )
    intro = "".join(nb["cells"][0]["source"])
    assert "Este notebook foi gerado da página `experiments.pt.md`" in intro
    assert notebook_path(page) == "notebooks/pt/experiments.ipynb"
    assert notebook_path("index.md") == "notebooks/index.ipynb"
    with pytest.raises(ValueError, match=r"\.md"):
        notebook_path("q03.ipynb")


def test_a_page_without_code_has_no_notebook_and_unknown_exec_options_are_refused():
    assert not has_code("# Prose\n\n```python\nprint(1)\n```\n")
    assert has_code("# API\n\n::: attnref_book.pages\n")
    with pytest.raises(ValueError, match="pyodide"):
        split_page('```python exec="on" pyodide="1"\nprint(1)\n```\n', "p.md")


def test_snippets_are_included_and_a_missing_one_is_an_error(tmp_path):
    (tmp_path / "code.py").write_text(
        "a = 0\n# --8<-- [start:mid]\nb = 1\n# --8<-- [end:mid]\nc = 2\n"
    )
    text = '```python exec="on"\n--8<-- "code.py:mid"\n```\n\n;--8<-- "kept.md"\n'
    assert resolve_snippets(text, [tmp_path]) == (
        '```python exec="on"\nb = 1\n```\n\n--8<-- "kept.md"\n'
    )
    assert "a = 0\nb = 1\nc = 2" in resolve_snippets('--8<-- "code.py"', [tmp_path])
    with pytest.raises(ValueError, match=r"gone\.py"):
        resolve_snippets('--8<-- "gone.py"', [tmp_path])


def test_printed_output_splits_into_markdown_figures_and_images(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "curve.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    printed = (
        '!!! success "Check: one"\n    \\(a = 1\\)\n\n'
        '<figure class="attn-figure">\n<div class="attn-panels">\n<div class="attn-panel">'
        "<svg><text>0.500</text></svg></div>\n</div>\n</figure>\n"
        '![curve](../results/curve.png){ width="48%" }\n![remote](https://example.org/x.png)\n'
    )
    parts = render_output(printed, "experiments.md", tmp_path)
    assert [m for m, _ in parts] == ["text/markdown", "text/html", "image/png", "text/markdown"]
    assert parts[0][1] == "> **Check: one**\n>\n> $a = 1$"
    assert parts[1][1].startswith('<figure class="attn-figure">') and "display:flex" in parts[1][1]
    assert parts[2][1] == "iVBORw0KGgpmYWtl"  # base64 of the file
    assert parts[3][1] == "![remote](https://example.org/x.png)"  # not ours: left alone


def test_math_conversion_leaves_tex_line_breaks_and_code_alone():
    text = "\\(a\\) and $$\n\\begin{bmatrix} 1 \\\\ (2) \\end{bmatrix}\n$$ and `\\(b\\)`"
    assert to_jupyter_markdown(text) == (
        "$a$ and $$\n\\begin{bmatrix} 1 \\\\ (2) \\end{bmatrix}\n$$ and `\\(b\\)`"
    )


def test_every_page_with_code_gives_a_valid_notebook():
    with_code = [p for p in PAGES if has_code((DOCS / p).read_text(encoding="utf-8"))]
    assert "worked-example.md" in with_code and "api.md" in with_code
    for page in with_code:
        text = (DOCS / page).read_text(encoding="utf-8")
        nb = page_notebook(site_page(page), text, docs_dir=DOCS, snippet_bases=[ROOT], source=page)
        nbformat.validate(nbformat.reads(to_json(nb), as_version=4))


def source_of(built: str) -> str:
    """The file under docs/ a built page comes from: ``"pt/gqa"`` → ``"gqa.pt.md"``, a page
    the Portuguese book shows in English (``"pt/cli"``) → ``"cli.md"``, ``"."`` →
    ``"index.md"``."""
    lang, _, rest = built.partition("/")
    if lang == "pt" or built == "pt":
        name = rest or "index"
        return f"{name}.pt.md" if (DOCS / f"{name}.pt.md").is_file() else f"{name}.md"
    return "index.md" if built == "." else f"{built}.md"


# --- running the notebooks ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def kernels(tmp_path_factory) -> Any:
    """A kernel spec for this interpreter alone: a ``python3`` spec elsewhere on the machine
    (``~/.local/share/jupyter``) cannot run the notebooks in another Python."""
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager

    specs = tmp_path_factory.mktemp("kernels")
    write_kernel_spec(str(specs / "attnref-test"))
    argv = json.loads((specs / "attnref-test" / "kernel.json").read_text())["argv"]
    assert argv[0] == sys.executable
    return KernelSpecManager(kernel_dirs=[str(specs)], ensure_native_kernel=False)


def execute(nb: Any, cwd: Path, kernels: Any) -> Any:
    """Run every cell of ``nb`` in a fresh kernel with ``cwd`` as its working folder."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    km = KernelManager(kernel_name="attnref-test", kernel_spec_manager=kernels)
    client = NotebookClient(nb, km=km, timeout=600, resources={"metadata": {"path": str(cwd)}})
    return client.execute()


def outputs_text(nb: Any) -> str:
    """Everything a notebook's code cells put out, as text (images left out)."""
    texts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                texts.append(out.text)
            for mime in ("text/markdown", "text/html", "text/plain"):
                texts.append(out.get("data", {}).get(mime, ""))
    return "\n".join(texts)


def numbers_missing(page_html: str, notebook_text: str) -> list[str]:
    """The numbers (3+ decimals) of a built page's article that the notebook does not show."""
    article = re.search(r"<article\b.*?</article>", page_html, re.S)
    shown = set(NUMBER.findall(html.unescape(article[0] if article else "")))
    return sorted(shown - set(NUMBER.findall(notebook_text)))


def test_the_number_check_can_fail():
    page = "<article><p>A = 0.4121, B = 1{,}500</p></article><p>9.9999</p>"
    assert numbers_missing(page, "A = 0.4121") == ["1{,}500"]
    assert numbers_missing(page, "0.4121 and 1{,}500") == []


@pytest.mark.slow
def test_a_notebook_whose_cell_fails_fails_the_run(tmp_path, kernels):
    from nbclient.exceptions import CellExecutionError

    page = (
        '# Broken\n\n```python exec="on"\nfrom attnref_book.pages import check\n\n'
        'print(check("one is two", 1 == 2, "it is not"))\n```\n'
    )
    nb = nbformat.reads(to_json(page_notebook("broken.md", page)), as_version=4)
    with pytest.raises(CellExecutionError, match="book check failed: one is two"):
        execute(nb, tmp_path, kernels)


@pytest.mark.slow
def test_the_site_holds_every_pages_notebook_and_each_page_links_to_it(site):
    with_code = {p for p in PAGES if has_code((DOCS / p).read_text(encoding="utf-8"))}
    shipped = {str(p.relative_to(site)) for p in (site / "notebooks").rglob("*.ipynb")}
    assert shipped == {notebook_path(site_page(p)) for p in with_code}
    for built in built_pages(site):
        page = source_of(built)
        text = (site / built / "index.html").read_text(encoding="utf-8")
        links = re.findall(r'<a class="attn-notebook" download="([^"]+)" href="([^"]+)"', text)
        if page not in with_code:
            assert links == [], built
            continue
        assert len(links) == 1, (built, links)
        name, href = links[0]
        target = site / posixpath.normpath(posixpath.join(built, href))
        assert target.is_file() and target.name == name, (built, href)
        assert str(target.relative_to(site)) == notebook_path(site_page(page))
        nbformat.validate(nbformat.read(target, as_version=4))


#: the pages with code: each is a notebook
NOTEBOOK_PAGES = [p for p in PAGES if has_code((DOCS / p).read_text("utf-8"))]
#: notebooks run at once, each in its own kernel (the machine's two cores)
AT_ONCE = 2


@pytest.fixture(scope="session")
def executed(site, kernels, tmp_path_factory) -> dict[str, tuple[Any, Path, BaseException | None]]:
    """Every page's notebook run top to bottom, `AT_ONCE` at a time, each in a fresh kernel
    and an empty folder of its own: ``page -> (notebook, folder, what it raised)``."""
    import asyncio

    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    async def run_all() -> dict[str, tuple[Any, Path, BaseException | None]]:
        gate = asyncio.Semaphore(AT_ONCE)
        out: dict[str, tuple[Any, Path, BaseException | None]] = {}

        async def one(page: str) -> None:
            nb = nbformat.read(site / notebook_path(site_page(page)), as_version=4)
            # not the repository: the notebook finds the results itself
            run = tmp_path_factory.mktemp("elsewhere")
            km = AsyncKernelManager(kernel_name="attnref-test", kernel_spec_manager=kernels)
            client = NotebookClient(
                nb, km=km, timeout=600, resources={"metadata": {"path": str(run)}}
            )
            async with gate:
                try:
                    await client.async_execute()
                    out[page] = (nb, run, None)
                except Exception as e:  # re-raised by the page's own test
                    out[page] = (nb, run, e)

        await asyncio.gather(*(one(p) for p in NOTEBOOK_PAGES))
        return out

    return asyncio.run(run_all())


@pytest.mark.slow
@pytest.mark.soak
@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_each_notebook_runs_top_to_bottom_and_shows_the_pages_numbers(page, site, executed):
    nb, run, raised = executed[page]
    if raised is not None:
        raise raised
    printed = outputs_text(nb)
    rendered = [o for c in nb.cells for o in c.get("outputs", []) if "data" in o]
    assert any("text/markdown" in o["data"] for o in rendered), "print() not shown as Markdown"
    for want in EXPECTED_OUTPUTS.get(page, []):
        assert want in printed, want
    if page != "api.md":  # mkdocstrings' HTML (source listings) is not the notebook's `api`
        prose = "\n".join("".join(c.source) for c in nb.cells)
        place = site_page(page).removesuffix(".md").removesuffix("index")
        built = site / place / "index.html"
        missing = numbers_missing(built.read_text(encoding="utf-8"), printed + prose)
        assert missing == [], missing[:10]
    assert list(run.iterdir()) == [] or all(p.name.startswith(".") for p in run.iterdir())
