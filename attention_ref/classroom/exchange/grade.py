"""The teacher's verbs ``grade`` and ``grades``: every stored answer graded, the gradebook.

`grade` downloads every finished submission, compares its hash with the one the server
recorded, checks it again against the student's own variant (`grade_submission`), and writes
the gradebook (one teacher's run per student and exercise) and each submission's grade (tags
the student can read); `gradebook` reads the gradebook back from those runs.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from attention_ref.classroom.connection.class_client import ClassClient, HomeworkError, tag_map
from attention_ref.classroom.coursework.assignment import (
    ANSWER_FILE,
    ANSWER_SHA_TAG,
    ASSIGNMENT_TAG,
    GRADE,
    RECEIVED_TAG,
    ROLE_TAG,
    STUDENT_TAG,
    SUBMISSIONS,
    Assignment,
    from_iso,
    from_ms,
    gradebook_experiment,
    lateness,
)
from attention_ref.classroom.coursework.gradebook import Graded, Row, Standing, rows, whole
from attention_ref.classroom.coursework.policy import POLICY_TAG, Policy
from attention_ref.classroom.exchange.answers import check_answer
from attention_ref.experiments.names import Tag


def student_experiments(client: ClassClient, name: str) -> dict[str, str]:
    """``student -> experiment id`` of every student of assignment ``name``."""
    found = client.search_experiments(
        f"tags.`{ASSIGNMENT_TAG}` = '{name}' and tags.`{ROLE_TAG}` = '{SUBMISSIONS}'",
        f"cannot list the students of {name!r}",
    )
    out = {tag_map(e)[STUDENT_TAG]: str(e["experiment_id"]) for e in found}
    return dict(sorted(out.items()))


def _gradebook(client: ClassClient, name: str) -> tuple[Assignment, str]:
    found = client.experiment(gradebook_experiment(name))
    if found is None:
        raise HomeworkError(
            f"no assignment {name!r} whose gradebook {client.account!r} may read on "
            f"{client.url}: a teacher makes it with attnref server assign {name}; a student sees "
            f"their own grades with attnref homework status {name}"
        )
    return Assignment.from_tags(tag_map(found)), str(found["experiment_id"])


def grade_submission(
    student: str, run: dict[str, Any], answer: bytes | None, assignment: Assignment
) -> Graded:
    """One stored submission graded on the teacher's side against the student's variant."""
    from attention_ref.inputs.attention_input import InputError

    info, tags = run["info"], tag_map(run.get("data", {}))
    received = (
        from_iso(tags[RECEIVED_TAG])
        if RECEIVED_TAG in tags
        else from_ms(int(info.get("end_time") or 0))
    )
    base = {
        "student": student,
        "run_id": info["run_id"],
        "received": received,
        "started": int(info.get("start_time") or 0),
        "late": lateness(received, assignment.due),
    }
    # the exercise the submission says it answers (its run's name, given when it was made):
    # where an answer cannot be read, its attempt is counted there
    claimed = next(
        (k for k in range(1, assignment.exercises + 1) if info.get("run_name") == f"exercise {k}"),
        None,
    )
    if RECEIVED_TAG not in tags or ANSWER_SHA_TAG not in tags:  # the client's end time is no proof
        return Graded(
            exercise=claimed,
            standing=Standing.MALFORMED,
            reason="finished without the server's stamp (time received, hash)",
            **base,
        )
    if answer is None:
        return Graded(
            exercise=claimed, standing=Standing.MALFORMED, reason=f"no {ANSWER_FILE} stored", **base
        )
    if hashlib.sha256(answer).hexdigest() != tags.get(ANSWER_SHA_TAG):
        return Graded(
            exercise=claimed,
            standing=Standing.CHANGED,
            reason=f"its {ANSWER_FILE} is not the one the server received",
            **base,
        )
    try:
        k, report = check_answer(answer, assignment, assignment.exercises_of(student))
    except (InputError, HomeworkError) as e:
        return Graded(exercise=claimed, standing=Standing.MALFORMED, reason=str(e)[:300], **base)
    first = report.first_wrong
    return Graded(
        exercise=k,
        standing=Standing.GRADED,
        steps_right=report.steps_right,
        steps_given=report.steps_given,
        steps_asked=steps_per_exercise(assignment),
        first_wrong=first.label if first else "",
        diagnoses=tuple(report.diagnosis_names),
        **base,
    )


#: `steps_per_exercise` by the assignment's shape (it costs a right answer and its check)
_PER_EXERCISE: dict[str, int] = {}


def steps_per_exercise(assignment: Assignment) -> int:
    """The steps a whole answer to one of the assignment's exercises has (all have the same
    shape): what one exercise's steps right are out of."""
    key = json.dumps(assignment.shape(), sort_keys=True)
    if key not in _PER_EXERCISE:
        _PER_EXERCISE[key] = steps_asked(assignment) // assignment.exercises
    return _PER_EXERCISE[key]


