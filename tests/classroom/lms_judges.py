"""Judges of a grade file as each LMS's import reads it, from their documented rules and code.

* `moodle_import` (Moodle's ``grade/import/csv``, ``load_data.php``): the file's first column
  is mapped from a user field (username, email, idnumber); **one unknown user aborts the whole
  import**; the grade column goes to an existing item (its maximum) or to a new item (maximum
  100); a grade above the item's maximum aborts; a grade above the site's ``gradepointmax``
  (100 by default) aborts whatever the item; feedback maps only to an item that exists.
* `canvas_import` (Canvas's ``lib/gradebook_importer.rb``): the header starts ``Student``,
  ``ID``, then ``SIS Login ID`` or ``SIS User ID, SIS Login ID`` (maybe ``Integration ID``),
  and the last student column is ``Section``; a row whose first cell holds ``Points
  Possible`` gives a new assignment its points; each row is matched by ID, then SIS User ID,
  then SIS Login ID, then the name (or the sortable name). An unmatched row is a student
  Canvas does not know: refused here.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence


class RefusedError(Exception):
    """The import refuses the file; the message says what the LMS would say."""


def _rows(raw: bytes) -> list[list[str]]:
    return [r for r in csv.reader(io.StringIO(raw.decode("utf-8-sig"))) if len(r) > 1]


def moodle_import(
    raw: bytes,
    users: Mapping[str, set[str]],
    item_max: float | None,
    gradepointmax: float = 100,
) -> dict[str, float]:
    """``user -> grade`` that Moodle imports from ``raw``, its users' ``field -> values``
    ``users``, the grade item made first with ``item_max`` (``None``: not made; the import
    makes one of maximum 100). `RefusedError` where Moodle aborts."""
    rows = _rows(raw)
    if not rows:
        raise RefusedError("no data")
    header = rows[0]
    field = header[0]
    if field not in users:
        raise RefusedError(f"cannot map from {field!r}")
    maximum = 100.0 if item_max is None else item_max
    if any(h.endswith(" feedback") for h in header[1:]) and item_max is None:
        raise RefusedError("feedback maps only to an existing grade item")
    out: dict[str, float] = {}
    for row in rows[1:]:
        if row[0] not in users[field]:
            raise RefusedError(f"user mapping error: {field} {row[0]!r} not found")
        try:
            grade = float(row[1])
        except ValueError:
            raise RefusedError(f"bad grade {row[1]!r}") from None
        if grade > maximum:
            raise RefusedError(f"grade {grade} above the item's maximum {maximum}")
        if grade > gradepointmax:
            raise RefusedError(f"grade {grade} above the site's gradepointmax {gradepointmax}")
        out[row[0]] = grade
    return out


def canvas_import(raw: bytes, students: Sequence[Mapping[str, str]]) -> dict[str, float]:
    """``Canvas ID -> grade`` that Canvas imports from ``raw`` for the course's ``students``
    (each with ``ID``, ``SIS User ID``, ``SIS Login ID``, ``name``, ``sortable_name``), the
    assignment new (its points from the Points Possible row). `RefusedError` otherwise."""
    rows = _rows(raw)
    if not rows:
        raise RefusedError("Invalid header row")
    h = rows[0]
    if not (len(h) > 3 and "Student" in h[0] and "ID" in h[1]):
        raise RefusedError("Invalid header row")
    columns = 3
    if "SIS Login ID" in h[2]:
        columns += 1
    elif "SIS User ID" in h[2] and "SIS Login ID" in h[3]:
        columns += 2 + (1 if len(h) > 4 and "Integration ID" in h[4] else 0)
    if len(h) <= columns or "Section" not in h[columns - 1]:
        raise RefusedError("Invalid header row")
    points = next((r for r in rows[1:] if "Points Possible" in r[0]), None)
    try:
        float(points[columns]) if points else None
    except ValueError:
        raise RefusedError("Points Possible is not a number") from None
    if points is None:
        raise RefusedError("a new assignment without Points Possible")
    login = next((i for i in range(columns) if "SIS Login ID" in h[i]), None)
    sis = 2 if "SIS User ID" in h[2] else None
    out: dict[str, float] = {}
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            continue
        found = next((s for s in students if row[1] and s["ID"] == row[1]), None)
        found = found or next(
            (s for s in students if sis is not None and row[sis] and s["SIS User ID"] == row[sis]),
            None,
        )
        found = found or next(
            (s for s in students if login and row[login] and s["SIS Login ID"] == row[login]),
            None,
        )
        found = found or next(
            (s for s in students if row[0] in (s["name"], s["sortable_name"])), None
        )
        if found is None:
            raise RefusedError(f"a student Canvas does not know: {row[:4]}")
        out[found["ID"]] = float(row[columns])
    return out
