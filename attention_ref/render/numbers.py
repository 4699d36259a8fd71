"""Numbers and shapes as every writer prints them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from attention_ref.render.document import JSONValue


def fmt_number(v: float, precision: int, *, latex: bool = False) -> str:
    """A number with ``precision`` decimals; ``-inf`` as ``-∞`` (``-\\infty`` in LaTeX)."""
    if math.isinf(v):
        sign = "-" if v < 0 else ""
        return f"{sign}\\infty" if latex else f"{sign}∞"
    text = f"{v:.{precision}f}"
    if text.startswith("-") and float(text) == 0.0:
        text = text[1:]  # no "-0.000"
    return text


def jsonable(obj: JSONValue, precision: int | None = None) -> JSONValue:
    """Floats (optionally rounded) with infinities as the strings ``"-inf"``/``"inf"``."""
    if isinstance(obj, float):
        if math.isinf(obj):
            return "-inf" if obj < 0 else "inf"
        return round(obj, precision) if precision is not None else obj
    if isinstance(obj, Mapping):
        return {k: jsonable(v, precision) for k, v in obj.items()}
    if isinstance(obj, Sequence) and not isinstance(obj, str):
        return [jsonable(v, precision) for v in obj]
    return obj


def shape_text(shape: tuple[int, ...]) -> str:
    """``(1, 4, 6)``."""
    return "(" + ", ".join(str(d) for d in shape) + ")"
