"""The error every reader of a user's input raises, and the size it reads at most."""

from __future__ import annotations

from typing import Final

#: The largest file a command reads (bytes).
MAX_FILE_BYTES: Final = 5_000_000


class InputError(ValueError):
    """A user's input cannot be used; the message is one line for the CLI."""


__all__ = ["MAX_FILE_BYTES", "InputError"]
