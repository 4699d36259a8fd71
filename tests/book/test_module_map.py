"""The API page's module map (`attnref_book.module_map`) names every module of the package
and of the CLI, in the architecture's order, with the first sentence of its docstring; a module
without a docstring fails (a `ValueError`, so the strict build fails), and so does a folder the
architecture does not place.

Each check is first shown failing on a tree of its own (`a_tree`): a map made before a module
was added misses it, a map made after names it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attnref_book.module_map import FOLDERS, cell, first_sentence, module_map, modules
from tests.book.conftest import ROOT
from tests.test_layers import module_name

#: a module as the map names it: ``| folder | `attention_ref.x.y` | … |``
NAMED = re.compile(r"^\| [^|]* \| `([\w.]+)` \|", re.M)


def named(markdown: str) -> list[str]:
    """The dotted names a map names, in its order."""
    return NAMED.findall(markdown)


def module_files(root: Path) -> set[str]:
    """Every module file of ``root``'s package and CLI, by dotted name (the layer test's
    naming: ``cli/`` installs as ``attention_ref.cli``)."""
    files = [*(root / "attention_ref").rglob("*.py"), *(root / "cli").rglob("*.py")]
    return {module_name_under(root, f) for f in files}


def module_name_under(root: Path, f: Path) -> str:
    """`tests.test_layers.module_name` for a file of another root than the checkout's."""
    parts = list(f.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts[0] == "cli":
        parts.insert(0, "attention_ref")
    return ".".join(parts)


def a_tree(root: Path, extra: dict[str, str] | None = None) -> Path:
    """A small checkout: the package with two folders and the CLI, each module documented;
    ``extra`` adds files (path → text)."""
    files = {
        "attention_ref/__init__.py": '"""The package."""\n',
        "attention_ref/reference/__init__.py": '"""The math. More words."""\n',
        "attention_ref/reference/attention.py": '"""One function per formula, e.g. this."""\n',
        "attention_ref/lm/__init__.py": '"""The model."""\n',
        "cli/__init__.py": '"""The command line."""\n',
        "cli/main.py": '"""The app: every command."""\n',
        **(extra or {}),
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def test_a_map_made_before_a_module_was_added_misses_it(tmp_path):
    root = a_tree(tmp_path)
    before = module_map(root)
    assert set(named(before)) == module_files(root)
    (root / "attention_ref/lm/model.py").write_text('"""The GPT."""\n', encoding="utf-8")
    assert module_files(root) - set(named(before)) == {"attention_ref.lm.model"}  # the control
    after = module_map(root)
    assert set(named(after)) == module_files(root)
    assert "| `attention_ref.lm.model` | The GPT. |" in after


def test_the_map_is_in_the_architectures_order_with_first_sentences(tmp_path):
    # the book's package (book/attnref_book) is not attnref's: not on the map
    root = a_tree(tmp_path, {"book/attnref_book/pages.py": '"""The helpers."""\n'})
    assert named(module_map(root)) == [
        "attention_ref",
        "attention_ref.reference",
        "attention_ref.reference.attention",
        "attention_ref.lm",
        "attention_ref.cli",
        "attention_ref.cli.main",
    ]
    text = module_map(root)
    assert "| `reference/` | `attention_ref.reference` | The math. |" in text
    assert "One function per formula, e.g. this." in text  # "e.g." ends no sentence


def test_a_module_without_a_docstring_fails_the_map(tmp_path):
    root = a_tree(tmp_path, {"attention_ref/lm/model.py": "import torch\n"})
    with pytest.raises(ValueError, match=r"no docstring in attention_ref/lm/model\.py"):
        module_map(root)
    (root / "attention_ref/lm/model.py").write_text('"""The GPT."""\nimport torch\n', "utf-8")
    assert "attention_ref.lm.model" in named(module_map(root))


def test_a_folder_the_architecture_does_not_place_fails_the_map(tmp_path):
    root = a_tree(tmp_path, {"attention_ref/plugins/__init__.py": '"""Plug-ins."""\n'})
    with pytest.raises(ValueError, match=r"attention_ref/plugins/ is not in the architecture"):
        module_map(root)


def test_an_installed_package_holds_its_cli_inside(tmp_path):
    """In the wheel ``cli/`` is ``attention_ref/cli/``: the same names either way."""
    checkout = module_map(a_tree(tmp_path / "checkout"))
    wheel = a_tree(tmp_path / "wheel")
    (wheel / "cli").rename(wheel / "attention_ref" / "cli")
    assert not (wheel / "cli").exists()
    assert module_map(wheel) == checkout


def test_the_books_map_names_every_module_of_the_checkout():
    text = module_map()
    names = named(text)
    files = {module_name(f) for f in [*(ROOT / "attention_ref").rglob("*.py")]}
    files |= {module_name(f) for f in (ROOT / "cli").rglob("*.py")}
    assert len(files) > 150
    assert sorted(names) == sorted(files)  # each once
    assert all(m.summary for m in modules())


def test_the_map_follows_the_api_pages_sections():
    """The folders' order is the one of ``docs/api.md``'s sections (``## reference: …``), and
    the page prints the map near its top, before the first mkdocstrings section."""
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## (\w+): ", page, re.M)
    assert tuple(sections) == FOLDERS
    call = page.index("print(module_map())")
    assert page.index('```python exec="on"') < call < page.index("\n::: ")


@pytest.mark.parametrize(
    ("docstring", "sentence"),
    [
        ("One line.", "One line."),
        ("Two. Sentences.", "Two."),
        ("A ``x.y`` name, i.e. one. Then.", "A ``x.y`` name, i.e. one."),
        ("Across\nlines. Next.\n\nAnother paragraph.", "Across lines."),
        ("No end: `attention_ref.lm`", "No end: `attention_ref.lm`"),
    ],
)
def test_the_first_sentence(docstring, sentence):
    assert first_sentence(docstring) == sentence


def test_a_pipe_is_escaped_outside_code_only():
    """Python-Markdown's tables read a ``|`` inside a code span as text (an escape would show)."""
    assert cell("``gqa|rope`` or a|b") == r"``gqa|rope`` or a\|b"
    assert cell("a | b `x|y` c|d") == r"a \| b `x|y` c\|d"
