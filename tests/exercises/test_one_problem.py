"""One problem model: no code in ``exercises/`` or ``classroom/`` decides by a variant's name.

Every decision on the attention of a problem reads its features (``g < h``, a window, RoPE:
`attention_ref.exercises.features.Features`); the names ``mha``, ``gqa``, ``window`` and
``rope`` live in the presets' table (`attention_ref.exercises.features.PRESETS`) and in the
stored formats (an answer's ``"exercise"``, a problem's JSON keys), which are data, not
branches. The test reads the source's syntax tree: a comparison with a name (``v == "gqa"``,
``v in ("gqa", "rope")``), a comparison of a ``.variant``, or a table keyed by names.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "attention_ref"
NAMES = frozenset({"mha", "gqa", "window", "rope"})
#: Where the names may be: the presets' table, and nothing else.
ALLOWED = {"exercises/features.py"}


def constants_in(node: ast.AST, names: frozenset[str] = NAMES) -> set[str]:
    """The ``names`` (a variant's, by default) a constant, or a tuple, list or set of
    constants, holds."""
    if isinstance(node, ast.Constant) and node.value in names:
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in names}
    return set()


def _is_variant(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "variant") or (
        isinstance(node, ast.Name) and node.id == "variant"
    )


def branches_on_a_name(source: str) -> list[tuple[int, str]]:
    """Each place the source decides by a variant's name: (line, what)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = set().union(*(constants_in(s) for s in sides))
            if named:
                found.append((node.lineno, f"compares with {sorted(named)}"))
            elif any(_is_variant(s) for s in sides):
                found.append((node.lineno, "compares a variant"))
        elif isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if len(keys & NAMES) >= 2:  # a table with a row per variant
                found.append((node.lineno, f"a table keyed by {sorted(keys & NAMES)}"))
    return found


def test_the_judge_finds_each_kind_of_branch_it_must_refuse():
    """What the count must find (the code before this issue had each), and what it must not."""
    refused = {
        'if opt.variant == "mha":\n    pass': "compares with ['mha']",
        'x = v in ("gqa", "rope")': "compares with ['gqa', 'rope']",
        "if tr.variant != other:\n    pass": "compares a variant",
        'T = {"gqa": 1, "window": 2}': "a table keyed by ['gqa', 'window']",
    }
    for source, what in refused.items():
        assert branches_on_a_name(source) == [(1, what)] or branches_on_a_name(source)[0][1] == what
    # data, not branches: a JSON key, a feature, a set of accepted keys
    for source in ('problem["window"] = w', "if f.windowed:\n    pass", 'k = {"window", "x"}'):
        assert branches_on_a_name(source) == [], source


@pytest.mark.parametrize("package", ["exercises", "classroom"])
def test_no_code_decides_by_a_variants_name(package):
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel in ALLOWED:
            continue
        hits = branches_on_a_name(path.read_text(encoding="utf-8"))
        if hits:
            found[rel] = hits
    assert found == {}, found


def test_the_presets_table_is_where_the_names_are():
    """The control: the allowed file does name them (the count reads what it claims to)."""
    source = (ROOT / "exercises/features.py").read_text(encoding="utf-8")
    assert branches_on_a_name(source)  # PRESETS: a table keyed by the four names
