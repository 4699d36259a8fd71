"""Tables at the terminal's width, 80 columns by design: the cells that matter are never cut.

Each column says whether it is one a reader came for (``keep``: an id, a score, the first wrong
step, a diagnosis) and, if not, how soon it goes (``rank``: the lowest first). A table wider
than the terminal leaves out whole columns, lowest rank first, until it fits, and says below
which ones it left out and where to see them; a kept column is never cut (an id or a URL broken
over two lines cannot be copied): its cells stay on one line, or, for a column of words
(``wrap``: a diagnosis, a mistake in words), go over lines at their spaces (a word longer than
the room left goes on at the next line). No header is cut.
Printed to a pipe or a file, nothing is left out, unless ``COLUMNS`` says a width.

Lines of words around a table (`say`) break at spaces at the same width, and never inside a
word: a URL or an id longer than the line keeps a line of its own.

Every string is printed as written, never read as rich markup: a cell, a header or a line may
be what a student wrote (a run named ``[/]`` made rich raise `rich.errors.MarkupError`; one
named ``[link=…]x[/link]`` became a link). The cells and headers become `plain` text, and the
`console` itself reads no markup.

Nor is any string obeyed by the terminal: a run named ``ESC ]0;…BEL ESC [2J`` set the
teacher's window title and cleared the screen (rich keeps ``ESC`` in a `rich.text.Text`). Every
printer here (`plain`, `say`, `echo`, `print_markdown`, and any string printed on `console`:
`attention_ref.cli.plain_console.PlainConsole`) writes what it prints through `printable`
(`attention_ref.render.printable`): every control character but the line ending, C1 and the
bidirectional controls shown as its escape (``\\x1b``, ``\\u202e``), at a terminal and to a
pipe alike, before rich measures it. rich's own colours are rich's: only the text is escaped.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attention_ref.render.printable import printable

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

#: the width of a console that is not a terminal (a pipe, a log): whole lines
PIPE_WIDTH = 240
#: the line under a table that left columns out, per language (``lang`` of `print_table`)
LEFT_OUT = {
    "en": "left out at {width} columns: {names}",
    "pt": "deixadas de fora em {width} colunas: {names}",
}


@dataclass(frozen=True)
class Column:
    """A table's column: its header, whether it is kept whole, how soon it is left out, and
    whether its cells are words that may go over lines (at their spaces, never inside one)."""

    name: str
    keep: bool = False
    rank: int = 0
    justify: str = "left"
    wrap: bool = False


def console() -> Console:
    """The terminal's console; a wide one when the output is not a terminal. It reads no
    markup: a string printed on it shows its brackets (``[/]``, ``[bold]``) as they are; and
    every string printed on it is `printable` (`PlainConsole`)."""
    from attention_ref.cli.plain_console import PlainConsole

    found = PlainConsole(highlight=False, markup=False)
    if found.is_terminal or os.environ.get("COLUMNS", "").isdigit():  # a width said: kept
        return found
    return PlainConsole(highlight=False, markup=False, width=PIPE_WIDTH)


def terminal_columns() -> int | None:
    """The width a report's lines are broken at: the terminal's (``COLUMNS`` where it says
    one); ``None`` when the output is no terminal, a pipe or a file (whole lines, for a program
    to read, whatever ``COLUMNS`` says: pytest-xdist's workers say 80)."""
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def plain(text: object) -> Text:
    """``text`` as rich prints it character for character, whatever the console: a
    `rich.text.Text`, never markup (``[/]``, ``[link=…]``) nor a style, and `printable` (a
    control character shown as its escape, never sent to the terminal)."""
    from rich.text import Text

    return Text(printable(text))


def width_of(text: str) -> int:
    """The characters a cell takes across as printed (`printable`): its longest line (a cell
    may hold several)."""
    return max((len(line) for line in printable(text).split("\n")), default=0)


def needs(column: Column, cells: Sequence[str]) -> int:
    """The characters a column needs: its header and every line of every cell whole."""
    return max([len(column.name), *(width_of(cell) for cell in cells)])


#: where a long word of a column of words may go over lines: after an underscore (a catalogue
#: name, ``mask_added_after_softmax``), the only place besides a space
_WORD_PIECE = re.compile(r"[^_]*_|[^_]+")


def pieces(word: str) -> list[str]:
    """A word cut where it may go over lines: after each underscore (``mask_`` ``added_``
    ``after_`` ``softmax``); a word without one is one piece."""
    return _WORD_PIECE.findall(word) or [word]


def least(column: Column, cells: Sequence[str]) -> int:
    """The fewest characters a column may take: its header whole; a column of words its
    longest piece (`pieces`: never a word cut elsewhere, never zero width); any other all of
    every cell (`needs`)."""
    if not column.wrap:
        return needs(column, cells)
    words = [p for cell in cells for w in printable(cell).split() for p in pieces(w)]
    return max([len(column.name), *(len(p) for p in words)])


def lines_of(text: str, width: int) -> str:
    """A cell of words over lines of at most ``width`` characters: broken at its spaces, a word
    longer than a line after its underscores (`pieces`), a piece never cut."""
    out: list[str] = []
    for line in printable(text).split("\n"):
        row = ""
        for word in line.split():
            parts = [word] if len(word) <= width else pieces(word)
            for j, part in enumerate(parts):
                glue = " " if row and j == 0 else ""
                if row and len(row) + len(glue) + len(part) > width:
                    out.append(row)
                    row, glue = "", ""
                row += glue + part
        out.append(row)
    return "\n".join(out)


def fit(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> list[int]:
    """The indices of the columns shown at ``width`` (`layout`)."""
    return layout(columns, rows, width)[0]


def layout(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> tuple[list[int], list[int]]:
    """``(shown, widths)``: the columns shown at ``width`` and the characters each takes. The
    others (not ``keep``) go first, lowest rank first, until the rest fit whole, each cell on
    one line; then, if the kept ones do not fit even with their words over lines (`least`), kept
    ones go too, lowest rank first (the rightmost of a rank first). The room left is given to
    the columns of words, shared alike, up to what they need whole. A table's
    frame takes 3 characters per column and 1 more (rich's default box)."""
    cells = [[str(r[i]) for r in rows] for i in range(len(columns))]
    natural = [needs(c, cells[i]) for i, c in enumerate(columns)]
    fewest = [least(c, cells[i]) for i, c in enumerate(columns)]

    def total(shown: list[int], of: list[int]) -> int:
        return sum(of[i] + 3 for i in shown) + 1

    shown = list(range(len(columns)))
    for keep in (False, True):
        sizes = fewest if keep else natural
        for i in sorted(
            (i for i, c in enumerate(columns) if c.keep == keep and i in shown),
            key=lambda i: (columns[i].rank, -i),
        ):
            if total(shown, sizes) <= width or len(shown) == 1:
                break
            shown.remove(i)
    widths = {i: natural[i] if not columns[i].wrap else fewest[i] for i in shown}
    room = width - total(shown, [widths.get(i, 0) for i in range(len(columns))])
    # the columns of words share the room, a character at a time each, up to what they need
    # whole
    growing = [i for i in shown if columns[i].wrap and widths[i] < natural[i]]
    while room > 0 and growing:
        for i in list(growing):
            if room == 0:
                break
            widths[i] += 1
            room -= 1
            if widths[i] >= natural[i]:
                growing.remove(i)
    return shown, [widths[i] for i in shown]


def print_table(
    out: Console,
    title: str,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    elsewhere: str = "",
    lang: str = "en",
    lines: bool = False,
) -> list[str]:
    """Print ``rows`` under ``title`` (a line of its own, never squeezed into the frame) at the
    console's width (`layout`); returns the names of the columns left out (and says so, in
    ``lang``, with ``elsewhere``: where the reader finds them). Every cell and header is
    `plain` text; a cell of words goes over lines (`lines_of`), with a rule between rows when
    one does (or with ``lines``)."""
    from rich.table import Table

    shown, widths = layout(columns, rows, out.width)
    say(out, title)
    body = [
        [
            lines_of(str(r[i]), w) if columns[i].wrap else printable(str(r[i]))
            for i, w in zip(shown, widths, strict=True)
        ]
        for r in rows
    ]
    over = any(
        "\n" in cell and "\n" not in str(r[i])
        for row, r in zip(body, rows, strict=True)
        for cell, i in zip(row, shown, strict=True)
    )
    table = Table(show_header=True, show_lines=lines or over)  # a rule between rows
    for i, w in zip(shown, widths, strict=True):
        c = columns[i]
        table.add_column(
            plain(c.name),
            justify=c.justify,  # type: ignore[arg-type]
            no_wrap=True,
            overflow="fold",
            min_width=w,
            max_width=w,
        )
    for row in body:
        table.add_row(*(plain(cell) for cell in row))
    out.print(table)
    left = [c.name for i, c in enumerate(columns) if i not in shown]
    if left:
        where = f"; {elsewhere}" if elsewhere else ""
        said = LEFT_OUT.get(lang, LEFT_OUT["en"]).format(width=out.width, names=", ".join(left))
        say(out, f"({said}{where})")
    return left


def say(out: Console, text: str) -> None:
    """Print ``text`` broken at spaces to the console's width; a word longer than a line (a URL,
    an id) keeps a line of its own, whole. Printed as it is (no markup: ``heads[0].A``), and
    `printable`."""
    lines = wrapped_lines(printable(text), out.width)
    out.print("\n".join(lines), soft_wrap=True, markup=False, highlight=False)


def echo(text: str) -> None:
    """Print ``text`` as `check`'s report is printed: at a terminal, broken at its width
    (`terminal_columns`, `wrapped_lines`: an indented line, a command to copy, kept whole); to
    a pipe or a file, as it is; `printable` in both."""
    columns, text = terminal_columns(), printable(text)
    print(text if columns is None else "\n".join(wrapped_lines(text, columns)))


def wrapped_lines(text: str, width: int) -> list[str]:
    """``text``'s lines broken at spaces to ``width``, a word longer than a line on a line of
    its own, whole; an indented line (a command, an address, to be copied) kept whole."""
    lines = []
    for line in text.splitlines() or [""]:
        if line.startswith("  "):
            lines.append(line)
            continue
        wrapped = textwrap.wrap(
            line, max(width, 20), break_long_words=False, break_on_hyphens=False
        )
        lines += wrapped or [""]
    return lines


def markdown_blocks(text: str) -> list[tuple[str, str | list[list[str]]]]:
    """``text`` (markdown) cut into its tables and the rest, in order: ``("table", rows)`` with
    the header first (the ``|---|`` line dropped), ``("text", markdown)`` otherwise."""
    out: list[tuple[str, str | list[list[str]]]] = []
    kept: list[str] = []
    rows: list[list[str]] = []

    def flush() -> None:
        if kept:
            out.append(("text", "\n".join(kept)))
            kept.clear()
        if rows:
            out.append(("table", list(rows)))
            rows.clear()

    for line in text.splitlines():
        if line.startswith("|") and line.rstrip().endswith("|"):
            if kept:
                flush()
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):  # not the |---|---:| line
                rows.append(cells)
        else:
            if rows:
                flush()
            kept.append(line)
    flush()
    return out


def print_markdown(
    out: Console, text: str, *, elsewhere: str = "", lang: str = "en", kept: str = "best val"
) -> None:
    """Markdown at a terminal: its text rendered at the console's width, each table by
    `print_table` (its first column and its best validation loss, the column whose header
    starts with ``kept``, kept; the others left out from the right as the width needs, and
    said in ``lang``; never a cell cut short)."""
    from rich.markdown import Markdown

    for kind, block in markdown_blocks(text):
        if kind == "text":
            assert isinstance(block, str)
            if block.strip():
                out.print(Markdown(printable(block)), soft_wrap=False)
            continue
        assert isinstance(block, list)
        header, *rows = block
        columns = [
            Column(
                name,
                keep=i == 0 or name.startswith(kept),
                rank=len(header) - i,
                justify="left" if i == 0 else "right",
            )
            for i, name in enumerate(header)
        ]
        print_table(out, "", columns, rows, elsewhere=elsewhere, lang=lang)


#: a Markdown line that is no paragraph text: a table row, a heading, a fence, a math block, an
#: indented (code) line, a blank line
_NOT_PROSE = re.compile(r"^(\||#|```|~~~|\$\$|\s{4}|\s*$)")
_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)")


def wrap_markdown(text: str, columns: int) -> str:
    """Markdown for a terminal ``columns`` wide: each paragraph and list item broken at spaces
    (never inside a word, a number or an inline formula's token), the same Markdown after (a
    line break inside a paragraph is a space); tables, headings, fenced code and ``$$`` math
    as they are."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        fence = line.startswith(("```", "~~~")) or line.strip() == "$$"
        if fence or (line.startswith("$$") and not fenced):  # a block, or a one-line formula
            fenced = fenced != fence
            out.append(line)
            continue
        if fenced or _NOT_PROSE.match(line) or len(line) <= columns:
            out.append(line)
            continue
        item = _ITEM.match(line)
        indent = " " * len(item.group(1)) if item else ""
        out += textwrap.wrap(
            line,
            max(columns, 20),
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")