def steps_asked(assignment: Assignment) -> int:
    """The steps a whole answer to all of the assignment's exercises has (every student's
    exercises have the same shape): what a grade of steps right is out of."""
    from attention_ref.classroom.coursework.student_answers import right_answer
    from attention_ref.exercises.answer import Problem
    from attention_ref.exercises.grader import check_document

    total = 0
    for opt in assignment.exercises_of("student"):
        prob = Problem.of_exercise(opt)
        doc = json.loads(right_answer(prob, assignment.decimals))
        total += check_document(doc, prob).steps_given
    return total


@dataclass(frozen=True)
class Grading:
    """What `grade` did: the gradebook's rows, every submission graded, the runs written."""

    assignment: Assignment
    rows: tuple[Row, ...]
    graded: tuple[Graded, ...]
    gradebook_id: str
    written: int


def grade(
    client: ClassClient,
    name: str,
    *,
    best: bool = False,
    use: Iterable[str] = (),
    release: bool = False,
) -> Grading:
    """Grade every finished submission of assignment ``name`` from its stored answer and
    write the gradebook (one run per student and exercise, made or updated, under the
    assignment's policy) and each submission's grade (tags on it, for the student, as much
    as the feedback policy shows: under ``none``, nothing until ``release``)."""
    assignment, book_id = _gradebook(client, name)
    students = student_experiments(client, name)
    if release and not assignment.policy.released:
        assignment = _release(client, assignment, book_id, students)
    use = list(use)
    graded: list[Graded] = []
    tagged: dict[str, list[str]] = {}  # a submission's grade tags, as an earlier grading left
    for student, exp_id in students.items():
        for run in client.search_runs(exp_id):
            if run["info"].get("status") != "FINISHED":
                continue  # not stored whole: never counts
            answer = client.download_answer(exp_id, run["info"]["run_id"])
            graded.append(grade_submission(student, run, answer, assignment))
            keys = [k for k in tag_map(run.get("data", {})) if k.startswith(GRADE)]
            if keys:
                tagged[run["info"]["run_id"]] = keys
    known = {g.run_id for g in graded}
    if unknown := [r for r in use if r not in known]:
        raise HomeworkError(
            f"--use {unknown[0]}: no finished submission of {name!r} has that run id"
        )
    policy = assignment.policy
    book = rows(graded, list(students), assignment.exercises, best=best, use=use, policy=policy)
    written = _write_gradebook(client, book_id, book)
    counted = {r.submission for r in book}
    if policy.shows_steps:
        for g in graded:
            _tag_submission(client, g, g.run_id in counted, policy)
    else:  # held back: a grade written under an earlier policy comes off the submission
        for run_id, keys in tagged.items():
            for key in keys:
                client.call(
                    "/api/2.0/mlflow/runs/delete-tag",
                    {"run_id": run_id, "key": key},
                    what=f"cannot hold back the grade of run {run_id}",
                )
    return Grading(assignment, tuple(book), tuple(graded), book_id, written)


