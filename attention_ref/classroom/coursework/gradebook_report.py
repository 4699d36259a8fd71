"""What a teacher reads of a gradebook, from its rows: the class's summary (per mistake of the
catalogue, the students whose counted answer it reproduces; the first wrong steps; how many
answers were right, late, missing), the table's cells and the CSV. Pure: rows in, data or
text out (the grade imports of a learning-management system are
`attention_ref.classroom.coursework.lms`'s).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from attention_ref.classroom.coursework.assignment import iso
from attention_ref.classroom.coursework.gradebook import Row, Standing, whole


@dataclass(frozen=True)
class Summary:
    """What the class got wrong: per mistake of the catalogue, the students whose counted
    answer it reproduces (alone, with another, or as one of several that reproduce it); the
    first wrong steps; how many answers were all right, late, missing, malformed."""

    students: int
    answers: int  # rows with a graded submission
    #: (catalogue entry, students, of them: ambiguous, the diagnoses seen under it)
    mistakes: tuple[tuple[str, int, int, tuple[str, ...]], ...]
    first_wrong: tuple[tuple[str, int], ...]  # (step label, answers), most frequent first
    all_right: int
    few_decimals: int  # no step wrong, some short of the decimals asked
    no_diagnosis: int  # wrong, and no mistake of the catalogue reproduces it
    late: int
    missing: int
    malformed: int
    changed: int

    def to_json(self) -> dict[str, object]:
        """The summary as JSON (the book reads the recorded class's)."""
        return {
            "students": self.students,
            "answers": self.answers,
            "mistakes": [
                {"mistake": n, "students": s, "ambiguous": a, "as": list(seen)}
                for n, s, a, seen in self.mistakes
            ],
            "first_wrong": [{"step": s, "answers": n} for s, n in self.first_wrong],
            "all_right": self.all_right,
            "few_decimals": self.few_decimals,
            "no_diagnosis": self.no_diagnosis,
            "late": self.late,
            "missing": self.missing,
            "malformed": self.malformed,
            "changed": self.changed,
        }


def kind_of(name: str, kinds: Sequence[str]) -> str:
    """The catalogue entry a diagnosis belongs to: its own name, else the longest entry it
    extends (``scale_d_model_d_k`` is a ``scale``, ``transposed_W_Q`` a ``transposed_W``)."""
    if name in kinds:
        return name
    parents = [k for k in kinds if name.startswith(k + "_")]
    return max(parents, key=len) if parents else name


def summarize(book: Sequence[Row], catalogue: Sequence[str] = ()) -> Summary:
    """The summary of a gradebook; ``catalogue``: the catalogue's entries, listed in that
    order even when no student made them (a diagnosis is counted under its entry, `kind_of`)."""
    graded = [r for r in book if r.standing is Standing.GRADED]
    students: dict[str, set[str]] = {name: set() for name in catalogue}
    ambiguous: dict[str, set[str]] = {name: set() for name in catalogue}
    seen: dict[str, set[str]] = {name: set() for name in catalogue}
    for r in graded:
        for names in r.diagnoses:
            for name in names:
                kind = kind_of(name, catalogue)
                students.setdefault(kind, set()).add(r.student)
                seen.setdefault(kind, set()).add(name)
                if len(r.diagnoses) > 1:
                    ambiguous.setdefault(kind, set()).add(r.student)
    mistakes = tuple(
        (k, len(s), len(ambiguous.get(k, ())), tuple(sorted(seen.get(k, ()))))
        for k, s in students.items()
    )
    firsts = Counter(r.first_wrong for r in graded if r.first_wrong)
    return Summary(
        students=len({r.student for r in book}),
        answers=len(graded),
        mistakes=mistakes,
        first_wrong=tuple(sorted(firsts.items(), key=lambda kv: (-kv[1], kv[0]))),
        all_right=sum(r.complete for r in graded),
        few_decimals=sum(r.steps_right < r.steps_given and not r.first_wrong for r in graded),
        no_diagnosis=sum(bool(r.first_wrong) and not r.diagnoses for r in graded),
        late=sum(r.late is not None for r in book),
        missing=sum(r.standing is Standing.MISSING for r in book),
        malformed=sum(r.standing is Standing.MALFORMED for r in book),
        changed=sum(r.standing is Standing.CHANGED for r in book),
    )


# --- writing it out ----------------------------------------------------------------------------

#: the columns of the gradebook table and CSV
COLUMNS: Final = (
    "student",
    "exercise",
    "steps right",
    "points",
    "first wrong step",
    "diagnosis",
    "attempts",
    "late",
    "status",
    "received (UTC)",
    "submission",
)


def cells(r: Row) -> tuple[str, ...]:
    """One row's cells, in `COLUMNS`' order; "points" is the grade, steps right less the late
    penalty (`Row.points`)."""
    graded = r.standing is Standing.GRADED
    steps = f"{r.steps_right}/{r.asked}" if graded else "-"
    status = str(r.standing) + (f": {r.reason}" if r.reason else "")
    received = f"{r.received:%Y-%m-%d %H:%M:%S}" if r.received else ""
    return (
        r.student,
        str(r.exercise),
        steps,
        str(whole(r.points)) if graded else "-",
        r.first_wrong,
        r.diagnosis,
        str(r.attempts),
        r.late_text or ("no" if r.received else ""),
        status,
        received,
        r.submission,
    )


def to_csv(book: Sequence[Row]) -> str:
    """The gradebook as CSV (the columns of `COLUMNS`, steps right and given apart)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(
        [
            "student",
            "exercise",
            "steps_right",
            "steps_given",
            "first_wrong",
            "diagnosis",
            "attempts",
            "late",
            "late_seconds",
            "status",
            "reason",
            "received_utc",
            "submission",
            "counted",
            "penalty_percent",
            "points",
        ]
    )
    for r in book:
        w.writerow(
            [
                r.student,
                r.exercise,
                r.steps_right,
                r.steps_given,
                r.first_wrong,
                r.diagnosis,
                r.attempts,
                "yes" if r.late else "no",
                int(r.late.total_seconds()) if r.late else 0,
                str(r.standing),
                r.reason,
                iso(r.received) if r.received else "",
                r.submission,
                str(r.chosen),
                r.penalty,
                r.points,
            ]
        )
    return out.getvalue()


__all__ = ["COLUMNS", "Summary", "cells", "kind_of", "summarize", "to_csv"]
