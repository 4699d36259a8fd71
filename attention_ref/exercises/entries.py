r"""How a student's matrix is read: each entry as written, with its decimals.

An entry is a number (its decimals kept as written: `attention_ref.inputs.jsonfile.Literal`),
or a masked entry spelled as the statement says (`INFINITIES`:
`attention_ref.exercises.answer_words.MASKED_SPELLINGS`, read as −∞). Anything else is one
`InputError` line in the answer's language that says what to write instead: ``null`` in a
matrix, ``true``, +∞, a number in quotes or with a decimal comma (``"1,0"``), another spelling
of −∞; a matrix is a list of rows of one width (a vector is one row), at most `MAX_SIDE` on a
side. Entries written at most `attention_ref.exercises.answer_words.STAND_IN` are noted: the
check refuses a large number standing in for −∞ (``-1e9``) where −∞ belongs.
"""

from __future__ import annotations

import math
import re
from typing import Final

import numpy as np

from attention_ref.exercises.answer_words import (
    MASKED_SPELLINGS,
    STAND_IN,
    error,
    shown,
    spellings,
    words,
)
from attention_ref.exercises.chain import Given
from attention_ref.inputs.jsonfile import Literal

#: What each accepted spelling of a masked entry reads as (the statement's table, no other).
INFINITIES: Final[dict[str, float]] = dict.fromkeys(MASKED_SPELLINGS, -math.inf)
#: Spellings of +∞: no step has it, so they are refused with the words of −∞.
_PLUS_INF: Final = frozenset({"inf", "+inf", "∞", "+∞", "infinity", "+infinity"})
#: A number written as a string: ``"0.670"``, ``"1,0"``, ``"−2"``.
_NUMBER_TEXT: Final = re.compile(r"[-+−]?(\d+([.,]\d*)?|[.,]\d+)([eE][-+]?\d+)?")
#: The largest matrix an answer may hold, in rows and in columns.
MAX_SIDE: Final = 1024


def _entry(v: object, where: str, lang: str) -> tuple[float, int]:
    """One entry as written: its value and its decimals (else the `InputError` that says what
    to write instead, in ``lang``)."""
    if v is None:
        raise error(lang, "null", where=where)
    if isinstance(v, bool):
        raise error(lang, "bool", where=where, shown=shown(v))
    if isinstance(v, int):
        return float(v), 0
    if isinstance(v, Literal):
        return float(v), min(v.decimals, 15)
    if isinstance(v, float):  # a document decoded without Literal: its shortest repr
        return v, min(Literal(repr(v)).decimals, 15) if math.isfinite(v) else 0
    if isinstance(v, str):
        s = v.strip()
        if s in INFINITIES:
            return INFINITIES[s], 15
        if s.lower() in _PLUS_INF:
            raise error(lang, "plus_inf", where=where, shown=shown(v), spellings=spellings())
        if _NUMBER_TEXT.fullmatch(s):
            plain = s.replace("−", "-").replace(",", ".").lstrip("+")
            kind = "comma" if "," in s else "quoted"
            raise error(lang, kind, where=where, shown=shown(v), plain=plain)
        raise error(lang, "spelling", where=where, shown=shown(v), spellings=spellings())
    raise error(lang, "not_number", where=where, shown=shown(v))


def written_matrix(
    obj: object, where: str, lang: str = "en"
) -> tuple[Given, dict[tuple[int, int], str]]:
    """A student's matrix and its entries written at most `STAND_IN`, by position (row,
    column) as written (`attention_ref.exercises.answer.Answer.large`)."""
    if isinstance(obj, list) and obj and not any(isinstance(r, list) for r in obj):
        obj = [obj]  # a vector (a bias, b_O) as one row
    if not isinstance(obj, list) or not obj or not all(isinstance(r, list) for r in obj):
        raise error(lang, "rows", where=where)
    width = len(obj[0])
    if width == 0:
        raise error(lang, "empty_row", where=where)
    if len(obj) > MAX_SIDE or width > MAX_SIDE:
        raise error(lang, "too_big", where=where, r=len(obj), c=width, m=MAX_SIDE)
    values, decimals = [], []
    large: dict[tuple[int, int], str] = {}
    for i, row in enumerate(obj):
        if len(row) != width:
            raise error(
                lang,
                "ragged",
                where=where,
                i=i + 1,
                k=len(row),
                w=width,
                hint=words(lang, "comma_hint"),
            )
        pairs = [
            _entry(v, words(lang, "entry", step=where, row=i + 1, col=j + 1), lang)
            for j, v in enumerate(row)
        ]
        for j, (x, _) in enumerate(pairs):
            if math.isfinite(x) and x <= STAND_IN:
                large[(i, j)] = str(row[j])
        values.append([x for x, _ in pairs])
        decimals.append([r for _, r in pairs])
    return Given(np.array(values, dtype=np.float64), np.array(decimals, dtype=np.int64)), large


def given_matrix(obj: object, where: str, lang: str = "en") -> Given:
    """A student's matrix (list of rows; a vector is one row), else `InputError` (``where``:
    the step's name in messages, ``lang`` their language)."""
    return written_matrix(obj, where, lang)[0]


__all__ = ["INFINITIES", "MAX_SIDE", "given_matrix", "written_matrix"]
