r"""The one JSON loader of every command that reads a user's JSON file.

``attnref check ANSWER``, ``explain --input FILE`` and ``explain --backward --grad-output FILE``
read their files through `read_json`, which refuses, with one `InputError` line naming the
file, whatever could otherwise end in a traceback, a hang or a misleading number:

* a path that is missing, a folder, or not a regular file (``/dev/zero``, a FIFO);
* more than `MAX_FILE_BYTES` bytes (read at most one byte past the limit, whatever the size
  the file claims), bytes that are not UTF-8 (a UTF-8 byte-order mark is allowed);
* nesting deeper than `MAX_DEPTH` (``[[[[…`` three thousand deep would exhaust Python's
  recursion in the decoder): counted on the text before decoding;
* ``NaN``, ``Infinity``, ``-Infinity`` (not JSON, though Python's decoder takes them), a
  number too large for a float (``1e999``), an integer of more than `MAX_INT_DIGITS` digits;
* strings (keys included) with control characters or unpaired surrogates (``"\ud800"``),
  which would break the one line of an error message or the terminal;
* text that is not JSON, with the line and column of the first error.

With ``exact=True`` the numbers with a fraction or an exponent are kept as written
(`Literal`, a ``str``), so that their decimals can be counted (``0.670`` has three).
Nothing here imports torch.
"""

from __future__ import annotations

import json
import math
import re
import stat
from itertools import accumulate
from pathlib import Path
from typing import Final

from attention_ref.worked.inputs import MAX_FILE_BYTES, InputError

#: The deepest nesting of arrays and objects accepted (an answer needs 5).
MAX_DEPTH: Final = 32
#: The longest integer accepted, in digits.
MAX_INT_DIGITS: Final = 30

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BAD_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


class Literal(str):
    """A JSON number with a fraction or an exponent, kept as written (``"0.670"``)."""

    @property
    def decimals(self) -> int:
        """Decimals written: ``0.670`` → 3, ``2.5e-1`` → 2 (of ``0.25``), ``1e3`` → 0."""
        mantissa, _, exponent = self.lower().partition("e")
        _, _, fraction = mantissa.partition(".")
        return max(0, len(fraction) - int(exponent or 0))


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON text, strings left out (linear time)."""
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(1 if c in "[{" else -1 for c in skeleton), default=0)


def read_text(path: str | Path, what: str) -> str:
    """A regular file's UTF-8 text, at most `MAX_FILE_BYTES` bytes; else one `InputError`."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
        if stat.S_ISDIR(mode):
            raise InputError(f"{what} {p} is a directory, not a JSON file")
        if not stat.S_ISREG(mode):
            raise InputError(f"{what} {p} is not a regular file")
        with p.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{what} not found: {p}") from None
    except OSError as e:
        raise InputError(f"cannot read {what} {p}: {e.strerror or e}") from None
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{what} {p} is too large: files are limited to {MAX_FILE_BYTES:,} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"{what} {p} is not UTF-8 text (byte {e.start + 1})") from None


def loads(text: str, what: str, *, exact: bool = False, hint: str = "") -> object:
    """JSON text decoded with the bounds of this module; ``hint`` ends the message about
    ``NaN``/``Infinity`` (what to write instead)."""
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise InputError(f"{what} nests arrays/objects {depth} deep; the limit is {MAX_DEPTH}")

    def number(s: str) -> float | Literal:
        if not math.isfinite(float(s)):
            raise InputError(f"{what} has the number {s[:20]}, too large for a float")
        return Literal(s) if exact else float(s)

    def integer(s: str) -> int:
        if len(s.lstrip("-")) > MAX_INT_DIGITS:
            raise InputError(f"{what} has an integer of {len(s)} digits; at most {MAX_INT_DIGITS}")
        return int(s)

    def constant(name: str) -> object:
        raise InputError(f"{what} has {name} {_where(text, name)}, which is not JSON (only "
                         "finite numbers are allowed)" + (f": {hint}" if hint else ""))  # fmt: skip

    try:
        doc = json.loads(text, parse_float=number, parse_int=integer, parse_constant=constant)
    except json.JSONDecodeError as e:
        raise InputError(
            f"{what} is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}"
        ) from None
    except RecursionError:  # unreachable after the depth bound; kept as the last guard
        raise InputError(f"{what} nests too deep") from None
    _check_strings(doc, what)
    return doc


def _where(text: str, name: str) -> str:
    """``at line L, column C`` of the first ``name`` (``NaN``, ``Infinity``) outside strings."""
    blanked = _STRING.sub(lambda m: " " * len(m.group()), text)
    at = blanked.find(name)
    line = blanked.count("\n", 0, at) + 1
    return f"at line {line}, column {at - blanked.rfind(chr(10), 0, at)}"


def _check_strings(doc: object, what: str) -> None:
    """Refuse control characters and unpaired surrogates in any string or key."""
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, str) and not isinstance(x, Literal):
            if m := _BAD_CHAR.search(x):
                raise InputError(
                    f"{what} has a string with the character U+{ord(m.group()):04X}, which is "
                    "not allowed (a control character or an unpaired surrogate)"
                )
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)


def read_json(path: str | Path, what: str, *, exact: bool = False, hint: str = "") -> object:
    """A JSON file decoded within the bounds above; every failure is one `InputError` line
    naming ``what`` and the file (see the module docstring)."""
    return loads(read_text(path, what), f"{what} {Path(path)}", exact=exact, hint=hint)


__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "Literal", "loads", "nesting_depth", "read_json",
           "read_text"]  # fmt: skip
