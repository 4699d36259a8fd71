"""What the simulated class did: its record, and the checker's verdicts apart from the server.

`ClassRecord` holds the plan, the gradebook, the counts and timings, and says every difference
between the gradebook and `expected_verdicts` (what the checker says of each student's counted
answer, computed without the server); `absent_on_the_class` says why a mistake of the
catalogue was made by no student of a recorded class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from attention_ref.classroom.coursework.assignment import Assignment
from attention_ref.classroom.coursework.gradebook import Row, Standing
from attnref_book.simulated.class_plan import Behaviour


@dataclass
class ClassRecord:
    """What happened: the plan, the gradebook, the counts, the expected verdicts."""

    assignment: Assignment
    behaviours: list[Behaviour]
    rows: list[Row]
    expected: dict[str, dict[str, object]]
    counts: dict[str, int]
    timings: dict[str, float]
    errors: list[str] = field(default_factory=list)

    def mismatches(self) -> list[str]:
        """Every difference between the gradebook and the checker's own verdicts."""
        out = []
        by_student = {r.student: r for r in self.rows}
        for b in self.behaviours:
            row, want = by_student.get(b.student), self.expected[b.student]
            if row is None:
                out.append(f"{b.student}: no gradebook row")
                continue
            got = {
                "standing": str(row.standing),
                "steps_right": row.steps_right,
                "steps_given": row.steps_given,
                "first_wrong": row.first_wrong,
                "diagnoses": [list(d) for d in row.diagnoses],
                "attempts": row.attempts,
                "late": row.late is not None,
            }
            for key, value in want.items():
                if got.get(key) != value:
                    out.append(
                        f"{b.student} ({b.label}): {key} {got.get(key)!r}, expected {value!r}"
                    )
            named = {n for d in row.diagnoses for n in d}
            if b.mistakes and not set(b.mistakes) <= named:
                out.append(
                    f"{b.student} ({b.label}): diagnosed {sorted(named)}, made {list(b.mistakes)}"
                )
        return out

    def to_json(self) -> dict[str, object]:
        """The record for the book (``docs/results/class-homework.json``)."""
        from attention_ref.classroom.coursework.gradebook_report import summarize
        from attention_ref.exercises.catalogue import CATALOGUE

        labels = {b.student: b.label for b in self.behaviours}
        return {
            "assignment": {
                "name": self.assignment.name,
                "salt": self.assignment.salt,
                **self.assignment.shape(),
            },
            "students": len(self.behaviours),
            "counts": self.counts,
            "timings": self.timings,
            "mismatches": self.mismatches(),
            "errors": self.errors,
            "gradebook": [
                {
                    "student": r.student,
                    "behaviour": labels.get(r.student, ""),
                    "steps_right": r.steps_right,
                    "steps_given": r.steps_given,
                    "first_wrong": r.first_wrong,
                    "diagnosis": r.diagnosis,
                    "attempts": r.attempts,
                    "late": r.late_text,
                    "status": str(r.standing),
                }
                for r in self.rows
            ],
            "summary": summarize(self.rows, [k.name for k in CATALOGUE]).to_json(),
        }


def absent_on_the_class(record: dict[str, Any], names: Sequence[str], lang: str = "en") -> str:
    """Why the catalogue's entries ``names`` were made by no student of a recorded class
    (`ClassRecord.to_json`), computed on the class's own exercises: each is either on none of
    them (with the shape's reason, where the shape gives one) or on some, and no one made it."""
    from attention_ref.classroom.coursework.gradebook_report import kind_of
    from attention_ref.exercises.answer import Problem
    from attention_ref.exercises.catalogue import CATALOGUE, mistakes_for

    info = dict(record["assignment"])
    a = Assignment(name=str(info.pop("name")), **info)  # type: ignore[arg-type]
    kinds = [k.name for k in CATALOGUE]
    students = [row["student"] for row in record["gradebook"]]
    found: dict[str, int] = dict.fromkeys(names, 0)
    for student in students:
        prob = Problem.of_exercise(a.exercises_of(student)[0])
        present = {kind_of(m.name, kinds) for m in mistakes_for(prob.data())}
        for name in names:
            found[name] += name in present
    d_k = a.d_model // a.heads
    reasons = {
        "transposed_W": {
            "en": f"W_Q, W_K and W_V are {a.d_model} × {d_k}, not square",
            "pt": f"W_Q, W_K e W_V são {a.d_model} × {d_k}, não quadradas",
        }
        if a.d_model != d_k
        else None,
        "gave_dW_Ot": {"en": "the assignment asks no gradient", "pt": "a tarefa não pede gradiente"}
        if not a.backward
        else None,
    }
    out = []
    for name in names:
        why = reasons.get(name)
        if found[name] == 0:
            because = f" ({why[lang]})" if why else ""
            out.append(
                {
                    "en": f"{name} can happen on none of the {len(students)} exercises{because}",
                    "pt": f"{name} não pode acontecer em nenhum dos {len(students)} "
                    f"exercícios{because}",
                }[lang]
            )
        else:
            out.append(
                {
                    "en": f"{name} could happen on {found[name]} of the exercises; no "
                    "student made it",
                    "pt": f"{name} poderia acontecer em {found[name]} dos exercícios; "
                    "nenhum aluno o cometeu",
                }[lang]
            )
    return "; ".join(out) + "." if out else ""


def expected_verdicts(assignment: Assignment, behaviours: Sequence[Behaviour]) -> dict:
    """What the checker says of each student's counted answer, computed here, apart from the
    server (the gradebook must say the same)."""
    from attention_ref.classroom.exchange.answers import check_answer
    from attention_ref.inputs.attention_input import InputError

    out: dict[str, dict[str, object]] = {}
    for b in behaviours:
        counted = b.counted
        n = len(b.stored)
        if counted is None:
            out[b.student] = {"standing": str(Standing.MISSING), "attempts": 0}
            continue
        try:
            _, report = check_answer(counted.text, assignment, assignment.exercises_of(b.student))
        except (InputError, ValueError):
            out[b.student] = {
                "standing": str(Standing.MALFORMED),
                "steps_right": 0,
                "attempts": n,
                "late": counted.late,
            }
            continue
        first = report.first_wrong
        out[b.student] = {
            "standing": str(Standing.GRADED),
            "steps_right": report.steps_right,
            "steps_given": report.steps_given,
            "first_wrong": first.label if first else "",
            "diagnoses": [list(d) for d in report.diagnosis_names],
            "attempts": n,
            "late": counted.late,
        }
    return out
