"""An answer's bytes checked against a student's exercises: one function, the student's and the
teacher's.

The student's ``submit`` checks an answer on their machine before sending it; the teacher's
``grade`` checks the stored bytes again, on their side, against the student's own variant
(never the problem the file names). Both call `check_answer`: the same reading (`identify`:
which of the student's exercises the file answers) and the same checker.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from attention_ref.classroom.connection.class_client import HomeworkError
from attention_ref.classroom.coursework.assignment import Assignment, matching_exercise

if TYPE_CHECKING:
    from attention_ref.exercises.exercise import ExerciseOptions
    from attention_ref.exercises.grader import Report


def identify(doc: object, assignment: Assignment, exercises: Sequence[ExerciseOptions]) -> int:
    """Which of the student's ``exercises`` an answer document answers (1-based), else
    `HomeworkError` naming theirs; an ``"exercise"`` that is none (its seed not an integer, an
    option unknown): `InputError`, as ``attnref check`` says it."""
    k = matching_exercise(doc, list(exercises))
    if k is not None:
        return k
    theirs = ", ".join(f"{i}: seed {o.seed}" for i, o in enumerate(exercises, start=1))
    named = doc.get("exercise") if isinstance(doc, dict) else None
    if not isinstance(named, dict):
        what = (
            "holds an exercise's numbers, not an answer"
            if isinstance(doc, dict) and {"X", "heads"} <= set(doc)
            else "names no exercise"
        )
        raise HomeworkError(
            f"the file {what}: fill in the answer-K.json that attnref homework fetch "
            f"{assignment.name} wrote (it names your exercise K), and submit that"
        )
    from attention_ref.exercises.options import options_from_json

    options_from_json(named)  # `InputError` where it is no exercise: a seed not an integer
    raise HomeworkError(
        f"the answer names exercise seed {named['seed']}, which is not one of your "
        f"exercises of {assignment.name!r} ({theirs}): fill in the answer-K.json that "
        "attnref homework fetch wrote"
    )


#: what is said of an answer file with no step filled in yet, per language; ``{file}`` is the
#: file as the student named it (``mine/answer-1.json`` from the folder above)
NO_STEP_YET = {
    "en": "no step given yet: fill in the steps you computed (each null in {file}), then "
    "attnref homework submit {name} {file}",
    "pt": "nenhum passo dado ainda: preencha os passos que você calculou (cada null de {file}) "
    "e envie: attnref homework submit {name} {file}",
}


def check_answer(
    text: bytes,
    assignment: Assignment,
    exercises: Sequence[ExerciseOptions],
    folder: str = "",
) -> tuple[int, Report]:
    """Read an answer's bytes as the grader does: which of the student's exercises, and its
    check report. A file that is not an answer to one of them: `InputError` / `HomeworkError`
    (one line); ``folder`` (``"mine/"``) is where the student's answer-K.json are, as they
    named them, for the command a message suggests."""
    from attention_ref.exercises.answer import NO_STEP, Problem, read_answer_text
    from attention_ref.exercises.grader import check_document
    from attention_ref.inputs.attention_input import InputError

    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(
            "the answer is not UTF-8 text (write it as attnref homework fetch wrote it: JSON)"
        ) from None
    doc = read_answer_text(decoded)
    k = identify(doc, assignment, exercises)
    prob = Problem.of_exercise(exercises[k - 1])
    try:
        return k, check_document(doc, prob)
    except InputError as e:
        if str(e) == NO_STEP[prob.lang]:  # the words of `attnref check`: say the homework's
            said = NO_STEP_YET[prob.lang].format(
                file=f"{folder}answer-{k}.json", name=assignment.name
            )
            raise InputError(said, prob.lang) from None
        raise
