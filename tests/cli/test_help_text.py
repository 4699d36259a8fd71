"""Every ``--help`` (issue 31, item 8): its paragraphs flow (the terminal wraps them, never a
line cut short because the docstring's source broke there), and no Typer placeholder shows:
not ``{answer}`` in the usage line, not ``<path>``, ``<str>`` or ``<list[Path]>`` as a type.

Every command and sub-command is visited (commands added later are covered), at 80 and 120
columns; negative controls show that the measures see the old help.
"""

from __future__ import annotations

import itertools
import re

import pytest
import typer

from attention_ref.cli.main import app, main
from attention_ref.cli.options import flow_paragraphs, tidy_help

#: Typer's placeholders: a required argument in braces, a type in angle brackets
PLACEHOLDER = re.compile(r"\{[a-z_]+\}|<(?:str|int|float|bool|path|file|list\[[^\]]*\])>")


def command_paths() -> list[tuple[str, ...]]:
    """Every command's words after ``attnref`` (``()`` is the group itself)."""
    paths, todo = [], [((), typer.main.get_command(app))]
    while todo:
        path, cmd = todo.pop()
        paths.append(path)
        todo += [((*path, n), c) for n, c in getattr(cmd, "commands", {}).items()]
    return sorted(paths)


def help_of(path: tuple[str, ...], columns: int, monkeypatch, capsys) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.delenv("LINES", raising=False)
    assert main([*path, "--help"]) == 0
    return capsys.readouterr().out


def description(out: str) -> list[list[str]]:
    """The paragraphs of the description (between the usage line and the first panel), each
    as its printed lines, stripped."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    end = next((i for i, line in enumerate(lines) if line.startswith("╭")), len(lines))
    text = [line.strip() for line in lines[start:end]]
    return [list(g) for blank, g in itertools.groupby(text, key=lambda t: not t) if not blank]


def badly_broken(lines: list[str], width: int) -> list[str]:
    """The lines that end although the next word would have fitted on them."""
    return [a for a, b in itertools.pairwise(lines) if len(a) + 1 + len(b.split()[0]) <= width]


PATHS = command_paths()


def test_every_command_is_visited():
    assert ("check",) in PATHS and ("homework", "submit") in PATHS and len(PATHS) >= 20


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("path", PATHS, ids=lambda p: "-".join(p) or "attnref")
def test_help_flows_and_shows_no_placeholder(path, columns, monkeypatch, capsys):
    out = help_of(path, columns, monkeypatch, capsys)
    assert PLACEHOLDER.findall(out) == []
    width = columns - 2  # rich pads the description by one column on each side
    ragged = [(p, badly_broken(p, width)) for p in description(out) if badly_broken(p, width)]
    assert ragged == []


def test_arguments_are_named_as_click_does(monkeypatch, capsys):
    out = help_of(("homework", "submit"), 80, monkeypatch, capsys)
    assert "Usage: attnref homework submit [OPTIONS] NAME ANSWERS..." in out
    assert re.search(r"answers\.\.\.\s+PATH\s", out)
    out = help_of(("check",), 80, monkeypatch, capsys)
    assert "Usage: attnref check [OPTIONS] ANSWER" in out
    assert re.search(r"answer\s+PATH\s", out)


def test_control_typers_own_help_shows_the_placeholders():
    """Without `tidy_help`, Typer writes ``{answers}`` and ``<list[Path]>``."""
    cmd = typer.main.get_command(app).commands["homework"].commands["submit"]
    ctx = typer.Context(cmd, info_name="submit")
    usage = " ".join(p for param in cmd.params for p in param.get_usage_pieces(ctx))
    assert PLACEHOLDER.findall(usage)
    assert "<list[Path]>" in [param.display_type_rich(ctx) for param in cmd.params]
    # and the same command after tidy_help has none
    tidied = tidy_help(typer.main.get_command(app)).commands["homework"].commands["submit"]
    usage = " ".join(p for param in tidied.params for p in param.get_usage_pieces(ctx))
    assert PLACEHOLDER.findall(usage) == [] and "NAME ANSWERS..." in usage


def test_control_a_docstring_paragraph_printed_as_is_is_ragged():
    """The negative control: a later paragraph of ``check``'s docstring printed with its
    source's line breaks (as Typer does) at 80 columns has lines cut short; flowed, none."""
    import inspect
    import io

    from rich.console import Console
    from rich.text import Text

    from attention_ref.cli.check import check

    def printed(text: str) -> list[str]:
        console = Console(width=78, file=io.StringIO(), color_system=None)
        console.print(Text(text))
        return [line.rstrip() for line in console.file.getvalue().splitlines()]

    paragraph = inspect.cleandoc(check.__doc__ or "").split("\n\n")[1]
    assert badly_broken(printed(paragraph), 78) != []
    assert badly_broken(printed(flow_paragraphs(paragraph)), 78) == []


def test_flow_paragraphs_keeps_the_authors_breaks():
    doc = """First line
    goes on.

    A paragraph
    over lines:
    - an item
      that goes on
    - another item
    1. a numbered one

    Last.
    \f
    kept
    as is"""
    assert flow_paragraphs(doc) == (
        "First line goes on.\n\nA paragraph over lines:\n- an item that goes on\n"
        "- another item\n1. a numbered one\n\nLast.\n\f\nkept\nas is"
    )


def option_words(path: tuple[str, ...]) -> list[str]:
    """Every word of the help of ``path``'s options and arguments, as written."""
    cmd = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    return [w for p in cmd.params for w in (getattr(p, "help", None) or "").split()]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: "-".join(p) or "attnref")
def test_at_80_columns_no_word_of_an_options_help_is_cut(path, monkeypatch, capsys):
    """Rich cuts a word longer than the help column with "…" (issue 42, item 8: ``server assign
    --help`` showed ``$MLFLOW_TRACKING_SERVER_CE…``): every word is printed whole."""
    out = help_of(path, 80, monkeypatch, capsys)
    printed = set(re.sub(r"[│╭╮╰╯─]", " ", out).split())
    cut = [w for w in option_words(path) if w not in printed and len(w) > 10]
    assert cut == []


def test_control_a_word_wider_than_the_help_column_is_cut(monkeypatch, capsys):
    """The negative control: the old help of ``--tracking-uri`` at 80 columns loses its
    variable's name to "…"."""
    import io

    from rich.console import Console
    from rich.table import Table

    table = Table.grid()
    table.add_column(width=28)
    table.add_row("for HTTPS, its certificate in $MLFLOW_TRACKING_SERVER_CERT_PATH.")
    console = Console(width=80, file=io.StringIO(), color_system=None)
    console.print(table)
    assert "$MLFLOW_TRACKING_SERVER_CERT_PATH." not in console.file.getvalue().split()
