"""Markdown: GitHub tables for the terminal's ``--format markdown``, display math for the book."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from attention_ref.render.document import Explanation, Mat, Shape, Table
from attention_ref.render.latex import equation
from attention_ref.render.numbers import matrix_cells, shape_text


def shape_bullet(item: Shape) -> str:
    """A markdown bullet: ``name``: operation: ``(before) -> (after)``."""
    before, after = shape_text(item.before), shape_text(item.after)
    return f"- `{item.name}`: {item.operation}: `{before} -> {after}`"


_CODE_SPAN = re.compile(r"(`[^`]*`)")


def escape_html(text: str) -> str:
    """``<`` and ``>`` outside code spans as entities, so a token such as ``<eos>`` is shown,
    not taken for an HTML tag by the book's markdown."""
    parts = _CODE_SPAN.split(text)
    return "".join(
        p if p.startswith("`") else p.replace("<", "&lt;").replace(">", "&gt;") for p in parts
    )


def sections(
    expl: Explanation,
    heading: str,
    matrix: Callable[[Mat], list[str]],
    prose: Callable[[str], str] = lambda text: text,
) -> list[str]:
    """The steps as markdown lines: title, prose, then each item (shapes as bullets).

    ``prose`` transforms titles and text (the book escapes HTML; the terminal keeps it raw).
    """
    out: list[str] = []
    for sec in expl.sections:
        out += [f"{heading} {prose(sec.title)}", ""]
        if sec.text:
            out += [prose(sec.text), ""]
        for item in sec.items:
            out += matrix(item) if isinstance(item, Mat) else [shape_bullet(item), ""]
    return out


def matrix_table(item: Mat, precision: int, decimal: str = ".") -> list[str]:
    """``**name** = `formula```, then the matrix as a table with row labels in column one.

    Entries as `matrix_cells` writes them: no decimals when every entry is a whole number;
    ``decimal`` is the decimal mark.
    """
    formula = item.formula_as_text()
    head = f"**{item.symbol_as_text()}**" + (f" = `{formula}`" if formula else "")
    ncols = len(item.value[0]) if item.value else 0
    cols = list(item.cols) if item.cols else [str(j + 1) for j in range(ncols)]
    out = [head, "", "| | " + " | ".join(cols) + " |", "|---" * (ncols + 1) + "|"]
    for i, cells in enumerate(matrix_cells(item.value, precision, decimal=decimal)):
        label = item.rows[i] if item.rows else str(i + 1)
        out.append(f"| {label} | {' | '.join(cells)} |")
    return [*out, ""]


def to_markdown(expl: Explanation, precision: int = 3) -> str:
    """GitHub-flavoured markdown: one table per matrix, row labels in the first column."""
    head = [f"# {expl.title}", "", f"*{expl.source_word}: {expl.source}*", ""]
    return "\n".join(
        head + sections(expl, "##", lambda item: matrix_table(item, precision, expl.decimal))
    )


def to_book(
    expl: Explanation, precision: int = 3, *, heading: int = 2, labelled: bool = False
) -> str:
    """Markdown for the mkdocs book: prose as markdown, every matrix as display math.

    ``heading`` is the level of each step's title (the page has its own ``#`` title). Math is
    written ``$$ … $$`` for ``pymdownx.arithmatex`` and typeset by KaTeX in the browser.
    ``labelled``: each row's label (a token) at its left, where the page has the width for it
    (the worked example's small matrices; an 8-column matrix with labels does not fit a phone).
    """

    def display(item: Mat) -> list[str]:
        return ["$$", equation(item, precision, expl.decimal, labelled), "$$", ""]

    head = [f"*{expl.source_word}: {escape_html(expl.source)}*", ""]
    return "\n".join(head + sections(expl, "#" * heading, display, escape_html))


def markdown_table(
    header: Sequence[object], rows: Sequence[Sequence[object]], *, left: int | None = None
) -> list[str]:
    """The one Markdown table writer: a header, its rule and a line per row, each cell
    ``str(cell)``. ``left``: how many leading columns are left-aligned, the rest right-aligned
    (numbers); ``None``, every column as the writer leaves it (left)."""
    n = len(header)
    rule = "|---" * n + "|" if left is None else "|---" * left + "|---:" * (n - left) + "|"
    lines = ["| " + " | ".join(str(h) for h in header) + " |", rule]
    for row in rows:
        if len(row) != n:
            raise ValueError(f"a row of {len(row)} cells under {n} columns: {list(row)!r}")
        lines.append("| " + " | ".join(str(cell) for cell in row) + " |")
    return lines


def table_to_markdown(table: Table) -> str:
    """The table, then ``context; claim.`` (markdown has no caption for the title)."""
    lines = markdown_table(table.columns, table.rows)
    return "\n".join([*lines, "", f"{table.context}; {table.claim}."])
