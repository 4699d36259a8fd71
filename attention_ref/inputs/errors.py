"""The error every reader of a user's input raises, and the size it reads at most."""

from __future__ import annotations

from typing import Final

#: The largest file a command reads (bytes).
MAX_FILE_BYTES: Final = 5_000_000


class InputError(ValueError):
    """A user's input cannot be used; the message is one line for the CLI, in ``lang`` (an
    answer's errors speak the answer's language: the CLI's prefix follows it)."""

    def __init__(self, message: str, lang: str = "en") -> None:
        super().__init__(message)
        self.lang = lang


__all__ = ["MAX_FILE_BYTES", "InputError"]
