"""The CLI's one error type: a problem with the user's input, printed as one line, exit 2."""

from __future__ import annotations

EXIT_USAGE = 2


class CLIError(Exception):
    """A problem with the user's input: printed as one line on stderr, exit code 2."""
