"""One word for one thing in the Portuguese book (issue 60): the terms its pages, its navigation
and the program's Portuguese words use, each one way. The glossary is `GLOSSARY`: a term, the
form the book follows, and the forms it must not use; the scanner reads every Portuguese page,
``mkdocs.yml``'s Portuguese navigation, the package's source and the book's package (their
Portuguese words: the pages' facts are said there).

It began with the one drift found: "A softmax online" (``explain``) beside "O softmax online"
(the navigation and the page), the book's other pages saying "a softmax".
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: term -> (the form followed, the forms refused as a pattern)
GLOSSARY: dict[str, tuple[str, str]] = {
    "softmax (feminine: a função softmax)": (
        "a softmax, da softmax, na softmax, à softmax",
        r"\b(?:[Oo]|[Dd]o|[Nn]o|[Aa]o|[Pp]elo) softmax\b",
    ),
}


def portuguese_texts() -> dict[str, str]:
    """Every Portuguese text of the book and the program: the pages, the navigation's
    Portuguese lines, the package's and the book's source (the English in it has no "o
    softmax")."""
    texts = {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in ROOT.glob("docs/*.pt.md")
    }
    nav = ROOT / "mkdocs.yml"
    texts["mkdocs.yml"] = "\n".join(
        line.split(": ", 1)[1]
        for line in nav.read_text(encoding="utf-8").splitlines()
        if ": " in line
    )
    sources = [*(ROOT / "attention_ref").rglob("*.py"), *(ROOT / "book").rglob("*.py")]
    for path in sorted(sources):
        texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return texts


def drifts(texts: dict[str, str]) -> list[tuple[str, str, str]]:
    """Each use of a refused form: (the file, the term, the words found)."""
    found = []
    for name, text in texts.items():
        for term, (_, refused) in GLOSSARY.items():
            found += [(name, term, m.group(0)) for m in re.finditer(refused, text)]
    return found


def test_the_scanner_finds_each_refused_form():
    """Its control: the drifts the book had, and the forms it follows, which it must pass."""
    had = {
        "nav": "15. O softmax online do FlashAttention",
        "page": "contra o softmax (a contagem",
        "words": "antes do softmax, então",
        "check": "é igual ao softmax para",
    }
    assert len(drifts(had)) == 4
    kept = {"page": "A softmax online é igual à softmax, antes da softmax, na softmax"}
    assert drifts(kept) == []


def test_the_portuguese_book_follows_its_glossary():
    assert drifts(portuguese_texts()) == []
