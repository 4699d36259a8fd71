"""Grades where teachers keep them: the gradebook as a learning-management system imports it.

Pure: rows in, CSV text out. One grade per student: the steps right of the submission that
counts, summed over the assignment's exercises (a missing, malformed or changed submission
gives 0), out of ``points_possible`` (the steps a whole answer has, times the exercises). The
feedback says per exercise what the gradebook says.

* **Moodle** (Grades → Import → CSV file): the first column identifies the student by
  ``username`` (map it to "username" on Moodle's import page), then one column with the grade
  (map it to the grade item, or let Moodle make a new one of that name), then its feedback
  (map it to that item's feedback). Comma-separated, UTF-8, one header row.
* **Canvas** (Grades → Import): Canvas's own export layout: ``Student, ID, SIS User ID, SIS Login
  ID, Section`` and one column per assignment; the second row is ``Points Possible``. The
  student's account name is their SIS Login ID (Canvas matches a row by ID, SIS User ID or
  SIS Login ID); ID and SIS User ID are left empty for Canvas to fill.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Final

from attention_ref.classroom.gradebook import Row, Standing

#: the systems whose grade import `to_lms_csv` writes for
SYSTEMS: Final = ("moodle", "canvas")


def grade_of(rows: Sequence[Row]) -> int:
    """A student's grade: steps right of their counted submissions (0 for one not graded)."""
    return sum(r.steps_right for r in rows if r.standing is Standing.GRADED)


def feedback_of(rows: Sequence[Row]) -> str:
    """One line per student: each exercise's steps, diagnosis, lateness, or why it got none."""
    parts = []
    for r in sorted(rows, key=lambda r: r.exercise):
        if r.standing is Standing.GRADED:
            said = f"exercise {r.exercise}: {r.steps_right}/{r.steps_given} steps right"
            said += f" ({r.diagnosis})" if r.diagnosis else ""
        else:
            said = f"exercise {r.exercise}: {r.standing}"
        parts.append(said + (f", {r.late_text}" if r.late else ""))
    return "; ".join(parts)


def to_lms_csv(book: Sequence[Row], assignment: str, system: str, points_possible: int) -> str:
    """The gradebook ``book`` of ``assignment`` as ``system`` (`SYSTEMS`) imports it."""
    if system not in SYSTEMS:
        raise ValueError(f"grades for {system!r}: choose one of {', '.join(SYSTEMS)}")
    students: dict[str, list[Row]] = {}
    for r in book:
        students.setdefault(r.student, []).append(r)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    if system == "moodle":
        w.writerow(["username", assignment, f"{assignment} feedback"])
        for student, mine in students.items():
            w.writerow([student, grade_of(mine), feedback_of(mine)])
    else:
        w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", assignment])
        w.writerow(["Points Possible", "", "", "", "", points_possible])
        for student, mine in students.items():
            w.writerow([student, "", "", student, "", grade_of(mine)])
    return out.getvalue()
