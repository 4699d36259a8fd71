"""A class of students doing homework on a real class server, all at once: the recorded class.

`plan` gives each of ``n`` students (30 by default) a behaviour: a right answer; each mistake
of the catalogue that exists on their own exercise (`attention_ref.exercises.catalogue`), one
student each; two mistakes together; the rounding of earlier steps carried on (right) and
answers rounded to fewer decimals than asked; a partial answer; late answers; resubmissions
(wrong then right, right then wrong, on time then late); a malformed file refused on the
student's machine (nothing sent) and one pushed past the command over REST (stored, and
graded "malformed"). `run_class` makes the accounts and the assignment, has every student
submit **concurrently** (one thread each, the same library calls as ``attnref homework
submit``), moves the due time to now, has the late ones submit, grades as the teacher, and
counts: submissions, answers on disk, grades. `expected` is what the checker says of each
student's counted answer, computed apart from the server: the gradebook must equal it.

The answers are written as a student writes them (`attention_ref.exercises.answer.answer_text`:
every number to the decimals asked). Nothing here is a mock: the server, its gate, the
PostgreSQL store and the artifact files are the real ones.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from attention_ref.classroom.connection.class_client import ClassClient
from attention_ref.classroom.coursework.assignment import (
    ANSWER_FILE,
    ANSWER_SHA_TAG,
    Assignment,
    parse_due,
)
from attnref_book.simulated.class_plan import NAMES, Attempt, Behaviour, plan
from attnref_book.simulated.class_record import ClassRecord, expected_verdicts


def _push_past_the_command(client: ClassClient, name: str, text: bytes) -> None:
    """A submission made over REST without the command's checks (the gate still applies)."""
    from attention_ref.classroom.connection.class_client import answer_path
    from attention_ref.classroom.exchange.fetch import mine

    me = mine(client, name)
    made = client.call(
        "/api/2.0/mlflow/runs/create", {"experiment_id": me.experiment_id}, what="create"
    )
    run_id = made["run"]["info"]["run_id"]
    # a raw client that asks a busy server again, as MLflow's own clients do
    client.call(answer_path(me.experiment_id, run_id), data=text, method="PUT", what="upload")
    client.call(
        "/api/2.0/mlflow/runs/update", {"run_id": run_id, "status": "FINISHED"}, what="finish"
    )


def _send(client: ClassClient, name: str, a: Attempt, prepared: Any = None) -> str:
    """One attempt; returns what happened (``"stored"``, ``"refused"``). ``prepared``: the
    student's exercises and the check their command made before sending (`prepare`), sent by
    the function ``attnref homework submit`` calls (`submit_answers`), with the client's
    patience: the shipped one."""
    from attention_ref.classroom.exchange.submit import submit_answers

    if a.via == "rest":
        _push_past_the_command(client, name, a.text)
        return "stored"
    if prepared is None:  # the command refuses the file on the student's machine
        if a.refused:
            return "refused"
        raise AssertionError("an attempt the command sends was not prepared")
    if a.refused:
        raise AssertionError("the client checked a file it should have refused")
    me, checked = prepared
    submit_answers(client, me, [checked])
    return "stored"


def prepare(
    url: str, name: str, behaviours: Sequence[Behaviour], passwords: dict[str, str]
) -> dict[tuple[str, int], tuple[Any, Any]]:
    """``(student, attempt index) -> (their exercises, the checked answer)`` of every attempt
    the command would check before sending it; an attempt the command refuses is checked here
    too, and must be refused (`InputError`), nothing sent."""
    from attention_ref.classroom.exchange.fetch import mine
    from attention_ref.classroom.exchange.submit import checked_answer
    from attention_ref.inputs.attention_input import InputError

    out: dict[tuple[str, int], tuple[Any, Any]] = {}
    for b in behaviours:
        me = None
        for i, a in enumerate(b.attempts):
            if a.via == "rest":
                continue
            me = me or mine(ClassClient(url, (b.student, passwords[b.student])), name)
            try:
                out[(b.student, i)] = (me, checked_answer(a.text, me))
            except (InputError, ValueError):
                if not a.refused:
                    raise
    return out


