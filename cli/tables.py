"""Tables at the terminal's width, 80 columns by design: the cells that matter are never cut.

Each column says whether it is one a reader came for (``keep``: an id, a score, the first wrong
step, a diagnosis) and, if not, how soon it goes (``rank``: the lowest first). A table wider
than the terminal leaves out whole columns, lowest rank first, until it fits, and says below
which ones it left out and where to see them; a kept column is never wrapped or cut (an id or a
URL broken over two lines cannot be copied). Printed to a pipe or a file, nothing is left out,
unless ``COLUMNS`` says a width.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

#: the width of a console that is not a terminal (a pipe, a log): whole lines
PIPE_WIDTH = 240


@dataclass(frozen=True)
class Column:
    """A table's column: its header, whether it is kept whole, how soon it is left out."""

    name: str
    keep: bool = False
    rank: int = 0
    justify: str = "left"


def console() -> Console:
    """The terminal's console; a wide one when the output is not a terminal."""
    from rich.console import Console

    found = Console(highlight=False)
    if found.is_terminal or os.environ.get("COLUMNS", "").isdigit():  # a width said: kept
        return found
    return Console(highlight=False, width=PIPE_WIDTH)


def fit(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> list[int]:
    """The indices of the columns shown at ``width``: every kept one, and as many of the others
    (highest rank first) as fit with their cells whole. A table's frame takes 3 characters per
    column and 1 more (rich's default box)."""
    natural = [max([len(c.name), *(len(str(r[i])) for r in rows)]) for i, c in enumerate(columns)]

    def total(shown: list[int]) -> int:
        return sum(natural[i] + 3 for i in shown) + 1

    shown = list(range(len(columns)))
    for i in sorted((i for i, c in enumerate(columns) if not c.keep),
                    key=lambda i: (columns[i].rank, -i)):  # fmt: skip
        if total(shown) <= width:
            break
        shown.remove(i)
    return shown


def print_table(
    out: Console, title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]],
    *, elsewhere: str = "",
) -> list[str]:  # fmt: skip
    """Print ``rows`` under ``title`` (a line of its own, never squeezed into the frame) at the
    console's width; returns the names of the columns left out (and says so, with
    ``elsewhere``: where the reader finds them)."""
    from rich.table import Table

    shown = fit(columns, rows, out.width)
    out.print(title, soft_wrap=True)
    table = Table(show_header=True)
    for i in shown:
        c = columns[i]
        table.add_column(c.name, justify=c.justify, no_wrap=c.keep,  # type: ignore[arg-type]
                         overflow="fold")  # fmt: skip
    for r in rows:
        table.add_row(*(str(r[i]) for i in shown))
    out.print(table)
    left = [c.name for i, c in enumerate(columns) if i not in shown]
    if left:
        where = f"; {elsewhere}" if elsewhere else ""
        out.print(f"(left out at {out.width} columns: {', '.join(left)}{where})", soft_wrap=True)
    return left
