"""The book's code is one program: each code block of a page is one call, and the Portuguese
page calls what the English page calls.

markdown-exec runs every ```` ```python exec="on" ```` block of ``docs/`` at build time. A block
that computes is a second program outside the rules the package keeps (ruff, the line cap, no
decision by a language's name, no private imports), written once per language. Here a block
is its imports and one ``print(f(…))`` whose arguments are names, attributes and constants: the
facts are computed by ``f`` (in `attnref_book.facts`, where the rules read them), the page's
language passed as ``"en"``/``"pt"``. A page pair's calls are the same, in the same order, but for
the language; and the rules' judges (`tests.test_one_path_per_language`, the private-import
rule of `tests.test_layers`) read every block.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.test_layers import OURS
from tests.test_one_path_per_language import LANGUAGES, branches_on_a_language

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: a code block markdown-exec runs, and its code
BLOCK = re.compile(r'^```python exec="on"[^\n]*\n(.*?)^```', re.S | re.M)


def blocks(text: str) -> list[str]:
    """The code of every block markdown-exec runs in a page's Markdown."""
    return BLOCK.findall(text)


def stem(page: Path) -> str:
    """``causal-mask`` for ``docs/causal-mask.md`` and ``docs/causal-mask.pt.md``."""
    return page.name.removesuffix(".md").removesuffix(".pt")


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def _plain(node: ast.expr) -> bool:
    """A name, a dotted name or a constant: nothing computed."""
    if isinstance(node, ast.Attribute):
        return _plain(node.value)
    return isinstance(node, ast.Name | ast.Constant)


def not_a_call(code: str) -> str | None:
    """Why a block is more than its imports and one ``print(f(…))`` of plain arguments, or
    None when it is just that."""
    body = ast.parse(code).body
    rest = [s for s in body if not isinstance(s, ast.Import | ast.ImportFrom)]
    if len(rest) != 1:
        return f"{len(rest)} statements besides its imports"
    stmt = rest[0]
    if not (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Name)
        and stmt.value.func.id == "print"
        and len(stmt.value.args) == 1
        and not stmt.value.keywords
        and isinstance(stmt.value.args[0], ast.Call)
    ):
        return "its statement is not print(f(…))"
    call = stmt.value.args[0]
    if not _plain(call.func):
        return "it calls what it computes"
    if not all(_plain(a) for a in [*call.args, *(k.value for k in call.keywords)]):
        return "an argument is computed"
    return None


def call_of(code: str) -> str:
    """The block's call, its language argument (``"en"``/``"pt"``) written ``LANG``."""
    body = [s for s in ast.parse(code).body if not isinstance(s, ast.Import | ast.ImportFrom)]
    call = body[0].value.args[0]  # type: ignore[attr-defined]
    for node in ast.walk(call):
        if isinstance(node, ast.Constant) and node.value in LANGUAGES:
            node.value = "LANG"
    return ast.unparse(call)


def private_names(code: str) -> list[str]:
    """Every private name (``_x``) a block imports from this project's packages."""
    return [
        f"{node.module}.{a.name}"
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(OURS)
        for a in node.names
        if a.name.startswith("_") and not a.name.startswith("__")
    ]


def test_every_block_of_every_page_is_a_call():
    found = {}
    for page in pages():
        why = [w for code in blocks(page.read_text(encoding="utf-8")) if (w := not_a_call(code))]
        if why:
            found[page.name] = why
    assert found == {}, found


def test_the_portuguese_page_calls_what_the_english_page_calls():
    found, pairs = {}, 0
    for page in pages():
        pt = page.with_name(f"{stem(page)}.pt.md")
        if page.name.endswith(".pt.md") or not pt.exists():
            continue
        pairs += 1
        en_calls = [call_of(c) for c in blocks(page.read_text(encoding="utf-8"))]
        pt_calls = [call_of(c) for c in blocks(pt.read_text(encoding="utf-8"))]
        if en_calls != pt_calls:
            found[stem(page)] = (en_calls, pt_calls)
    assert pairs >= 20  # every page but the API's has its pair
    assert found == {}, found


def test_each_page_passes_its_own_language():
    """A Portuguese page's calls pass ``"pt"`` where they pass a language, an English page's
    ``"en"``: never the other's."""
    found = []
    for page in pages():
        lang, other = ("pt", "en") if page.name.endswith(".pt.md") else ("en", "pt")
        for code in blocks(page.read_text(encoding="utf-8")):
            if not_a_call(code) is None and f"'{other}'" in ast.unparse(ast.parse(code)):
                found.append(f"{page.name}: {code.strip().splitlines()[-1]} (not {lang!r})")
    assert found == []


def test_the_rules_read_every_block_of_the_book():
    """No block decides by a language's name or imports a private name, and every block
    parses (a block of another syntax would escape the judges)."""
    found = []
    for page in pages():
        for i, code in enumerate(blocks(page.read_text(encoding="utf-8"))):
            found += [f"{page.name} block {i}: {w}" for _, w in branches_on_a_language(code)]
            found += [f"{page.name} block {i}: imports {n}" for n in private_names(code)]
    assert len([c for p in pages() for c in blocks(p.read_text(encoding="utf-8"))]) > 100
    assert found == []


@pytest.mark.parametrize(
    ("code", "why"),
    [
        ("from m import f\nprint(f('en'))\n", None),
        ("from m import f\nimport m2\nprint(m2.g(m2.X, 3, lang='pt'))\n", None),
        ("x = 1\nprint(f(x))\n", "2 statements besides its imports"),
        ("f('en')\n", "its statement is not print(f(…))"),
        ("print('A sentence typed in the page')\n", "its statement is not print(f(…))"),
        ("print(f('en'), g())\n", "its statement is not print(f(…))"),
        ("print(f(1 + 2))\n", "an argument is computed"),
        ("print(f(g('en')))\n", "an argument is computed"),
        ("print(f(x=[1, 2]))\n", "an argument is computed"),
        ("print(FS[0]('en'))\n", "it calls what it computes"),
        ("for i in range(2):\n    print(f(i))\n", "its statement is not print(f(…))"),
    ],
)
def test_the_judge_of_a_call(code, why):
    """The controls: what is a call, and each way a block computes."""
    assert not_a_call(code) == why


def test_the_judges_of_calls_language_and_private_names():
    """The controls of the pair rule, the language rule and the private-name rule."""
    assert call_of("from m import f\nprint(f('en', 3))\n") == call_of("print(f('pt', 3))")
    assert call_of("print(f('en', 3))") != call_of("print(f('pt', 4))")
    assert call_of("print(f('en'))") != call_of("print(g('pt'))")
    assert branches_on_a_language("w = 'a' if lang == 'pt' else 'b'\n")
    assert private_names("from attnref_book.pages import _words\nprint(f('en'))\n") == [
        "attnref_book.pages._words"
    ]
    assert private_names("from os import _exit\n") == []
