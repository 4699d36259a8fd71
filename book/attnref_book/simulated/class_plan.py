"""Who does what in the simulated class: each student's behaviour and the attempts it sends.

`plan` gives each of ``n`` students (30 by default, `NAMES`) a `Behaviour`: a right answer,
each mistake of the catalogue that exists on their own exercise, two mistakes together,
rounding carried or to fewer decimals, a partial answer, late answers, resubmissions, a
malformed file the client refuses and one pushed past the command over REST
(`attnref_book.simulated.simulate` runs it on a real class server).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from attention_ref.classroom.coursework.assignment import Assignment
from attention_ref.classroom.coursework.student_answers import (
    carried_answer,
    mistaken_answer,
    partial_answer,
    right_answer,
    slip_answer,
)

if TYPE_CHECKING:
    from attention_ref.exercises.answer import Problem
    from attention_ref.exercises.exercise import ExerciseOptions

#: 30 students' names (accounts on the server)
NAMES: Final = (
    "ana",
    "bruno",
    "carla",
    "davi",
    "elisa",
    "fabio",
    "gabi",
    "heitor",
    "iris",
    "joao",
    "karin",
    "lucas",
    "maria",
    "nuno",
    "olga",
    "pedro",
    "quenia",
    "rafa",
    "sofia",
    "tiago",
    "ursula",
    "vitor",
    "wanda",
    "xavier",
    "yara",
    "zeca",
    "beto",
    "cida",
    "duda",
    "enzo",
)


def class_of(n: int) -> tuple[str, ...]:
    """``n`` students' names: the recorded class's 30, then ``s031``, ``s032``, …"""
    return (NAMES + tuple(f"s{i:03d}" for i in range(len(NAMES) + 1, n + 1)))[:n]


#: two mistakes made together by one student (they change different stages)
PAIR: Final = ("no_scale", "no_W_O")


@dataclass(frozen=True)
class Attempt:
    """One thing a student sends: an answer's bytes, on time or after the due time; ``via``
    says how (``"client"``: the library call ``attnref homework submit`` makes, which checks the
    file first; ``"rest"``: past the command, straight to the server's REST API)."""

    text: bytes
    late: bool = False
    via: str = "client"
    refused: bool = False  # the client must refuse it (nothing reaches the server)


@dataclass(frozen=True)
class Behaviour:
    """What one simulated student does, and why (``label``: the plan's words)."""

    student: str
    label: str
    attempts: tuple[Attempt, ...]
    mistakes: tuple[str, ...] = ()  # the diagnoses the counted answer must carry

    @property
    def stored(self) -> list[Attempt]:
        return [a for a in self.attempts if not a.refused]

    @property
    def counted(self) -> Attempt | None:
        """The latest stored attempt (the gradebook's default)."""
        return self.stored[-1] if self.stored else None


def _exercise_numbers(opt: ExerciseOptions) -> bytes:
    """The exercise's own numbers (the problem, not an answer): the client refuses them."""
    from attention_ref.exercises.exercise import draw_problem

    return json.dumps(draw_problem(opt)).encode()


def plan(assignment: Assignment, students: Sequence[str]) -> list[Behaviour]:
    """Who does what (see the module docstring). Each mistake of the catalogue goes to the
    first student left whose own exercise has it; 30 students are enough for all."""
    from attention_ref.exercises.answer import Problem
    from attention_ref.exercises.catalogue import mistakes_for

    p = assignment.decimals
    problems = {s: Problem.of_exercise(assignment.exercises_of(s)[0]) for s in students}
    left = list(students)
    out: list[Behaviour] = []

    def take(
        label: str,
        make: Callable[[Problem], tuple[Attempt, ...] | None],
        mistakes: tuple[str, ...] = (),
    ) -> None:
        for s in left:
            attempts = make(problems[s])
            if attempts and attempts[0].refused:  # the student's own exercise's numbers
                attempts = (
                    Attempt(_exercise_numbers(assignment.exercises_of(s)[0]), refused=True),
                    *attempts[1:],
                )
            if attempts is not None:
                left.remove(s)
                out.append(Behaviour(s, label, attempts, mistakes))
                return

    def one(text: bytes | None, late: bool = False) -> tuple[Attempt, ...] | None:
        return None if text is None else (Attempt(text, late),)

    take("right", lambda pr: one(right_answer(pr, p)))
    take(
        "right, after a malformed file the client refused",
        lambda pr: (Attempt(b"", refused=True), Attempt(right_answer(pr, p))),
    )
    take("rounding carried from earlier steps", lambda pr: one(carried_answer(pr, p)))
    take(f"rounded to {p - 1} decimals", lambda pr: one(right_answer(pr, p - 1)))
    take("a partial answer (Q, K, V, scores, S)", lambda pr: one(partial_answer(pr, p)))
    # no mask and K Qᵀ are made alone below, by a late student and a resubmission
    made_below = {"no_mask", "K_Qt"}
    kinds = sorted(
        {m.name for pr in problems.values() for m in mistakes_for(pr.data()) if m.rank == 0}
        - made_below
    )
    for name in kinds:
        take(f"mistake: {name}", lambda pr, n=name: one(mistaken_answer(pr, p, [n])), (name,))
    take("an arithmetic slip in the output", lambda pr: one(slip_answer(pr, p)), ("slip",))
    take(f"two mistakes: {' + '.join(PAIR)}", lambda pr: one(mistaken_answer(pr, p, PAIR)), PAIR)
    take("late, right", lambda pr: one(right_answer(pr, p), late=True))
    take(
        "late, no mask",
        lambda pr: one(mistaken_answer(pr, p, ["no_mask"]), late=True),
        ("no_mask",),
    )
    take(
        "resubmitted: no scale, then right",
        lambda pr: (
            Attempt(mistaken_answer(pr, p, ["no_scale"]) or b""),
            Attempt(right_answer(pr, p)),
        ),
    )
    take(
        "resubmitted: right, then K Qᵀ (the latest counts)",
        lambda pr: (Attempt(right_answer(pr, p)), Attempt(mistaken_answer(pr, p, ["K_Qt"]) or b"")),
        ("K_Qt",),
    )
    take(
        "resubmitted: softmax over columns on time, then right but late",
        lambda pr: (
            Attempt(mistaken_answer(pr, p, ["softmax_columns"]) or b""),
            Attempt(right_answer(pr, p), late=True),
        ),
    )
    take(
        "malformed, pushed past the command over REST",
        lambda pr: (Attempt(b'{"exercise": "not an object", "heads": 7}', via="rest"),),
    )
    while left:  # any student left over: a right answer
        take("right", lambda pr: one(right_answer(pr, p)))
    return out
