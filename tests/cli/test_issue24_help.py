"""``attnref --help``: each command's summary is one flowing paragraph, wrapped only by width.

The summaries are the first paragraphs of the commands' docstrings; given to Typer as they
are, they kept their line breaks mid-sentence ("… the first wrong step, and the" / "mistakes
of the catalogue …", a line cut short). Tested at 80 and 120 columns, as a person's terminal.
"""

from __future__ import annotations

import inspect
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from attention_ref.cli.main import app, summary

ATTNREF = str(Path(sys.executable).with_name("attnref"))


def panel(columns: int) -> dict[str, tuple[list[str], int]]:
    """The Commands panel of ``attnref --help``: command -> (its description's lines, the
    width of the description column)."""
    env = {**os.environ, "COLUMNS": str(columns)}
    run = subprocess.run([ATTNREF, "--help"], env=env, capture_output=True, text=True, check=True)
    lines = run.stdout.splitlines()
    assert max(len(line) for line in lines) == columns  # the width asked for
    start = next(i for i, line in enumerate(lines) if "Commands" in line) + 1
    rows: dict[str, tuple[list[str], int]] = {}
    current, indent = "", 0
    for line in lines[start:]:
        if line.startswith("╰"):
            break
        named = re.match(r"│ (\S+)(\s+)", line)
        if named:  # a command's first line: its name, then its description
            current, indent = named.group(1), named.end()
            rows[current] = ([], len(line) - indent - 2)  # less the padding and the border
        rows[current][0].append(line[indent:-1].rstrip())
    return rows


def badly_broken(lines: list[str], width: int) -> list[str]:
    """The lines that end although the next word would have fitted on them."""
    return [a for a, b in itertools.pairwise(lines) if len(a) + 1 + len(b.split()[0]) <= width]


@pytest.mark.parametrize("columns", [80, 120])
def test_every_summary_flows(columns):
    rows = panel(columns)
    commands = {c.name or c.callback.__name__: c.callback for c in app.registered_commands}
    assert set(commands) <= set(rows)
    for name, callback in commands.items():
        lines, width = rows[name]
        assert " ".join(" ".join(lines).split()) == summary(callback), name
        assert badly_broken(lines, width) == [], (name, lines)


def test_a_docstring_line_break_is_seen():
    """The negative control: the summary as Typer showed it before (each docstring line
    wrapped on its own, at the width of the 80-column panel) has a line cut short."""
    import textwrap

    from attention_ref.cli.check import check

    width = panel(80)["check"][1]
    first = inspect.cleandoc(check.__doc__ or "").split("\n\n")[0].splitlines()
    as_before = [part for line in first for part in textwrap.wrap(line, width)]
    assert badly_broken(as_before, width) != []