def run_class(
    url: str,
    admin: tuple[str, str],
    name: str = "attention-1",
    *,
    students: Sequence[str] = NAMES,
    salt: str | None = None,
    artifacts: Path | None = None,
    add: Callable[[str, str], None] | None = None,
) -> ClassRecord:
    """The whole class on the server at ``url`` (see the module docstring). ``add(name,
    password)`` makes a student's account (default:
    `attention_ref.classroom.connection.accounts.add_student` into the server's class experiment);
    ``artifacts``: the server's artifact folder, to count the answers on disk."""
    from attention_ref.classroom.connection.accounts import add_student, generated_password
    from attention_ref.classroom.exchange.assign import assign
    from attention_ref.classroom.exchange.grade import grade, student_experiments
    from attention_ref.classroom.hosting.server import DEFAULT_EXPERIMENT

    # drawn as `attnref server add-student` draws them (128 random bits: their cheap hash)
    passwords = {s: generated_password() for s in students}

    def make(s: str) -> None:
        if add is None:
            add_student(url, admin, s, passwords[s], DEFAULT_EXPERIMENT)
        else:
            add(s, passwords[s])

    with ThreadPoolExecutor(max_workers=8) as pool:  # the teacher's script, a few at a time
        list(pool.map(make, passwords))
    far = parse_due((dt.datetime.now(dt.UTC) + dt.timedelta(days=7)).isoformat())
    asked = Assignment(name=name, salt=salt or secrets.token_hex(8), due=far)
    teacher = ClassClient(url, admin)
    assignment = assign(teacher, asked).assignment
    behaviours = plan(assignment, students)
    errors: list[str] = []
    timings: dict[str, float] = {}
    durations: list[float] = []  # of each `homework submit` (the command's library call)
    said_failed: list[tuple[str, str]] = []  # (student, sha256) the client said failed

    # what each student's command does on their own machine before it sends anything (reads
    # their exercise, checks the answer): done here beforehand, so that the one machine that
    # plays the whole class spends the burst on the server's work, not on a thousand checks
    checked = prepare(url, name, behaviours, passwords)

    def attempts_of(b: Behaviour, late: bool) -> list[str]:
        done = []
        for i, a in enumerate(b.attempts):
            if a.late == late:
                t = time.monotonic()
                try:
                    done.append(
                        _send(
                            ClassClient(url, (b.student, passwords[b.student])),
                            name,
                            a,
                            checked.get((b.student, i)),
                        )
                    )
                except Exception as e:  # a failure is recorded, never hidden
                    errors.append(f"{b.student}: {type(e).__name__}: {e}")
                    said_failed.append((b.student, hashlib.sha256(a.text).hexdigest()))
                if a.via != "rest" and not a.refused:
                    durations.append(time.monotonic() - t)
        return done

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(behaviours)) as pool:
        on_time = list(pool.map(lambda b: attempts_of(b, False), behaviours))
    timings["on_time_s"] = round(time.monotonic() - t0, 2)
    # the due time is kept to the second: the next one, so that every answer sent so far
    # was received before it
    now = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(seconds=1)
    assignment = assign(
        teacher, Assignment(name=name, due=now, salt=assignment.salt), due_given=True
    ).assignment
    assert assignment.due is not None
    wait = (assignment.due - dt.datetime.now(dt.UTC)).total_seconds() + 1.5
    time.sleep(max(wait, 0))
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(behaviours)) as pool:
        late = list(pool.map(lambda b: attempts_of(b, True), behaviours))
    timings["late_s"] = round(time.monotonic() - t0, 2)
    t0 = time.monotonic()
    graded = grade(teacher, name)
    timings["grade_s"] = round(time.monotonic() - t0, 2)
    done = [x for run in on_time + late for x in run]
    finished = answers_on_disk = same_bytes = 0
    sent = {hashlib.sha256(a.text).hexdigest() for b in behaviours for a in b.stored}
    held: set[tuple[str, str]] = set()  # (student, sha256) of every finished submission
    for student, exp_id in student_experiments(teacher, name).items():
        for run in teacher.search_runs(exp_id):
            if run["info"]["status"] != "FINISHED":
                continue
            finished += 1
            tags = {t["key"]: t["value"] for t in run.get("data", {}).get("tags", [])}
            held.add((student, tags.get(ANSWER_SHA_TAG, "")))
            if artifacts is not None:
                path = artifacts / exp_id / run["info"]["run_id"] / "artifacts" / ANSWER_FILE
                if path.is_file():
                    answers_on_disk += 1
                    same_bytes += hashlib.sha256(path.read_bytes()).hexdigest() in sent
    counts = {
        "students": len(behaviours),
        "attempts_planned": sum(len(b.attempts) for b in behaviours),
        "stored_planned": sum(len(b.stored) for b in behaviours),
        "refused_by_the_client": done.count("refused"),
        "stored": done.count("stored"),
        "finished_runs_on_the_server": finished,
        "answers_on_disk": answers_on_disk,
        "answers_equal_to_what_was_sent": same_bytes,
        "graded_submissions": len(graded.graded),
        "gradebook_rows": len(graded.rows),
        "late_rows": sum(r.late is not None for r in graded.rows),
        "client_errors": len(said_failed),
        # the client said it failed, the server holds it finished: what a student must never read
        "told_failed_but_finished": sum(f in held for f in said_failed),
    }
    if durations:
        ordered = sorted(durations)
        timings["submit_p50_s"] = round(ordered[len(ordered) // 2], 2)
        timings["submit_p95_s"] = round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2)
        timings["submit_max_s"] = round(ordered[-1], 2)
    expected = expected_verdicts(assignment, behaviours)
    return ClassRecord(assignment, behaviours, list(graded.rows), expected, counts, timings, errors)
