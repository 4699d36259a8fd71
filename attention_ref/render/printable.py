"""Text a terminal shows, never obeys: the one function every printed string goes through.

A string a student chose (a run's name, a parameter, a key of an answer file, an account's
name, an error message that quotes one) reaches a teacher's terminal through attnref's
tables and lines. A terminal acts on some characters instead of showing them: ``ESC`` starts
a sequence that sets the window's title (``ESC ]0;…BEL``), clears the screen (``ESC [2J``),
colours or hides text (``ESC [8m``), or makes a link to an address the student chose
(``ESC ]8;;URL``); a C1 character is the same thing in one byte (``U+009B`` is ``ESC [``);
bidirectional overrides and isolates (``U+202A``–``U+202E``, ``U+2066``–``U+2069``) reorder
what is read after them, so a line reads otherwise than it is written. rich strips a few of
these (BEL, BS, VT, FF, CR) from a `rich.text.Text`, never ``ESC``, and `print` none.

`printable` writes each such character as an escape that a Python string literal reads
back as that character: a C0 character as ``\\x1b``, the others as ``\\u009b``, ``\\u202e``
(JSON reads those too: the JSON attnref prints, which holds no raw C0 character but its line
endings, stays the same JSON with the same strings). The reader sees that it is there and what
it is; the terminal shows the rest as written. Only the line ending ``\\n`` is kept (attnref's
own lines and a table's cells of several lines use it); a tab, a carriage return, every other
C0 character, ``DEL``, every C1 character, the bidirectional controls and Unicode's line and
paragraph separators are escaped. A backslash stays as it is (a path on Windows, a LaTeX
command): the text is for reading, not for reading back. `printable` of its own result is
that result.

The CLI prints through `attention_ref.cli.tables` (`plain`, `say`, `echo`, its `console`,
whose every string goes through here) and its error lines (`attention_ref.cli.main`); the
rich writer of this package (`attention_ref.render.terminal`, `attention_ref.render.emit`)
through here too.
"""

from __future__ import annotations

import re

#: the characters a terminal may act on rather than show: C0 but the line ending, DEL, C1,
#: the bidirectional embeddings, overrides and isolates, and the line and paragraph separators
ACTED_ON = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """``text`` (``str(text)``) with every character a terminal acts on written as its escape
    (``ESC`` as ``\\x1b``, ``CSI`` as ``\\u009b``, ``U+202E`` as ``\\u202e``), line endings
    kept: shown as written in any terminal, to a pipe the same."""
    return ACTED_ON.sub(_escape, str(text))


__all__ = ["ACTED_ON", "printable"]
