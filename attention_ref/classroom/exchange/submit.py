"""The student's verb ``submit`` (and ``status``): answers checked, then each stored whole.

`checked_answer` reads an answer as the grader does (which exercise, its check report:
`attention_ref.classroom.exchange.answers`), on the student's machine, before anything is
sent; `submit_answers` stores each checked answer as a run of the student's holding
``answer.json``, ended FINISHED, each write made at most once however often a busy server
must be asked, then reads the whole experiment back once: ``attnref homework submit`` sends
3 requests per answer and 2 more (the student's experiment, the read-back), all inside the
client's patience. `my_submissions` reads the student's submissions back with the teacher's
grade once given.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from attention_ref.classroom.connection.class_client import (
    ClassClient,
    HomeworkError,
    answer_path,
    tag_map,
)
from attention_ref.classroom.connection.client import checked
from attention_ref.classroom.connection.errors import ServerError
from attention_ref.classroom.coursework.assignment import (
    ANSWER_SHA_TAG,
    GRADE,
    RECEIVED_TAG,
    due_words,
    duration,
    from_iso,
    lateness,
)
from attention_ref.classroom.coursework.class_time import UTC_NAME, shown
from attention_ref.classroom.exchange.answers import check_answer
from attention_ref.classroom.exchange.fetch import Mine, mine
from attention_ref.classroom.exchange.student_words import said
from attention_ref.classroom.gate.refusals import CLOSED, REFUSAL

if TYPE_CHECKING:
    from attention_ref.exercises.grader import Report


class ClosedError(HomeworkError):
    """The assignment's policy refused the submission (its cut-off passed, the attempts
    used): final, the message the server's (`attention_ref.classroom.coursework.policy`)."""


@dataclass(frozen=True)
class Submitted:
    """What `submit_answers` stored and what the server said of it."""

    exercise: int
    run_id: str
    received: dt.datetime
    late: dt.timedelta | None
    attempt: int
    report: Report
    due: dt.datetime | None


@dataclass(frozen=True)
class Checked:
    """An answer checked on the student's machine: its bytes, which exercise, the report."""

    text: bytes
    exercise: int
    report: Report


def checked_answer(text: bytes, me: Mine, folder: str = "") -> Checked:
    """Check an answer's bytes against the student's exercises (nothing is sent): `Checked`,
    or the one line saying why the file is no answer of theirs (``folder``: where the
    student's files are, as they named them, `check_answer`)."""
    k, report = check_answer(text, me.assignment, me.exercises, folder)
    return Checked(text, k, report)


def submitted_line(sent: Submitted, path: str, name: str, lang: str, zone: str = UTC_NAME) -> str:
    """One line on a stored submission, in the assignment's language (`student_words`), its
    times in ``zone`` (`class_time.shown`)."""
    due = due_words(sent.due, lang, zone)
    if sent.late:
        timing = said("late_due", lang, late=duration(sent.late), due=due)
    else:  # with no due time, nothing is on time or late: the words say there is none
        timing = said("on_time_due", lang, due=due) if sent.due else due
    return said(
        "submitted",
        lang,
        path=path,
        k=sent.exercise,
        name=name,
        n=sent.attempt,
        run=sent.run_id,
        when=shown(sent.received, zone, seconds=True),
        timing=timing,
    )


#: the tag of a submission's run that holds the key its client drew (found again after a lost
#: reply, so that a retry never makes a second attempt of the same answer)
CLIENT_KEY_TAG: Final = "submission.key"


def _create_once(client: ClassClient, exp_id: str, k: int) -> str:
    """The submission's run, made once however often the request must be sent."""
    key = secrets.token_hex(16)
    body = {
        "experiment_id": exp_id,
        "run_name": f"exercise {k}",
        "tags": [{"key": CLIENT_KEY_TAG, "value": key}],
    }

    def made_already() -> dict[str, Any] | None:
        found = client.search_runs(exp_id, f"tags.`{CLIENT_KEY_TAG}` = '{key}'")
        return {"run": found[0]} if found else None

    status, made = client.send("/api/2.0/mlflow/runs/create", body, before_retry=made_already)
    client.refused(status, made)
    return str(checked(status, made, "cannot create the submission")["run"]["info"]["run_id"])


