"""The terminal: rich renderables (rules, prose, tables side by side) to print in order.

rich is imported when a function runs, not with the module (``attnref --help`` stays fast).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_ref.render.document import Explanation, Mat, Table
from attention_ref.render.numbers import matrix_cells, shape_text
from attention_ref.render.printable import printable

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult


class Heading:
    """A section's heading: a rule with the title in it when the title fits the width, else
    the title wrapped at its spaces (never cut with an ellipsis: the formula in a heading is
    the point of it) above a rule of the full width."""

    def __init__(self, title: str, style: str = "cyan") -> None:
        self.title = title
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.cells import cell_len
        from rich.markup import escape
        from rich.rule import Rule
        from rich.text import Text

        # a left-aligned Rule keeps its title whole up to the width less 2 cells
        if cell_len(self.title) <= options.max_width - 2:
            yield Rule(escape(self.title), style=self.style, align="left")
            return
        yield Text(self.title, style="rule.text", overflow="fold")
        yield Rule(style=self.style)


def matrix_table(item: Mat, precision: int, decimal: str = ".") -> RenderableType:
    """A matrix as a rich table titled ``name = formula``, row labels in a dim column.

    Entries as `matrix_cells` writes them: no decimals when every entry is a whole number;
    ``decimal`` is the decimal mark. The labels are the input's token names, printed as
    written (`rich.text.Text`: a token ``[/]`` is no markup; `printable`: a bidirectional
    override in one is shown, not obeyed).
    """
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    formula = item.formula_as_text()
    title = item.symbol_as_text() + (f" = {formula}" if formula else "")
    table = RichTable(title=Text(title, style="bold"), title_justify="left", box=box.SIMPLE_HEAD)
    ncols = len(item.value[0]) if item.value else 0
    table.add_column("", style="dim")
    for j in range(ncols):
        table.add_column(Text(printable(item.cols[j] if item.cols else j + 1)), justify="right")
    for i, cells in enumerate(matrix_cells(item.value, precision, decimal=decimal)):
        label = item.rows[i] if item.rows else str(i + 1)
        table.add_row(Text(printable(label)), *cells)
    return table


def to_rich(expl: Explanation, precision: int = 3) -> list[RenderableType]:
    """A list of rich renderables (rules, text, tables) to print one after the other.

    The matrices between two shape steps sit side by side (``Columns``).
    """
    from rich.columns import Columns
    from rich.markup import escape
    from rich.rule import Rule
    from rich.text import Text

    parts: list[RenderableType] = [
        Rule(f"[bold]{escape(expl.title)}"),
        Text(f"{expl.source_word}: {expl.source}", "dim"),
    ]
    for sec in expl.sections:
        parts.append(Heading(sec.title))
        if sec.text:
            parts.append(Text(sec.text))
        pending: list[RenderableType] = []
        for item in sec.items:
            if isinstance(item, Mat):
                pending.append(matrix_table(item, precision, expl.decimal))
                continue
            if pending:
                parts.append(Columns(pending, padding=(0, 3)))
                pending = []
            parts.append(
                Text.assemble(
                    (f"{item.name}", "bold"),
                    f": {item.operation}: ",
                    (f"{shape_text(item.before)} → {shape_text(item.after)}", "green"),
                )
            )
        if pending:
            parts.append(Columns(pending, padding=(0, 3)))
    return parts


def table_to_rich(table: Table) -> list[RenderableType]:
    """The table under its title, then the claim as a sentence."""
    from rich.table import Table as RichTable

    out = RichTable(title=table.title)
    for c in table.columns:
        out.add_column(c, justify="right")
    for row in table.rows:
        out.add_row(
            *(
                f"{cell:,}" if isinstance(cell, int) and c not in table.plain_columns else str(cell)
                for c, cell in zip(table.columns, row, strict=True)
            )
        )
    # a plain string, printed with rich's highlighting as before
    return [out, f"{table.claim[:1].upper()}{table.claim[1:]}."]
