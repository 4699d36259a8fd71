"""The book's Q03 answer is the report's: both pages print the section *What happens in training*
by one call (`attnref_book.facts.experiments.q03_answer`) of the report's function
(`attention_ref.experiments.report.training_section`) in the page's language, the committed
English report holds the same section, and no page keeps a copy of its logic."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from attention_ref.experiments.findings import Baselines, rows_from_comparison
from attention_ref.experiments.report import training_section
from tests.experiments.test_report_pt import numbers

ROOT = Path(__file__).resolve().parents[2]


def printed(page: str, marker: str) -> str:
    """What the page's one ``python exec`` block that contains ``marker`` prints."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r'```python exec="on"\n(.*?)\n```', text, re.S) if marker in b]
    assert len(blocks) == 1, f"{page}: {len(blocks)} blocks with {marker!r}"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], page, "exec"), {"__name__": "page"})
    return out.getvalue()


@pytest.fixture
def recorded(monkeypatch):
    """The committed results, read as the pages read them (from the repository's root)."""
    monkeypatch.chdir(ROOT)
    doc = json.loads(Path("docs/results/comparison.json").read_text(encoding="utf-8"))
    return rows_from_comparison(doc), Baselines(**doc["baselines"])


def test_each_page_prints_the_reports_section_in_its_language(recorded):
    rows, base = recorded
    en = printed("experiments.md", "q03_answer(")
    assert en.strip() == training_section(rows, base).strip()
    pt = printed("experiments.pt.md", "q03_answer(")
    assert pt.strip() == training_section(rows, base, "pt").strip()
    assert "* **Sem atenção (Q03).**" in pt and "* **Without attention (Q03).**" in en
    assert numbers(pt, "pt") == numbers(en, "en") and numbers(en, "en")
    # the committed report (make demo's q03-report.md) says what the English page says
    report = (ROOT / "docs" / "results" / "q03-report.md").read_text(encoding="utf-8")
    assert en.strip() in report


def test_no_page_keeps_a_copy_of_the_reports_sentences():
    """The pages' code says no sentence of the arms itself: each calls the report."""
    for page, sentences in {
        "experiments.pt.md": ("nats abaixo da linha de base", "Sem atenção", "Menor perda de"),
        "experiments.md": ("nats below the baseline", "Without attention", "Lowest validation"),
    }.items():
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        code = "\n".join(re.findall(r'```python exec="on"\n(.*?)\n```', text, re.S))
        for sentence in sentences:
            assert sentence not in code, (page, sentence)
        assert "q03_answer(" in code