def _upload_once(client: ClassClient, exp_id: str, run_id: str, text: bytes) -> None:
    """``answer.json`` into the run; a retry after a lost reply finds it there (the same bytes)."""
    status, answer = client.send(answer_path(exp_id, run_id), data=text, method="PUT")
    already = status == 403 and "already" in str(answer.get("message", ""))
    if already and client.download_answer(exp_id, run_id) == text:
        return  # an earlier try of this call stored it
    client.refused(status, answer)
    checked(status, answer, "the answer did not reach the server")


def _finish_once(client: ClassClient, run_id: str, sha: str) -> None:
    """End the run FINISHED; a retry after a lost reply finds it finished with this answer."""

    def finished() -> dict[str, Any] | None:
        got = client.run(run_id)
        stamped = tag_map(got["data"]).get(ANSWER_SHA_TAG) == sha
        return got if got["info"]["status"] == "FINISHED" and stamped else None

    status, answer = client.send(
        "/api/2.0/mlflow/runs/update",
        {"run_id": run_id, "status": "FINISHED"},
        before_retry=finished,
    )
    if status == 403 and finished() is not None:
        return
    if status == 403 and answer.get("error_code") == CLOSED:  # the assignment's policy
        raise ClosedError(str(answer.get("message", "")).removeprefix(REFUSAL))
    client.refused(status, answer)
    checked(status, answer, "the submission could not be finished")


def _store(client: ClassClient, me: Mine, answer: Checked) -> str:
    """One checked answer stored whole (made, uploaded, finished) or not at all: a run that
    could not be finished is ended FAILED and does not count. Whatever fails, what the student
    is told is what the server holds (a finished submission is never reported as not
    submitted)."""
    sha = hashlib.sha256(answer.text).hexdigest()
    run_id = _create_once(client, me.experiment_id, answer.exercise)
    try:
        _upload_once(client, me.experiment_id, run_id, answer.text)
        _finish_once(client, run_id, sha)
    except (ServerError, HomeworkError) as e:
        name = me.assignment.name
        try:
            ended = _ended(client, run_id)
        except ServerError:
            raise HomeworkError(
                f"{e}; the class server did not say whether submission {run_id} was received: "
                f"see attnref homework status {name}"
            ) from None
        if not ended:
            again = "" if isinstance(e, ClosedError) else " (submit again)"
            raise HomeworkError(f"{e}; nothing was submitted{again}") from None
    return run_id


def submit_answers(client: ClassClient, me: Mine, answers: Sequence[Checked]) -> list[Submitted]:
    """Store each checked answer (three writes each), then read the student's experiment back
    once: what the server received of each (its hash, its time) and which attempt it is. What
    ``attnref homework submit`` calls after its checks, and what the recorded class calls."""
    stored = [(a, _store(client, me, a)) for a in answers]
    runs = {r["info"]["run_id"]: r for r in client.search_runs(me.experiment_id)}
    out = []
    for a, run_id in stored:
        run = runs.get(run_id)
        tags = tag_map(run.get("data", {})) if run else {}
        if tags.get(ANSWER_SHA_TAG) != hashlib.sha256(a.text).hexdigest():
            raise HomeworkError(f"submission {run_id} does not hold the answer sent; submit again")
        received = from_iso(tags[RECEIVED_TAG])
        attempts = sum(
            r["info"].get("status") == "FINISHED"
            and r["info"].get("run_name") == f"exercise {a.exercise}"
            and int(r["info"].get("start_time") or 0) <= int(run["info"].get("start_time") or 0)  # type: ignore[index]
            for r in runs.values()
        )
        due = me.assignment.due
        out.append(
            Submitted(
                a.exercise, run_id, received, lateness(received, due), attempts, a.report, due
            )
        )
    return out


