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
  number too large for a float (``1e999``), an integer of more than `MAX_INT_DIGITS` digits, a
  number written with more than `MAX_NUMBER_CHARS` characters;
* strings (keys included) with control characters or unpaired surrogates (``"\ud800"``),
  which would break the one line of an error message or the terminal;
* text that is not JSON, with the line and column of the first error.

With ``exact=True`` the numbers with a fraction or an exponent are kept as written
(`Literal`, a ``str``), so that their decimals can be counted (``0.670`` has three). With
``lang="pt"`` every message is in Portuguese (an answer to an exercise in Portuguese; `WORDS`).
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

from attention_ref.inputs.errors import MAX_FILE_BYTES, InputError

#: The deepest nesting of arrays and objects accepted (an answer needs 5).
MAX_DEPTH: Final = 32
#: The longest integer accepted, in digits.
MAX_INT_DIGITS: Final = 30
#: The longest number with a fraction or an exponent accepted, in characters as written: a
#: float's shortest repr is at most 24 (``-2.2250738585072014e-308``), a statement asks at
#: most 6 decimals. An answer is checked at the decimals it writes: answers padded with 4,000
#: zeros per number made the teacher's grading of a class many times slower (issue 57).
MAX_NUMBER_CHARS: Final = 40

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BAD_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


#: Every message, per language (``what`` names the file: ``answer file answer.json``).
WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "dir": "{what} {p} is a directory, not a JSON file",
        "not_regular": "{what} {p} is not a regular file",
        "not_found": "{what} not found: {p}",
        "cannot_read": "cannot read {what} {p}: {why}",
        "too_large": "{what} {p} is too large: files are limited to {limit:,} bytes",
        "not_utf8": "{what} {p} is not UTF-8 text (byte {at})",
        "nests": "{what} nests arrays/objects {depth} deep; the limit is {limit}",
        "float": "{what} has the number {s}, too large for a float",
        "digits": "{what} has an integer of {n} digits; at most {limit}",
        "number_chars": "{what} has a number written with {n} characters ({s}…); at most {limit}",
        "constant": "{what} has {name} at line {line}, column {col}, which is not JSON (only "
        "finite numbers are allowed)",
        "invalid": "{what} is not valid JSON: {msg} at line {line}, column {col}",
        "too_deep": "{what} nests too deep",
        "char": "{what} has a string with the character U+{code:04X}, which is not allowed (a "
        "control character or an unpaired surrogate)",
    },
    "pt": {
        "dir": "{what} {p} é uma pasta, não um arquivo JSON",
        "not_regular": "{what} {p} não é um arquivo comum",
        "not_found": "{what} não encontrado: {p}",
        "cannot_read": "não foi possível ler {what} {p}: {why}",
        "too_large": "{what} {p} é grande demais: o limite é de {limit:,} bytes",
        "not_utf8": "{what} {p} não é texto UTF-8 (byte {at})",
        "nests": "{what} aninha listas/objetos {depth} níveis; o limite é {limit}",
        "float": "{what} tem o número {s}, grande demais para um float",
        "digits": "{what} tem um inteiro de {n} dígitos; no máximo {limit}",
        "number_chars": "{what} tem um número escrito com {n} caracteres ({s}…); no máximo {limit}",
        "constant": "{what} tem {name} na linha {line}, coluna {col}, o que não é JSON (só "
        "números finitos são aceitos)",
        "invalid": "{what} não é JSON válido: {msg} na linha {line}, coluna {col}",
        "too_deep": "{what} aninha níveis demais",
        "char": "{what} tem um texto com o caractere U+{code:04X}, que não é permitido (um "
        "caractere de controle ou um substituto sem par)",
    },
}
#: The file's name in a message, per language (``what`` as the callers write it, in English).
_WHAT: Final[dict[str, dict[str, str]]] = {
    "en": {},
    "pt": {
        "answer file": "arquivo de resposta",
        "answer": "resposta",
        "input file": "arquivo de entrada",
        "--grad-output file": "arquivo de --grad-output",
    },
}
#: json's own messages, per language (json writes them in English).
_JSON_MESSAGES: Final[dict[str, dict[str, str]]] = {
    "en": {},
    "pt": {
        "Expecting value": "esperava um valor",
        "Expecting ',' delimiter": "esperava o separador ','",
        "Expecting ':' delimiter": "esperava o separador ':'",
        "Expecting property name enclosed in double quotes": "esperava o nome de uma chave entre "
        "aspas duplas",
        "Extra data": "há dados depois do fim do documento",
        "Unterminated string starting at": "texto sem aspas de fechamento",
        "Invalid control character at": "caractere de controle inválido",
        "Invalid \\escape": "escape \\ inválido",
        "Illegal trailing comma before end of array": "vírgula sobrando antes do fim da lista",
        "Illegal trailing comma before end of object": "vírgula sobrando antes do fim do objeto",
    },
}


