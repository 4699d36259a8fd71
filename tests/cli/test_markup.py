"""What a user writes is printed as written, never as rich markup: a run named ``[/]``, a
token named ``[bold red]x[/bold red]``, a key ``[link=http://evil]y[/link]``. rich reads
``[...]`` in a string as markup: ``[/]`` alone raised `rich.errors.MarkupError` (a traceback,
exit 1), the others lost their brackets or became a style or a link. The tables and lines of
`attention_ref.cli.tables`, the training commands' console
(`attention_ref.cli.progress.make_console`) and the matrices of
``attnref explain`` (`attention_ref.render.terminal`) print every character as it came."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from attention_ref.cli.main import main
from attention_ref.cli.tables import Column, console, print_table, say

#: strings rich would take for markup: a closing tag with nothing open, a style, a link
MARKUP = ("[/]", "[bold red]x[/bold red]", "[link=http://evil]y[/link]")


def a_console(width: int = 240) -> Console:
    """A console as the tests of `attention_ref.cli.tables` make one: markup on, as rich's
    default."""
    return Console(width=width, file=io.StringIO(), highlight=False, color_system=None)


def test_table_cells_are_printed_as_written():
    """`print_table` (every table of the CLI) shows each cell's characters, on a console whose
    markup is on (rich's default): the cell, not the console, decides."""
    out = a_console()
    columns = [Column("run id", keep=True), Column("name", rank=1), Column("owner", keep=True)]
    rows = [[f"run{i}", name, name] for i, name in enumerate(MARKUP)]
    assert print_table(out, "runs", columns, rows) == []
    text = out.file.getvalue()  # type: ignore[attr-defined]
    for name in MARKUP:
        assert text.count(name) == 2, (name, text)  # the name and the owner columns
    # the control: the same string handed to rich as markup is not shown as written
    control = a_console()
    with pytest.raises(Exception, match="closing tag"):
        control.print(MARKUP[0])
    control.print(MARKUP[1])
    assert MARKUP[1] not in control.file.getvalue()  # type: ignore[attr-defined]


def test_plain_is_text_and_the_cli_console_reads_no_markup(capsys):
    """`plain` makes a `rich.text.Text` of any string; the console of `attention_ref.cli.tables`
    (and the training commands') prints a string's brackets as they are."""
    from rich.text import Text

    from attention_ref.cli.progress import make_console
    from attention_ref.cli.tables import plain

    assert isinstance(plain("[/]"), Text) and plain("[/]").plain == "[/]"
    for make in (console, make_console):
        out = make()
        for name in MARKUP:
            out.print(f"[multihead] {name}")
        printed = capsys.readouterr().out
        assert all(f"[multihead] {name}" in printed for name in MARKUP), printed
    say(a_console(), " ".join(MARKUP))  # the line printer: markup off already


def test_explain_shows_token_names_as_written(tmp_path, capsys):
    """``attnref explain --input`` labels the matrices' rows and columns with the file's token
    names: each is shown whole, and the command exits 0."""
    doc = {
        "tokens": list(MARKUP),
        "X": [[1, 0], [0, 1], [1, 1]],
        "h": 1,
        "W_Q": [[1, 0], [0, 1]],
        "W_K": [[1, 0], [0, 1]],
        "W_V": [[1, 0], [0, 1]],
    }
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code = main(["explain", "--input", str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    for name in MARKUP:
        assert name in out, name
    assert "Traceback" not in out + err
