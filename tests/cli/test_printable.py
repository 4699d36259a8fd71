"""Every string attnref prints is shown, never obeyed: `printable`, and the CLI's printers on it.

Issue 57, finding 6: a run named with ``ESC ]0;…BEL`` (the window's title), ``ESC [2J`` (clear
the screen), colours, an OSC 8 link and ``ESC [8m`` (hidden text) was printed raw by the
teacher's tables (rich's `Text` strips BEL, BS, VT, FF and CR, never ESC). Here: the one
function, class by class of control character, and each printer of `attention_ref.cli.tables`
(a table's cells and headers, a line of words, an echoed line, any string on its console),
printed to a console that is a terminal and to one that is not.
"""

from __future__ import annotations

import ast
import io
import json
import unicodedata

import pytest
from rich.console import Console

from attention_ref.cli import tables
from attention_ref.cli.plain_console import PlainConsole
from attention_ref.render.printable import printable

#: each class of character a terminal acts on, with one of it and its escape
CLASSES = [
    ("NUL", "\x00", "\\x00"),
    ("BEL (ends an OSC)", "\x07", "\\x07"),
    ("BS", "\x08", "\\x08"),
    ("TAB", "\t", "\\x09"),
    ("VT", "\x0b", "\\x0b"),
    ("FF", "\x0c", "\\x0c"),
    ("CR", "\r", "\\x0d"),
    ("ESC", "\x1b", "\\x1b"),
    ("US", "\x1f", "\\x1f"),
    ("DEL", "\x7f", "\\u007f"),
    ("C1 PAD", "\x80", "\\u0080"),
    ("C1 NEL", "\x85", "\\u0085"),
    ("C1 CSI", "\x9b", "\\u009b"),
    ("C1 OSC", "\x9d", "\\u009d"),
    ("C1 APC", "\x9f", "\\u009f"),
    ("LINE SEPARATOR", "\u2028", "\\u2028"),
    ("PARAGRAPH SEPARATOR", "\u2029", "\\u2029"),
    ("LRE", "\u202a", "\\u202a"),
    ("RLE", "\u202b", "\\u202b"),
    ("PDF", "\u202c", "\\u202c"),
    ("LRO", "\u202d", "\\u202d"),
    ("RLO", "\u202e", "\\u202e"),
    ("LRI", "\u2066", "\\u2066"),
    ("RLI", "\u2067", "\\u2067"),
    ("FSI", "\u2068", "\\u2068"),
    ("PDI", "\u2069", "\\u2069"),
]

#: what finding 6's run was named: a title, a clear screen, a colour, a link, hidden text, and
#: the same in C1 and a right-to-left override
PAYLOAD = (
    "\x1b]0;pwned\x07"
    "\x1b[2J"
    "\x1b[31mred\x1b[0m"
    "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\"
    "\x1b[8mhidden\x1b[0m"
    "\x9b2J"
    "\u202eevil\u202c"
)
#: the pieces of it a terminal acts on, none of which may reach one
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u202c")


@pytest.mark.parametrize(("name", "char", "escaped"), CLASSES, ids=[c[0] for c in CLASSES])
def test_each_control_character_is_written_as_its_escape(name, char, escaped):
    assert printable(f"a{char}b") == f"a{escaped}b", name


