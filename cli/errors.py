"""The CLI's one error type: a problem with the user's input, printed as one line, exit 2."""

from __future__ import annotations

EXIT_USAGE = 2

#: the error line's prefix, per language (a student's command speaks the assignment's)
PREFIX = {"en": "attnref: error: ", "pt": "attnref: erro: "}


class CLIError(Exception):
    """A problem with the user's input: printed as one line on stderr, exit code 2, after the
    prefix of its language (``lang``: the message's, English unless a command knows better)."""

    def __init__(self, message: str, lang: str = "en") -> None:
        super().__init__(message)
        self.lang = lang if lang in PREFIX else "en"

    def line(self) -> str:
        """The line printed: the prefix in the message's language, then the message."""
        return PREFIX[self.lang] + str(self)
