"""The student's verb ``fetch``: their side of an assignment and its files.

`mine` reads the student's own experiment (their variant of every exercise);
`write_exercises` writes each exercise's statement (Markdown and LaTeX), its numbers and the
answer template the student fills in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attention_ref.classroom.connection.class_client import ClassClient, HomeworkError, tag_map
from attention_ref.classroom.coursework.assignment import (
    ROLE_TAG,
    STUDENT_TAG,
    SUBMISSIONS,
    Assignment,
    AssignmentError,
    check_name,
    matching_exercise,
    student_experiment,
)
from attention_ref.classroom.coursework.class_time import ZoneError, reader_zone
from attention_ref.classroom.exchange.student_words import said

if TYPE_CHECKING:
    from attention_ref.exercises.exercise import ExerciseOptions


@dataclass(frozen=True)
class Mine:
    """A student's side of an assignment: their experiment and their exercises."""

    assignment: Assignment
    student: str
    experiment_id: str
    exercises: tuple[ExerciseOptions, ...]


def mine(client: ClassClient, name: str, lang: str = "en") -> Mine:
    """The assignment ``name`` as the client's student has it (one request); where the server
    holds no homework of that name for the student, `HomeworkError` in ``lang`` (the
    student's: the assignment's is not known yet)."""
    student = client.account
    check_name(name)
    experiment = student_experiment(name, student)
    found = client.experiment(experiment)
    if found is None:
        raise HomeworkError(
            said("no_assignment", lang, name=name, student=student, url=client.url), lang
        )
    tags = tag_map(found)
    if tags.get(ROLE_TAG) != SUBMISSIONS or tags.get(STUDENT_TAG) != student:
        raise HomeworkError(
            said("not_homework", lang, experiment=experiment, student=student), lang
        )
    assignment = Assignment.from_tags(tags)
    try:  # the times in the student's own zone where they set one, else the class's
        assignment = replace(assignment, timezone=reader_zone(assignment.timezone))
    except ZoneError as e:
        raise HomeworkError(str(e), lang) from None
    try:  # the student's own seeds (their copy carries no salt to draw them from)
        exercises = assignment.student_exercises(tags)
    except AssignmentError:
        exercises = None
    if exercises is None or (assignment.salt and exercises != assignment.exercises_of(student)):
        raise HomeworkError(said("not_yours", lang, name=name, student=student), lang)
    return Mine(assignment, student, str(found["experiment_id"]), tuple(exercises))


def write_exercises(me: Mine, out: Path) -> list[tuple[Path, str]]:
    """``statement-K.md``, ``statement-K.tex`` and ``answer-K.json`` of each of the student's
    exercises into ``out``; an answer file that is already there is kept (it may hold the
    student's work). Returns ``(path, what)`` per file: ``"written"`` or ``"kept"``, in the
    assignment's language (`student_words`)."""
    from attention_ref.exercises.exercise import make_exercise
    from attention_ref.render import render, to_json

    out.mkdir(parents=True, exist_ok=True)
    done = []
    for k, opt in enumerate(me.exercises, start=1):
        ex = make_exercise(opt)
        statement = _homework_statement(ex.statement, me, k)
        files = {
            f"statement-{k}.md": render(statement, "markdown", opt.decimals),
            f"statement-{k}.tex": render(statement, "latex", opt.decimals, standalone=True),
            # the problem's numbers, for a student who computes with a program of their own
            f"exercise-{k}.json": to_json(ex.problem),
            f"answer-{k}.json": to_json(ex.answer),  # type: ignore[arg-type]
        }
        for file, text in files.items():
            path = out / file
            assert isinstance(text, str)
            if file.startswith("answer-") and path.exists():
                done.append((path, _kept(path, me, k)))
                continue
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
            tmp.replace(path)
            done.append((path, said("written", me.assignment.lang)))
    return done


def _kept(path: Path, me: Mine, k: int) -> str:
    """What an answer file already there is: the student's answer to exercise ``k``, or not
    (in the assignment's language)."""
    from attention_ref.exercises.answer import read_answer_text

    lang = me.assignment.lang
    try:
        doc = read_answer_text(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return said("kept_not_answer", lang)
    if matching_exercise(doc, list(me.exercises)) == k:
        return said("kept", lang)
    return said("kept_other", lang, k=k)


#: the homework's words on a statement, per language: title, text, and the sentence said only
#: where the statement prints its source
_HOMEWORK_WORDS = {
    "en": (
        "Homework {name}, exercise {k} of {n}",
        "For {student}, {due}. Fill in answer-{k}.json, then submit it: attnref homework "
        "submit {name} answer-{k}.json. {policy}",
        " The seed below is your own exercise's.",
    ),
    "pt": (
        "Lição de casa {name}, exercício {k} de {n}",
        "Para {student}, {due}. Preencha answer-{k}.json e envie: attnref homework submit "
        "{name} answer-{k}.json. {policy}",
        " A semente abaixo é a do seu exercício.",
    ),
}


def _homework_statement(statement: Any, me: Mine, k: int) -> Any:
    from attention_ref.render import Section

    a = me.assignment
    title, text, seed_below = _HOMEWORK_WORDS[a.lang]
    text += seed_below if a.source else ""  # the source line below names the seed
    due = a.describe_due(a.lang)
    head = Section(
        title=title.format(name=a.name, k=k, n=a.exercises),
        text=text.format(
            name=a.name,
            k=k,
            student=me.student,
            due=due,
            policy=a.policy.words(a.lang, a.due is not None, a.timezone),
        ),
    )
    *body, how = statement.sections
    closing = how.text
    for old, new in _CLOSING[a.lang]:  # the exercise's own words of how to answer: the homework's
        closing = closing.replace(old, new.format(name=a.name, k=k))
    source = statement.source if a.source else _NO_SOURCE[a.lang].format(name=a.name, k=k)
    # "Exercise 8374…: masked multi-head attention by hand" titled by the homework, not by its
    # 19-digit seed (the source line and answer-K.json still carry the seed)
    what = statement.title.partition(": ")[2]
    title = head.title + (f": {what}" if what else "")
    return replace(
        statement,
        title=title,
        source=source,
        sections=[head, *body, replace(how, text=closing)],
    )


#: the source line of a statement under ``server assign --no-source``, per language
_NO_SOURCE = {
    "en": "homework {name}, exercise {k} (the command that draws it is the teacher's)",
    "pt": "lição de casa {name}, exercício {k} (o comando que o sorteia fica com o professor)",
}


#: the closing paragraph of an exercise (`attnref exercise`) made the homework's, per language
_CLOSING = {
    "en": (
        (
            "`answer.json` (attnref exercise --out writes it",
            "answer-{k}.json (attnref homework fetch wrote it",
        ),
        (
            "Then run `attnref check answer.json`.",
            "Then submit it: attnref homework submit "
            "{name} answer-{k}.json (attnref check answer-{k}.json checks it without "
            "submitting). The problem's numbers are in exercise-{k}.json.",
        ),
    ),
    "pt": (
        (
            "`answer.json` (attnref exercise --out o escreve",
            "answer-{k}.json (attnref homework fetch o escreveu",
        ),
        (
            "Depois rode `attnref check answer.json`.",
            "Depois envie: attnref homework submit "
            "{name} answer-{k}.json (attnref check answer-{k}.json confere sem enviar). Os "
            "números do problema estão em exercise-{k}.json.",
        ),
        ("`attnref check answer.json`.", "attnref homework submit {name} answer-{k}.json."),
    ),
}