def _say(lang: str, key: str, **kw: object) -> InputError:
    what = kw.get("what")
    if isinstance(what, str):
        for en, said in _WHAT.get(lang, {}).items():
            if what == en or what.startswith(en + " "):
                kw["what"] = said + what[len(en) :]
                break
    said = WORDS.get(lang, WORDS["en"])[key].format(**kw)
    return InputError(said, lang if lang in WORDS else "en")  # the CLI's prefix follows it


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


def read_text(path: str | Path, what: str, *, lang: str = "en") -> str:
    """A regular file's UTF-8 text, at most `MAX_FILE_BYTES` bytes; else one `InputError`
    (in ``lang``)."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
        if stat.S_ISDIR(mode):
            raise _say(lang, "dir", what=what, p=p)
        if not stat.S_ISREG(mode):
            raise _say(lang, "not_regular", what=what, p=p)
        with p.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise _say(lang, "not_found", what=what, p=p) from None
    except OSError as e:
        raise _say(lang, "cannot_read", what=what, p=p, why=e.strerror or e) from None
    if len(data) > MAX_FILE_BYTES:
        raise _say(lang, "too_large", what=what, p=p, limit=MAX_FILE_BYTES)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise _say(lang, "not_utf8", what=what, p=p, at=e.start + 1) from None


def loads(text: str, what: str, *, exact: bool = False, hint: str = "", lang: str = "en") -> object:
    """JSON text decoded with the bounds of this module; ``hint`` ends the message about
    ``NaN``/``Infinity`` (what to write instead); ``lang``: the language of the messages."""
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise _say(lang, "nests", what=what, depth=depth, limit=MAX_DEPTH)

    def number(s: str) -> float | Literal:
        if len(s) > MAX_NUMBER_CHARS:
            raise _say(lang, "number_chars", what=what, n=len(s), s=s[:12], limit=MAX_NUMBER_CHARS)
        if not math.isfinite(float(s)):
            raise _say(lang, "float", what=what, s=s[:20])
        return Literal(s) if exact else float(s)

    def integer(s: str) -> int:
        if len(s.lstrip("-")) > MAX_INT_DIGITS:
            raise _say(lang, "digits", what=what, n=len(s), limit=MAX_INT_DIGITS)
        return int(s)

    def constant(name: str) -> object:
        line, col = _where(text, name)
        e = _say(lang, "constant", what=what, name=name, line=line, col=col)
        raise InputError(f"{e}: {hint}" if hint else str(e), e.lang)

    try:
        doc = json.loads(text, parse_float=number, parse_int=integer, parse_constant=constant)
    except json.JSONDecodeError as e:
        msg = _JSON_MESSAGES.get(lang, {}).get(e.msg, e.msg)
        raise _say(lang, "invalid", what=what, msg=msg, line=e.lineno, col=e.colno) from None
    except RecursionError:  # unreachable after the depth bound; kept as the last guard
        raise _say(lang, "too_deep", what=what) from None
    _check_strings(doc, what, lang)
    return doc


def _where(text: str, name: str) -> tuple[int, int]:
    """The line and column of the first ``name`` (``NaN``, ``Infinity``) outside strings."""
    blanked = _STRING.sub(lambda m: " " * len(m.group()), text)
    at = blanked.find(name)
    line = blanked.count("\n", 0, at) + 1
    return line, at - blanked.rfind(chr(10), 0, at)


def _check_strings(doc: object, what: str, lang: str = "en") -> None:
    """Refuse control characters and unpaired surrogates in any string or key."""
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, str) and not isinstance(x, Literal):
            if m := _BAD_CHAR.search(x):
                raise _say(lang, "char", what=what, code=ord(m.group()))
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)


def read_json(
    path: str | Path, what: str, *, exact: bool = False, hint: str = "", lang: str = "en"
) -> object:
    """A JSON file decoded within the bounds above; every failure is one `InputError` line
    naming ``what`` and the file (see the module docstring), in ``lang``."""
    return loads(
        read_text(path, what, lang=lang), f"{what} {Path(path)}", exact=exact, hint=hint, lang=lang
    )


__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NUMBER_CHARS",
    "WORDS",
    "Literal",
    "loads",
    "nesting_depth",
    "read_json",
    "read_text",
]
