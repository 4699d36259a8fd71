"""A small document model and its writers: rich, markdown (and the book's), LaTeX, JSON.

`attention_ref.render.document` holds the model (`Mat`, `Shape`, `Section`, `Explanation`,
`Table`); each writer is a module of its own. Nothing here computes and nothing imports torch
or any other part of attnref: an explanation arrives as plain lists of floats.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from attention_ref.render import svg
from attention_ref.render.document import (
    DECIMAL_MARK,
    LANGS,
    Explanation,
    Item,
    JSONValue,
    Mat,
    Matrix,
    Section,
    Shape,
    Table,
    said,
    thousands,
)
from attention_ref.render.jsonout import to_json
from attention_ref.render.latex import PREAMBLE, bmatrix, latex_text, row_labels, to_latex
from attention_ref.render.markdown import markdown_table, table_to_markdown, to_book, to_markdown
from attention_ref.render.numbers import fmt_number, is_integral, jsonable, matrix_cells
from attention_ref.render.printable import printable
from attention_ref.render.symbols import latex_to_unicode
from attention_ref.render.terminal import table_to_rich, to_rich

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = [
    "DECIMAL_MARK",
    "FORMATS",
    "LANGS",
    "PREAMBLE",
    "TABLE_FORMATS",
    "Explanation",
    "Item",
    "JSONValue",
    "Mat",
    "Matrix",
    "Section",
    "Shape",
    "Table",
    "bmatrix",
    "emit",
    "fmt_number",
    "is_integral",
    "jsonable",
    "latex_text",
    "latex_to_unicode",
    "markdown_table",
    "matrix_cells",
    "render",
    "render_table",
    "row_labels",
    "said",
    "svg",
    "thousands",
    "to_book",
    "to_json",
    "to_latex",
    "to_markdown",
    "to_rich",
]

#: Formats of an `Explanation` (``attnref explain --format``).
FORMATS: Final = ("rich", "markdown", "latex", "json")
#: Formats of a `Table` (``attnref params --format``).
TABLE_FORMATS: Final = ("rich", "markdown", "json")


def render(
    expl: Explanation,
    fmt: str,
    precision: int | None,
    *,
    standalone: bool = False,
    fit_width: bool = False,
) -> str | list[RenderableType]:
    """Dispatch on ``fmt``: a string for markdown/latex/json, renderables for rich.

    ``precision`` ``None`` means the example's own decimals (JSON: full precision).
    ``standalone`` (LaTeX only): a whole document for pdflatex, preamble included.
    ``fit_width`` (LaTeX only): each matrix shrunk to the line when it is wider.
    """
    for name, given in (("standalone", standalone), ("fit_width", fit_width)):
        if given and fmt != "latex":
            raise ValueError(f"{name} is a LaTeX option; the format is {fmt!r}")
    if fmt == "json":
        return to_json(expl.data, precision)
    p = expl.precision if precision is None else precision
    if fmt == "markdown":
        return to_markdown(expl, p)
    if fmt == "latex":
        return to_latex(expl, p, standalone=standalone, fit_width=fit_width)
    if fmt == "rich":
        return to_rich(expl, p)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def render_table(table: Table, fmt: str) -> str | list[RenderableType]:
    """Dispatch on ``fmt``: a string for markdown/json, renderables for rich."""
    if fmt == "json":
        return to_json(table.data)
    if fmt == "markdown":
        return table_to_markdown(table)
    if fmt == "rich":
        return table_to_rich(table)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(TABLE_FORMATS)}")


def emit(rendered: str | Sequence[RenderableType]) -> None:
    """Print what `render` returned: text as it is (ending in one newline), renderables
    one after the other through a rich console; `printable` (a token's name is the input
    file's: no control character of it reaches the terminal; JSON stays the same JSON)."""
    if isinstance(rendered, str):
        rendered = printable(rendered)
        sys.stdout.write(rendered if rendered.endswith("\n") else rendered + "\n")
        return
    from rich.console import Console

    console = Console()
    for part in rendered:
        console.print(part)
