"""The API page's module map: every module of the package and of the CLI, read from the files.

Each module is named by its dotted name, with the first sentence of its docstring, grouped by
folder in the order of the architecture (the API page's introduction: reference → inputs →
worked → exercises, render beside; lm → experiments; classroom on top; then the book's build
and the CLI).

The map is read from the files, never typed: each ``*.py`` under ``attention_ref/`` and
``cli/`` (which installs as ``attention_ref.cli``), its docstring read with `ast` (nothing is
imported, so no torch and no MLflow). A new module is on the map the next time the book is
built; a module without a docstring, or a folder the architecture does not place, raises
`ValueError`, so the strict build fails rather than print a map with a hole in it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from attention_ref.render.markdown import markdown_table

#: the package's folders in the order of the architecture (``docs/api.md``'s sections); the
#: package itself (``attention_ref/__init__.py``) comes first and the command line (``cli/``)
#: last. The book's build is a package of its own (``book/attnref_book``), not on the map.
FOLDERS: Final = (
    "reference",
    "inputs",
    "worked",
    "exercises",
    "render",
    "lm",
    "experiments",
    "classroom",
)
#: the package and the CLI's folder as the map names them
PACKAGE: Final = "attention_ref"
CLI: Final = "cli"
#: a sentence ends at one of these followed by a space and a capital, a quote or a code span
_SENTENCE_END = re.compile(r"(?<![\s.])[.!?](?=\s+[A-Z`*\"“(]|\s*$)")
#: abbreviations whose point ends no sentence
_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "cf")


@dataclass(frozen=True)
class Module:
    """One module file: its folder's group, dotted name, file and docstring's first sentence."""

    group: str
    name: str
    path: Path
    summary: str


def first_sentence(docstring: str) -> str:
    """The first sentence of a docstring's first paragraph, its lines joined (the whole
    paragraph when no sentence ends in it)."""
    paragraph = " ".join(docstring.strip().split("\n\n")[0].split())
    for m in _SENTENCE_END.finditer(paragraph):
        if not paragraph[: m.start()].lower().endswith(_ABBREVIATIONS):
            return paragraph[: m.end()]
    return paragraph


def cli_folder(root: Path) -> Path:
    """Where the CLI's files are: ``cli/`` beside the package in a checkout, ``cli/`` inside it
    once installed (the wheel's ``attention_ref/cli``)."""
    beside = root / CLI
    return beside if beside.is_dir() else root / PACKAGE / CLI


def dotted_name(path: Path, base: Path, prefix: str) -> str:
    """``path``'s import name: its parts under ``base`` after ``prefix`` (``__init__`` is its
    package)."""
    parts = [prefix, *path.relative_to(base).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def group_of(name: str) -> str:
    """The map's group of a dotted name: ``attention_ref.lm.model`` → ``lm``,
    ``attention_ref.cli.main`` → ``cli``; the package's own ``attention_ref`` is a group of its
    own."""
    parts = name.split(".")
    return PACKAGE if len(parts) == 1 else parts[1]


def _order(group: str) -> int:
    """A group's place on the map; `ValueError` for a folder the architecture does not place."""
    order = (PACKAGE, *FOLDERS, CLI)
    if group not in order:
        raise ValueError(
            f"module map: attention_ref/{group}/ is not in the architecture "
            f"(attnref_book.module_map.FOLDERS: {', '.join(FOLDERS)}); place it there"
        )
    return order.index(group)


def modules(root: Path | None = None) -> list[Module]:
    """Every module of the package and of the CLI under ``root`` (a checkout: the folder that
    holds ``attention_ref/``; by default this package's), in the map's order: by group, then
    by dotted name. `ValueError` names every module without a docstring, or a folder that the
    architecture does not place."""
    root = Path(__file__).resolve().parents[2] if root is None else root
    package, cli = root / PACKAGE, cli_folder(root)
    files = [(f, package, PACKAGE) for f in sorted(package.rglob("*.py")) if cli not in f.parents]
    files += [(f, cli, f"{PACKAGE}.{CLI}") for f in sorted(cli.rglob("*.py"))]
    found, undocumented = [], []
    for path, base, prefix in files:
        name = dotted_name(path, base, prefix)
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if not doc or not doc.strip():
            undocumented.append(str(path.relative_to(root)))
            continue
        found.append(Module(group_of(name), name, path, first_sentence(doc)))
    if undocumented:
        raise ValueError(
            "module map: no docstring in " + ", ".join(undocumented) + " (the map shows each "
            "module's first sentence: write one)"
        )
    if not found:
        raise ValueError(f"module map: no module under {root}")
    return sorted(found, key=lambda m: (_order(m.group), m.name))


#: a code span: its run of backticks, its text, the same run
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def cell(text: str) -> str:
    """Text as one cell of a Markdown table: a ``|`` outside code would end the cell, so it is
    escaped there; inside a code span the table reads it as text, and an escape would show."""
    out, at = [], 0
    for m in _CODE_SPAN.finditer(text):
        out += [text[at : m.start()].replace("|", r"\|"), m.group(0)]
        at = m.end()
    return "".join([*out, text[at:].replace("|", r"\|")])


#: each group's heading cell: its folder as a reader finds it in the checkout
_FOLDER_CELL: Final = {PACKAGE: "`attention_ref/`", CLI: "`cli/`"}


def module_map(root: Path | None = None) -> str:
    """The map as a Markdown table: folder (on its first row), module, what it is."""
    rows = []
    last = ""
    for m in modules(root):
        folder = "" if m.group == last else _FOLDER_CELL.get(m.group, f"`{m.group}/`")
        last = m.group
        rows.append([folder, f"`{m.name}`", cell(m.summary)])
    return "\n".join(markdown_table(["folder", "module", "what it is"], rows)) + "\n"
