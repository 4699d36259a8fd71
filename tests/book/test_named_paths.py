"""Every file of the repository a page names exists (issue 32, item 1: the GQA page named
``tests/lm/test_kv_heads_model.py``, a file that never existed).

A name counts as a repository path when it starts with one of the repository's top folders
(``attention_ref/``, ``tests/``, ``benchmarks/``, …) and stands on its own (not the tail of
``runs/<run>/…`` or of a URL). Read in every page's markdown (prose, code, snippet includes:
``attention_ref/reference/gqa.py:kv_group`` names ``attention_ref/reference/gqa.py``) and in
the built book (what the pages' code prints); a ``*`` is a glob that must match something.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tests.book.conftest import ROOT, built_pages

#: the repository's top folders a page may name a file under
TOP = ("attention_ref", "benchmarks", "book", "cli", "docs", "overrides", "tests", "tools")
PATH = re.compile(r"(?<![\w./:-])((?:" + "|".join(TOP) + r")/[\w./*-]*[\w*/])")


def missing_paths(text: str, root: Path = ROOT) -> list[str]:
    """The repository paths ``text`` names that are not in the repository at ``root``."""
    missing = []
    for m in PATH.finditer(html.unescape(text)):
        path = m.group(1).rstrip(".")
        found = any(root.glob(path)) if "*" in path else (root / path).exists()
        if not found:
            missing.append(path)
    return sorted(set(missing))


def test_the_scanner_finds_a_missing_file_and_passes_the_ones_there():
    old = "tested equal to the reference above in float64 (`tests/lm/test_kv_heads_model.py`)."
    assert missing_paths(old) == ["tests/lm/test_kv_heads_model.py"]  # issue 32's case
    fixed = old.replace("test_kv_heads_model", "test_variants_model")
    assert missing_paths(fixed) == []
    assert missing_paths('--8<-- "attention_ref/reference/gqa.py:kv_group"') == []
    assert missing_paths('--8<-- "attention_ref/reference/gqq.py:kv_group"') == [
        "attention_ref/reference/gqq.py"
    ]
    assert missing_paths("read `docs/results/*.json` and `docs/results/variants/`.") == []
    assert missing_paths("`docs/results/*.jsonx`") == ["docs/results/*.jsonx"]
    # not a repository path: a run's folder, a URL, a student's files
    assert missing_paths("runs/<run>/unlogged_metrics.json, https://x.org/tests/a.py") == []


def test_every_file_a_pages_markdown_names_exists():
    pages = sorted((ROOT / "docs").rglob("*.md"))
    assert len(pages) > 30
    found = {str(p.relative_to(ROOT)): m for p in pages if (m := missing_paths(p.read_text()))}
    assert found == {}


@pytest.mark.slow
def test_every_file_the_built_book_names_exists(site: Path):
    found = {}
    for page in built_pages(site):
        text = (site / page / "index.html").read_text(encoding="utf-8")
        article = text[text.find("<article") : text.rfind("</article>")]
        if m := missing_paths(re.sub(r"<[^>]+>", " ", article)):
            found[page] = m
    assert found == {}
