"""JSON: a document's ``data``, with masked scores as the string ``"-inf"``."""

from __future__ import annotations

import json

from attention_ref.render.document import JSONValue
from attention_ref.render.numbers import jsonable


def to_json(data: JSONValue, precision: int | None = None) -> str:
    """``data`` as indented JSON (UTF-8 kept); floats rounded to ``precision`` if given."""
    return json.dumps(jsonable(data, precision), ensure_ascii=False, indent=2)
