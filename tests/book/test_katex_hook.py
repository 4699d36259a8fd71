"""A strict build without the vendored KaTeX fails with one line saying how to vendor it
(issue 31, item 8): it used to succeed, and every page showed its raw ``\\(…\\)``.

A tiny book (one page with math, the book's hook ``overrides/hooks/katex.py``) is built with
``mkdocs build --strict``: without ``docs/assets/katex/katex.min.js`` it fails, with the file
(the control) it builds; a build that is not strict warns with the same line.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.book.conftest import MKDOCS, ROOT

HOOK = ROOT / "overrides" / "hooks" / "katex.py"
HOW = "run make docs/assets/katex/VENDORED.json (KaTeX is vendored from the npm registry)"


def build(book: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MKDOCS, "build", *flags, "-d", str(book / "site")],
        cwd=book,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


@pytest.fixture
def book(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("Scores: \\(S = Q K^\\top\\)\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        f"site_name: tiny\nhooks:\n  - {HOOK}\nextra_javascript:\n  - assets/katex/katex.min.js\n",
        encoding="utf-8",
    )
    return tmp_path


def vendor(book: Path) -> None:
    js = book / "docs" / "assets" / "katex" / "katex.min.js"
    js.parent.mkdir(parents=True)
    js.write_text("/* KaTeX */\n", encoding="utf-8")


def test_a_strict_build_without_katex_fails_in_one_line(book):
    proc = build(book, "--strict")
    assert proc.returncode != 0
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if HOW in line]
    assert len(lines) == 1 and "KaTeX is missing" in lines[0], proc.stdout + proc.stderr
    assert not (book / "site" / "index.html").exists()


def test_control_with_katex_the_strict_build_passes(book):
    vendor(book)
    proc = build(book, "--strict")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert HOW not in proc.stdout + proc.stderr
    assert (book / "site" / "index.html").is_file()


def test_a_build_that_is_not_strict_warns(book):
    proc = build(book)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" in proc.stdout + proc.stderr and HOW in proc.stdout + proc.stderr


def test_the_book_runs_the_hook():
    hooks = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nhooks:\n", 1)[1]
    assert "  - overrides/hooks/katex.py" in hooks.split("\n\n", 1)[0]


def test_canonical_links_only_where_the_book_is_published():
    """overrides/hooks/canonical.py (issue 42, item 10): the default site_url, this machine's,
    gets no canonical link; a published address keeps mkdocs' own."""
    import importlib.util

    from tests.book.conftest import mkdocs_config

    spec = importlib.util.spec_from_file_location(
        "canonical", ROOT / "overrides/hooks/canonical.py"
    )
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)

    class Config:
        site_url = mkdocs_config()["site_url"]

    assert Config.site_url == "http://127.0.0.1:8000/"  # mkdocs.yml's default, !ENV unset
    page = '<head>\n  <link rel="canonical" href="http://127.0.0.1:8000/by-hand/">\n</head>'
    assert "canonical" not in hook.on_post_page(page, None, Config)
    Config.site_url = "https://example.org/attnref/"
    published = page.replace("http://127.0.0.1:8000", "https://example.org/attnref")
    assert hook.on_post_page(published, None, Config) == published  # the control


@pytest.mark.slow
def test_the_built_book_has_no_canonical_link_to_this_machine(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'rel="canonical"' not in index
    assert "127.0.0.1:8000" in (site / "sitemap.xml").read_text()  # the sitemap keeps it
