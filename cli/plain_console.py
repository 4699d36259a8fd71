"""The CLI's rich console: every string printed on it is shown, never obeyed by the terminal.

`attention_ref.cli.tables.console` makes one. A string printed on it, as a line or as a
table's cell, becomes rich text through `PlainConsole.render_str`, which writes it
`printable` first (`attention_ref.render.printable`: ``ESC`` as ``\\x1b``, ``U+202E`` as
``\\u202e``), before rich measures or wraps it. rich's own styles (a bold header, a colour)
are not text: rich writes them as it always does. A `rich.text.Text` made elsewhere is the
maker's to make `printable` (`attention_ref.cli.tables.plain` does).

A module of its own so that `attention_ref.cli.tables` (imported when the CLI starts) imports
rich only when a command prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console

from attention_ref.render.printable import printable

if TYPE_CHECKING:
    from rich.text import Text


class PlainConsole(Console):
    """A `rich.console.Console` whose every printed string is `printable`."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """rich's text of ``text``, its control characters shown as their escapes."""
        return super().render_str(printable(text), **kwargs)


__all__ = ["PlainConsole"]