def submit(client: ClassClient, name: str, text: bytes) -> Submitted:
    """One answer's bytes, from the start: the student's exercises read, the answer checked
    (a bad file sends nothing), then stored (`submit_answers`)."""
    me = mine(client, name)
    return submit_answers(client, me, [checked_answer(text, me)])[0]


@dataclass(frozen=True)
class MySubmission:
    """One of a student's submissions as they can read it: the server's record, and the
    teacher's grade once given (the ``attnref.grade.*`` tags on it)."""

    run_id: str
    name: str
    status: str
    received: dt.datetime | None
    late: dt.timedelta | None
    grade: dict[str, str]

    def cells(
        self, lang: str = "en", shown_grade: bool = True, zone: str = UTC_NAME
    ) -> tuple[str, ...]:
        """submission, exercise, received (in ``zone``), late, status, grade, first wrong,
        diagnosis, counts, in ``lang`` (`student_words`): the diagnosis in the catalogue's
        words, not its ids; the grade "not released yet" where the feedback policy holds it
        back (not ``shown_grade``)."""
        from attention_ref.exercises.catalogue import mistake_words

        g = self.grade
        received = shown(self.received, zone, seconds=True) if self.received else ""
        penalty = g.get(GRADE + "penalty", "0")
        if self.late:  # the lateness, and what it costs once graded
            late = duration(self.late) + (f" (-{penalty}%)" if penalty not in ("", "0") else "")
        else:
            late = said("on_time", lang) if received else ""
        steps = g.get(GRADE + "steps")
        if steps and penalty not in ("", "0"):  # the points the penalty left
            steps = said("grade_after", lang, steps=steps, points=g.get(GRADE + "points", ""))
        diagnosis = " | ".join(
            " + ".join(mistake_words(name, lang) for name in both.split(" + "))
            for both in g.get(GRADE + "diagnosis", "").split(" | ")
            if both
        )
        counts = g.get(GRADE + "counts", "")
        return (
            self.run_id,
            g.get(GRADE + "exercise") or self.name,
            received,
            late,
            self.status,
            steps or said("not_graded" if shown_grade else "not_released", lang),
            g.get(GRADE + "first_wrong", ""),
            diagnosis,
            said(counts, lang) if counts in ("yes", "no") else counts,
        )


def my_submissions(
    client: ClassClient, name: str, lang: str = "en"
) -> tuple[Mine, list[MySubmission]]:
    """A student's submissions of assignment ``name``, oldest first (``lang``: the student's,
    for an assignment the server does not hold)."""
    me = mine(client, name, lang)
    out = []
    for run in client.search_runs(me.experiment_id):
        info, tags = run["info"], tag_map(run.get("data", {}))
        if RECEIVED_TAG not in tags:  # never received: refused (attempts, cut-off) or broken
            continue
        received = from_iso(tags[RECEIVED_TAG])
        late = lateness(received, me.assignment.due)
        grade = {k: v for k, v in tags.items() if k.startswith(GRADE)}
        out.append(
            MySubmission(
                info["run_id"],
                info.get("run_name", ""),
                str(info.get("status", "")),
                received,
                late,
                grade,
            )
        )
    return me, out


def _ended(client: ClassClient, run_id: str) -> bool:
    """After a failure: whether the submission did get finished (the answer's reply was
    lost); else it is ended FAILED, best effort, so that it never counts. A server that does
    not answer this read either: `ServerError` (nothing is said that it might contradict)."""
    if client.run(run_id)["info"]["status"] == "FINISHED":
        return True
    with contextlib.suppress(ServerError):
        client.send("/api/2.0/mlflow/runs/update", {"run_id": run_id, "status": "FAILED"})
    return False
