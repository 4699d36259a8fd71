r"""Numbers and shapes as every writer prints them.

One rule for whole numbers, decided per matrix from its values (`is_integral`): a matrix whose
every finite entry is a whole number is printed without decimals (``1``, ``0``, ``-\infty``),
as the homework writes X, W_Q, Q, K, V, QKᵀ and M; any other matrix prints every entry with
the precision asked for. `matrix_cells` applies it for the terminal, markdown and LaTeX
writers, `jsonable` for JSON (whole numbers as JSON integers).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from attention_ref.render.document import JSONValue, Matrix

#: Beyond 2**53 every float is a whole number and most whole numbers are not floats: such
#: magnitudes are never printed as integers.
EXACT_INTEGERS: Final = 2**53


def fmt_number(v: float, precision: int, *, latex: bool = False, decimal: str = ".") -> str:
    """A number with ``precision`` decimals; ``-inf`` as ``-∞`` (``-\\infty`` in LaTeX).

    ``decimal`` is the decimal mark (``","`` in Portuguese; LaTeX writes it ``{,}``, a comma
    that math mode does not space as punctuation).
    """
    if math.isinf(v):
        sign = "-" if v < 0 else ""
        return f"{sign}\\infty" if latex else f"{sign}∞"
    text = f"{v:.{precision}f}"
    if text.startswith("-") and float(text) == 0.0:
        text = text[1:]  # no "-0.000"
    if decimal != ".":
        text = text.replace(".", "{,}" if latex and decimal == "," else decimal)
    return text


def _whole(v: float) -> bool:
    """``v`` is ±∞ or a whole number held exactly (|v| < 2**53)."""
    return math.isinf(v) or (float(v).is_integer() and abs(v) < EXACT_INTEGERS)


def is_integral(value: Matrix) -> bool:
    """True when every entry is a whole number or ±∞ (the mask M counts as integral).

    An empty matrix, or one of infinities only, is integral too: it has no decimals to show.
    """
    return all(_whole(v) for row in value for v in row)


def matrix_cells(
    value: Matrix, precision: int, *, latex: bool = False, decimal: str = "."
) -> list[list[str]]:
    """The entries of ``value`` as text, row by row, with ``decimal`` as the decimal mark.

    ``precision`` decimals, or none at all when `is_integral` (``1`` rather than ``1.000``).
    """
    p = 0 if is_integral(value) else precision
    return [[fmt_number(v, p, latex=latex, decimal=decimal) for v in row] for row in value]


def _numbers(obj: JSONValue) -> Iterable[float] | None:
    """The leaves of a nested list when every leaf is a number (bools excluded), else None."""
    out: list[float] = []
    stack: list[JSONValue] = [obj]
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, bool | str | Mapping):
            return None
        if isinstance(item, int | float):
            out.append(item)
        else:
            stack.extend(item)
    return out


def jsonable(
    obj: JSONValue, precision: int | None = None, *, whole: bool | None = None
) -> JSONValue:
    """Floats (optionally rounded) with infinities as the strings ``"-inf"``/``"inf"``.

    A list of numbers (any depth: a vector, a matrix, a stack of them) whose every finite
    entry is a whole number keeps its numbers as JSON integers (``1``, not ``1.0``), as the
    integer rule of `matrix_cells` prints them; ``whole`` is that decision, made once at the
    outermost such list (``None``: not made yet), so the row ``(1, 0, 0)`` of a matrix with
    fractions stays ``[1.0, 0.0, 0.0]``. Scalars are left as they are.
    """
    if isinstance(obj, float):
        if math.isinf(obj):
            return "-inf" if obj < 0 else "inf"
        if whole:
            return int(obj)  # in a list of whole numbers
        return round(obj, precision) if precision is not None else obj
    if isinstance(obj, Mapping):
        return {k: jsonable(v, precision) for k, v in obj.items()}
    if isinstance(obj, Sequence) and not isinstance(obj, str):
        if whole is None:
            leaves = _numbers(obj)
            if leaves is not None:
                whole = all(_whole(v) for v in leaves)
        return [jsonable(v, precision, whole=whole) for v in obj]
    return obj


def shape_text(shape: tuple[int, ...]) -> str:
    """``(1, 4, 6)``."""
    return "(" + ", ".join(str(d) for d in shape) + ")"