def test_every_character_a_terminal_acts_on_is_escaped_and_only_those():
    """Over the whole Basic Multilingual Plane: C0 but the line ending, DEL, C1, the bidi
    controls and the line and paragraph separators are escaped; every other character (a
    letter, an accent, a CJK character, a zero-width joiner, U+FFFD) is kept as it is."""
    acted_on = {chr(c) for c in range(0x20) if c != 0x0A} | {chr(c) for c in range(0x7F, 0xA0)}
    acted_on |= {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
    acted_on |= {"\u2028", "\u2029"}
    for code in range(0x10000):
        c = chr(code)
        if 0xD800 <= code <= 0xDFFF:
            continue
        shown = printable(c)
        if c in acted_on:
            assert shown.startswith("\\") and shown.isascii() and shown.isprintable(), hex(code)
        else:
            assert shown == c, hex(code)
    assert unicodedata.bidirectional("\u202e") == "RLO"  # the table above names the right ones


def test_printable_keeps_line_endings_and_backslashes_and_is_its_own_fixed_point():
    assert printable("two\nlines") == "two\nlines"
    assert printable("C:\\temp \\frac") == "C:\\temp \\frac"
    once = printable(PAYLOAD)
    assert printable(once) == once
    assert not any(raw in once for raw in RAW)
    assert once.startswith("\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mred")
    assert printable(42) == "42"  # anything, as str() writes it


def test_an_escape_reads_back_as_its_character_in_python_and_in_json():
    """Each escape is one a Python string literal reads back; the JSON attnref prints
    (`json.dumps`, raw non-ASCII kept) is the same JSON, with the same strings, once
    `printable`."""
    every = "".join(char for _, char, _ in CLASSES)
    assert ast.literal_eval(f'"{printable(every)}"') == every
    doc = {"name": PAYLOAD, "del": "a\x7fb", PAYLOAD: ["\u2067", 1.5]}
    for indent in (None, 1):
        text = json.dumps(doc, ensure_ascii=False, indent=indent)
        assert json.loads(printable(text)) == doc
        assert not any(raw in printable(text) for raw in RAW)


def consoles() -> list[tuple[str, Console, io.StringIO]]:
    """The CLI's console (`PlainConsole`, what `tables.console` makes) writing to a
    buffer 400 columns wide (a name's escape is found whole): once as a terminal (colours on,
    as at a teacher's screen) and once not (a pipe)."""
    found = []
    for kind, terminal in (("terminal", True), ("pipe", False)):
        buffer = io.StringIO()
        out = PlainConsole(
            file=buffer,
            force_terminal=terminal,
            color_system="truecolor" if terminal else None,
            width=400,
            highlight=False,
            markup=False,
        )
        found.append((kind, out, buffer))
    return found


@pytest.mark.parametrize("kind", ["terminal", "pipe"])
def test_the_cli_printers_show_a_students_string_escaped(kind):
    """`print_table` (a cell and a header), `say`, and a bare string printed on the console:
    none lets a control character of the student's through, at a terminal (with rich's own
    colours around) or to a pipe; each shows the escaped name."""
    (_, out, buffer), *_ = [c for c in consoles() if c[0] == kind]
    assert out.is_terminal is (kind == "terminal")
    tables.print_table(
        out,
        f"runs of {PAYLOAD}",
        [tables.Column("name", keep=True, wrap=True), tables.Column(PAYLOAD, keep=True)],
        [[PAYLOAD, "x"]],
    )
    tables.say(out, f"store: {PAYLOAD}")
    out.print(f"a line: {PAYLOAD}")
    out.print(tables.plain(PAYLOAD))
    text = buffer.getvalue()
    for piece in ("]0;", "[2J", "[31m", "]8;", "[8m"):
        assert "\x1b" + piece not in text, (piece, text)
    for raw in RAW[1:]:
        assert raw not in text, (raw, text)
    assert text.count(printable(PAYLOAD)) >= 5, text


def test_echo_shows_a_students_string_escaped(capsys):
    tables.echo(f"wrote {PAYLOAD}\n  {PAYLOAD}")
    out = capsys.readouterr().out
    assert not any(raw in out for raw in RAW), out
    assert out.count(printable(PAYLOAD)) == 2


def test_a_markdown_report_at_a_terminal_shows_a_students_string_escaped():
    """`print_markdown` (a report at a terminal): its prose and its table's cells."""
    (_, out, buffer), *_ = consoles()
    tables.print_markdown(
        out, f"A run named {PAYLOAD}.\n\n| run | best val |\n|---|---:|\n| {PAYLOAD} | 1.0 |\n"
    )
    text = buffer.getvalue()
    assert not any(raw in text for raw in ("\x1b]", "\x1b[2J", "\x1b[8m", *RAW[1:])), text


def test_the_cli_console_is_the_plain_one(monkeypatch):
    """`tables.console`, to a pipe and with a width said, is a `PlainConsole`."""
    assert isinstance(tables.console(), PlainConsole)
    monkeypatch.setenv("COLUMNS", "100")
    assert isinstance(tables.console(), PlainConsole)
