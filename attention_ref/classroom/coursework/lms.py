"""Grades where teachers keep them: the gradebook as a learning-management system imports it.

Pure: rows in, CSV text out. One grade per student: the points of the submissions that count
(steps right less the late penalty, `Row.points`), summed over the assignment's exercises (a
missing, malformed or changed submission gives 0), out of ``points_possible`` (the steps a
whole answer has, times the exercises). The feedback says per exercise what the gradebook says.
What each system's import reads, from its source:

* **Moodle** (``grade/import/csv``, Grades → Import → CSV file): a header row, then one row per
  student; the student is identified by one column mapped to ``username``, ``email``,
  ``idnumber`` or ``userid``, and **one unknown user aborts the whole import**. A column mapped
  to "new grade item" makes an item of maximum 100, a grade above an item's maximum aborts the
  import too, and feedback maps only to an existing item: the item is made first, with the
  maximum ``points_possible`` (`import_steps`). The reader strips a UTF-8 byte-order mark.
* **Canvas** (``lib/gradebook_importer.rb``, Grades → Import): its own export's layout,
  ``Student, ID, SIS User ID, SIS Login ID, Section`` and one column per assignment, the second
  row ``Points Possible`` (a column that names no assignment makes one with those points). A
  row is matched by ID, then SIS User ID, then SIS Login ID, then the name; an unmatched row
  becomes a student Canvas does not know. Without a roster the account name is the SIS Login
  ID and the name.

A **roster** (`read_roster`) maps the class server's account names to the system's own
identifiers: a CSV with a column ``account`` and the system's columns (`ROSTER_FIELDS`).
Every student of the gradebook needs a row: a missing one is refused before anything is
written, as Moodle would refuse the whole file. The files are written with a UTF-8 byte-order
mark (`BOM`), which spreadsheets need to read ``joão`` as UTF-8 and both imports accept.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from typing import Final

from attention_ref.classroom.coursework.assignment import duration
from attention_ref.classroom.coursework.gradebook import Row, Standing, whole

#: the systems whose grade import `to_lms_csv` writes for
SYSTEMS: Final = ("moodle", "canvas")
#: what a spreadsheet needs to open a CSV as UTF-8 (Moodle strips it, Canvas's header check
#: reads through it)
BOM: Final = "\ufeff"
#: a roster's own identifying columns, per system: Moodle's one "map from" field (exactly one),
#: Canvas's student columns (any of them)
ROSTER_FIELDS: Final = {
    "moodle": ("username", "email", "idnumber"),
    "canvas": ("Student", "ID", "SIS User ID", "SIS Login ID", "Section"),
}
_CANVAS_IDS: Final = ("ID", "SIS User ID", "SIS Login ID")
MAX_ROSTER_BYTES: Final = 1 << 20


class RosterError(ValueError):
    """A roster that cannot be used; the message says why, in one line."""


def read_roster(text: str, system: str) -> dict[str, dict[str, str]]:
    """``account -> {field: value}`` from a roster's CSV text for ``system``: a column
    ``account`` and the system's columns only (`ROSTER_FIELDS`; Moodle's: exactly one),
    every account once, every identifier given (Canvas: one of ID, SIS User ID, SIS Login ID
    at least). Refused in one line otherwise (`RosterError`)."""
    allowed = ROSTER_FIELDS[system]
    if len(text.encode()) > MAX_ROSTER_BYTES:
        raise RosterError(f"the roster is over {MAX_ROSTER_BYTES} bytes")
    try:
        lines = list(csv.reader(io.StringIO(text.removeprefix(BOM))))
    except csv.Error as e:
        raise RosterError(f"the roster is not CSV ({e})") from None
    if not lines or "account" not in lines[0]:
        raise RosterError("the roster's first line names its columns, one of them 'account'")
    header = [h.strip() for h in lines[0]]
    fields = [h for h in header if h != "account"]
    if unknown := [h for h in fields if h not in allowed]:
        raise RosterError(
            f"the roster's column {unknown[0]!r} is not {system}'s: use account and "
            + ", ".join(allowed)
        )
    if len(set(header)) != len(header) or not fields:
        raise RosterError(f"the roster names account and {system}'s columns, each once")
    if system == "moodle" and len(fields) != 1:
        raise RosterError("a Moodle roster has one identifier: username, email or idnumber")
    out: dict[str, dict[str, str]] = {}
    for n, line in enumerate(lines[1:], start=2):
        if not any(cell.strip() for cell in line):
            continue
        if len(line) != len(header):
            raise RosterError(f"roster line {n} has {len(line)} cells, not {len(header)}")
        row = dict(zip(header, (c.strip() for c in line), strict=True))
        account = row.pop("account")
        if not account or account in out:
            raise RosterError(f"roster line {n}: an account named once, got {account!r}")
        ids = [row[f] for f in fields if system == "moodle" or f in _CANVAS_IDS]
        if not any(ids) or (system == "moodle" and not all(ids)):
            raise RosterError(f"roster line {n}: no identifier for {account!r}")
        out[account] = row
    return out


def moodle_field(roster: dict[str, dict[str, str]] | None) -> str:
    """The Moodle field a roster identifies students by (its one column), else ``username``."""
    return next(iter(next(iter(roster.values())))) if roster else "username"


def grade_of(rows: Sequence[Row]) -> int | float:
    """A student's grade: the points of their counted submissions (steps right less the late
    penalty, `Row.points`; 0 for one not graded), a whole number where it is one."""
    return whole(round(sum(r.points for r in rows), 2))


#: the feedback's words per language: what the student reads in the LMS, in the assignment's
FEEDBACK_WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "graded": "exercise {k}: {right}/{asked} steps right",
        "other": "exercise {k}: {standing}",
        "late": "late by {late}",
        "penalty": " (-{p}%)",
        "or": " or ",
        "and": " and ",
        Standing.MALFORMED: "not an answer to the exercise",
        Standing.CHANGED: "changed after it was finished",
        Standing.MISSING: "no submission",
    },
    "pt": {
        "graded": "exercício {k}: {right}/{asked} passos certos",
        "other": "exercício {k}: {standing}",
        "late": "atrasada {late}",
        "penalty": " (-{p}%)",
        "or": " ou ",
        "and": " e ",
        Standing.MALFORMED: "não é resposta ao exercício",
        Standing.CHANGED: "alterada depois de finalizada",
        Standing.MISSING: "sem envio",
    },
}


def feedback_of(
    rows: Sequence[Row],
    diagnosis: bool = True,
    lang: str = "en",
    words: Callable[[str], str] = str,
) -> str:
    """One line per student, in ``lang``: each exercise's steps, the diagnosis named by
    ``words`` (the catalogue's words for a mistake; not shown where the feedback policy holds
    it back, ``diagnosis``), lateness and penalty, or why it got none."""
    w = FEEDBACK_WORDS[lang]
    parts = []
    for r in sorted(rows, key=lambda r: r.exercise):
        if r.standing is Standing.GRADED:
            said = w["graded"].format(k=r.exercise, right=r.steps_right, asked=r.asked)
            named = w["or"].join(w["and"].join(words(n) for n in d) for d in r.diagnoses)
            said += f" ({named})" if named and diagnosis else ""
        else:
            said = w["other"].format(k=r.exercise, standing=w[r.standing])
        if r.late:
            late = w["late"].format(late=duration(r.late))
            said += ", " + late + (w["penalty"].format(p=r.penalty) if r.penalty else "")
        parts.append(said)
    return "; ".join(parts)


def to_lms_csv(
    book: Sequence[Row],
    assignment: str,
    system: str,
    points_possible: int,
    diagnosis: bool = True,
    roster: dict[str, dict[str, str]] | None = None,
    lang: str = "en",
    words: Callable[[str], str] = str,
) -> str:
    """The gradebook ``book`` of ``assignment`` as ``system`` (`SYSTEMS`) imports it (no
    byte-order mark: the caller writes `BOM` first); the feedback names the diagnosis unless
    ``diagnosis`` is false (the feedback policy); the students identified through ``roster``
    (`read_roster`), where one is given."""
    if system not in SYSTEMS:
        raise ValueError(f"grades for {system!r}: choose one of {', '.join(SYSTEMS)}")
    students: dict[str, list[Row]] = {}
    for r in book:
        students.setdefault(r.student, []).append(r)
    if roster is not None and (missing := [s for s in students if s not in roster]):
        raise RosterError(
            f"the roster has no line for {', '.join(missing[:5])}"
            + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            + " (an unknown user makes Moodle refuse the whole file)"
        )
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    if system == "moodle":
        field = moodle_field(roster)
        w.writerow([field, assignment, f"{assignment} feedback"])
        for student, mine in students.items():
            who = roster[student][field] if roster else student
            w.writerow([who, grade_of(mine), feedback_of(mine, diagnosis, lang, words)])
    else:
        columns = ROSTER_FIELDS["canvas"]
        w.writerow([*columns, assignment])
        w.writerow(["Points Possible", "", "", "", "", points_possible])
        for student, mine in students.items():
            given = roster[student] if roster else {}
            cells = {"Student": student, "SIS Login ID": student} if not roster else {}
            cells |= {k: v for k, v in given.items() if v}
            cells.setdefault("Student", student)
            w.writerow([*(cells.get(c, "") for c in columns), grade_of(mine)])
    return out.getvalue()


def import_steps(system: str, assignment: str, points_possible: int, field: str = "") -> list[str]:
    """What the teacher does in ``system`` with the file, step by step (what to make first)."""
    if system == "moodle":
        return [
            f"1. Moodle, the course's Gradebook setup: add a grade item {assignment!r}, maximum "
            f"grade {points_possible} (one made by the import has maximum 100 and takes no "
            "feedback).",
            "2. Grades, Import, CSV file: upload the file, encoding UTF-8, separator comma.",
            f"3. Map from {field or 'username'} to {field or 'username'}, {assignment!r} to "
            f"the item, {assignment + ' feedback'!r} to the item's feedback; upload grades.",
        ]
    return [
        "1. Canvas, the course's Grades: Import, choose the file (an assignment named "
        f"{assignment!r} is made with {points_possible} points where none has that name).",
        "2. Check the students Canvas matched (ID, then SIS User ID, SIS Login ID, name) and "
        "the changes it lists; upload.",
    ]