def _release(
    client: ClassClient, assignment: Assignment, book_id: str, students: dict[str, str]
) -> Assignment:
    """The grades released: the policy's ``released`` set on the gradebook and on every
    student's experiment (what ``homework status`` reads)."""
    released = replace(assignment, policy=replace(assignment.policy, released=True))
    value = released.policy.to_json()
    for exp_id in [book_id, *students.values()]:
        client.call(
            "/api/2.0/mlflow/experiments/set-experiment-tag",
            {"experiment_id": exp_id, "key": POLICY_TAG, "value": value},
            what=f"cannot release the grades of {assignment.name!r}",
        )
    return released


def _log(client: ClassClient, run_id: str, tags: dict[str, str], metrics: dict[str, float]) -> None:
    now = int(time.time() * 1000)
    body = {
        "run_id": run_id,
        "tags": [{"key": k, "value": v} for k, v in tags.items()],
        "metrics": [
            {"key": k, "value": v, "timestamp": now, "step": 0} for k, v in metrics.items()
        ],
    }
    client.call("/api/2.0/mlflow/runs/log-batch", body, what=f"cannot write run {run_id}")


def _write_gradebook(client: ClassClient, book_id: str, book: Sequence[Row]) -> int:
    """One teacher's run per row in the gradebook experiment, made or updated: the grade's
    metrics and tags, its name (`Row.run_name`) and its description in sentences
    (`Row.note`)."""
    from attention_ref.exercises.catalogue import mistake_words

    existing = {}
    for run in client.search_runs(book_id):
        tags = tag_map(run.get("data", {}))
        if GRADE + "student" in tags and run["info"].get("lifecycle_stage") == "active":
            key = (tags[GRADE + "student"], tags.get(GRADE + "exercise"))
            existing[key] = run["info"]["run_id"]
    for r in book:
        run_id = existing.get((r.student, str(r.exercise)))
        if run_id is None:
            made = client.call(
                "/api/2.0/mlflow/runs/create",
                {"experiment_id": book_id, "run_name": r.run_name},
                what="cannot write the gradebook",
            )
            run_id = made["run"]["info"]["run_id"]
        _log(client, run_id, r.tags() | {str(Tag.NOTE): r.note(mistake_words)}, r.metrics())
        client.call(
            "/api/2.0/mlflow/runs/update",
            {"run_id": run_id, "status": "FINISHED", "run_name": r.run_name},
            what="cannot write the gradebook",
        )
    return len(book)


def _tag_submission(client: ClassClient, g: Graded, counts: bool, policy: Policy) -> None:
    """The teacher's grade of one submission, on it (the student reads their own): the
    diagnosis only where the feedback policy shows it."""
    diagnosis = " | ".join(" + ".join(n) for n in g.diagnoses) if policy.shows_values else ""
    graded = g.standing is Standing.GRADED
    penalty = policy.penalty(g.late) if graded else 0
    tags = {
        GRADE + "status": str(g.standing),
        GRADE + "exercise": str(g.exercise or ""),
        GRADE + "steps": f"{g.steps_right}/{g.steps_asked or g.steps_given}",
        GRADE + "first_wrong": g.first_wrong,
        GRADE + "diagnosis": diagnosis,
        GRADE + "late": "yes" if g.late else "no",
        # what the late penalty left of the steps right (the student reads it beside them)
        GRADE + "penalty": str(penalty),
        GRADE + "points": str(whole(round(g.steps_right * (100 - penalty) / 100, 2)))
        if graded
        else "0",
        GRADE + "counts": "yes" if counts else "no",
        GRADE + "reason": g.reason[:500],
    }
    _log(client, g.run_id, tags, {})


def gradebook(client: ClassClient, name: str) -> tuple[Assignment, list[Row]]:
    """The assignment and its gradebook as the teacher's runs hold it (what `grade` last
    wrote), by student and exercise."""
    assignment, book_id = _gradebook(client, name)
    out = []
    for run in client.search_runs(book_id):
        data = run.get("data", {})
        tags = tag_map(data)
        if GRADE + "student" not in tags or run["info"].get("lifecycle_stage") != "active":
            continue
        metrics = {m["key"]: float(m["value"]) for m in data.get("metrics", [])}
        out.append(Row.from_run(tags, metrics))
    return assignment, sorted(out, key=lambda r: (r.student, r.exercise))
