"""One path for every language: no code decides by a language's name.

What the program says in English and in Portuguese comes from tables keyed by the language
(``TEXT[lang]``, ``DECIMAL_MARK[lang]``), filled in by one function that computes the facts
once; a comparison with ``"pt"`` or ``"en"`` is a second path for one language, where the
Portuguese can lag behind the English. The test reads the source's syntax tree of the package,
the CLI and the book's package (the pages' blocks: ``tests/book/test_page_code.py``) for a
comparison with a language's name (``lang == "pt"``, ``x in ("en", "pt")``). A membership
test in the tuple of languages by its name (``lang in LANGS``) is not a branch.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.exercises.test_one_problem import constants_in

ROOT = Path(__file__).resolve().parents[1]
LANGUAGES = frozenset({"en", "pt"})


def branches_on_a_language(source: str) -> list[tuple[int, str]]:
    """Each place the source decides by a language's name: (line, what)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            named = set().union(
                *(constants_in(s, LANGUAGES) for s in [node.left, *node.comparators])
            )
            if named:
                found.append((node.lineno, f"compares with {sorted(named)}"))
    return found


def test_the_judge_finds_a_branch_on_a_language():
    """What the count must find (the code had each before its words became tables), and what
    it must not."""
    refused = {
        'x = "M_jan" if lang == "pt" else "M_win"': "compares with ['pt']",
        'if a.lang == "pt":\n    pass': "compares with ['pt']",
        'sep = ", " if lang == "en" else "; "': "compares with ['en']",
        'ok = lang not in ("en", "pt")': "compares with ['en', 'pt']",
    }
    for source, what in refused.items():
        assert branches_on_a_language(source) == [(1, what)], source
    # data, not branches: a table's key, a membership in the tuple of languages, a lookup
    for source in ('W = {"en": 1, "pt": 2}', "ok = lang in LANGS", 'w = W["pt"]'):
        assert branches_on_a_language(source) == [], source


def test_no_code_decides_by_a_languages_name():
    found = {}
    folders = [ROOT / "attention_ref", ROOT / "cli", ROOT / "book" / "attnref_book"]
    for path in sorted(f for folder in folders for f in folder.rglob("*.py")):
        hits = branches_on_a_language(path.read_text(encoding="utf-8"))
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert found == {}, found
