"""The options of an assignment's policy (``server assign``) and of the grades' roster
(``server grades``): `attention_ref.classroom.coursework.policy` and
`attention_ref.classroom.coursework.lms`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attention_ref.cli.errors import CLIError

LatePenalty = Annotated[
    int | None,
    typer.Option(
        "--late-penalty",
        help="Late work loses this percent of its points per day or part of a day after "
        "--due (default 0: accepted as it is).",
        show_default=False,
    ),
]
Cutoff = Annotated[
    str | None,
    typer.Option(
        "--cutoff",
        help="No submission is received after this time (ISO 8601, as --due; not before "
        "it): the server refuses it, by its clock.",
        show_default=False,
    ),
]
Attempts = Annotated[
    int | None,
    typer.Option(
        "--attempts",
        help="At most this many submissions per exercise (default: unlimited); the server "
        "refuses the next one.",
        show_default=False,
    ),
]
FeedbackOption = Annotated[
    str | None,
    typer.Option(
        "--feedback",
        help="What submit and status tell a student: full (the default: each step, the "
        "right values, the diagnosis), steps (each step right or wrong, the first wrong "
        "one) or none (received; the rest once you run server grade --release).",
        show_default=False,
    ),
]
Roster = Annotated[
    Path | None,
    typer.Option(
        "--roster",
        help="With moodle or canvas: the students' identifiers from this file instead of "
        "the ones add-students --roster kept on the server: the LMS's participants export "
        "(Moodle's download, Canvas's gradebook export) or a CSV with a column account and "
        "any of username, email, idnumber (moodle), Student, ID, SIS User ID, SIS Login "
        "ID, Section (canvas).",
        show_default=False,
    ),
]


def given(
    late_penalty: int | None,
    cutoff: str | None,
    attempts: int | None,
    feedback: str | None,
    zone: str | None = None,
) -> dict[str, object]:
    """The policy's rules the teacher gave (``None``: not given), each checked in its own
    range before any request (`attention_ref.classroom.coursework.policy.PolicyError`, one line);
    a cut-off typed without a zone is in ``zone`` (the class's), else this machine's."""
    from attention_ref.classroom.coursework.assignment import parse_due
    from attention_ref.classroom.coursework.policy import Feedback, Policy

    if feedback is not None and feedback not in set(Feedback):
        raise CLIError(f"--feedback is one of full, steps, none, got {feedback!r}")
    rules: dict[str, object] = {
        "late_penalty": late_penalty,
        "cutoff": parse_due(cutoff, "--cutoff", zone) if cutoff else None,
        "attempts": attempts,
        "feedback": feedback,
    }
    Policy().changed(**rules)
    return rules
