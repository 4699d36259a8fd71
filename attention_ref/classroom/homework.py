"""Homework on the class server, over its REST API: assign, fetch, submit, grade, gradebook.

The teacher (an admin account) **assigns**: the gradebook experiment ``homework/NAME`` and, for
every student, ``homework/NAME/STUDENT`` with their seeds, granted to them alone
(`attention_ref.classroom.assignment`). A student **fetches** their exercises from their own
experiment's tags and **submits** an answer: a run of their own in their experiment holding
``answer.json``, ended FINISHED; the class's gate (`attention_ref.classroom.auth`) records the
answer's SHA-256 and the time it was received, on the server's clock, and from then on the
submission is final. The student sees the check report at once (computed on their machine,
from the same checker). The teacher **grades**: every finished submission is downloaded,
its hash compared with the one the server recorded, and checked again on the teacher's side
against the student's own variant (never the problem the file names); the grade of each
student's exercise is a run of the teacher's in the gradebook, and each submission gets its
grade in tags the student can read. The gradebook (`attention_ref.classroom.gradebook`) is read
back from those runs.

Every failure is a `HomeworkError` (or the server's `ServerError`) of one line; a bad answer
file is the checker's `InputError`. Nothing here changes what a student may do: that is the
gate's, tested over HTTP.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from attention_ref.classroom.assignment import (
    ANSWER_FILE,
    ANSWER_SHA_TAG,
    ASSIGNMENT_TAG,
    DUE_TAG,
    GRADE,
    GRADEBOOK,
    RECEIVED_TAG,
    ROLE_TAG,
    SEEDS_TAG,
    STUDENT_TAG,
    SUBMISSIONS,
    Assignment,
    AssignmentError,
    check_name,
    duration,
    from_iso,
    from_ms,
    gradebook_experiment,
    iso,
    lateness,
    matching_exercise,
    student_experiment,
)
from attention_ref.classroom.gradebook import Graded, Row, Standing, rows
from attention_ref.classroom.patience import PATIENCE, Patience, patiently
from attention_ref.classroom.server import (
    ADMIN_USERNAME,
    ServerError,
    _checked,
    grant_experiment,
    request_bytes,
    rest,
)
from attention_ref.experiments.names import EXPERIMENT_KIND, Tag, ui_experiment_url

if TYPE_CHECKING:
    from attention_ref.worked.check import Report
    from attention_ref.worked.exercise import ExerciseOptions

Auth = tuple[str, str]


class HomeworkError(AssignmentError):
    """Homework cannot be done as asked; the message says why, in one line."""


# --- REST helpers -------------------------------------------------------------------------------


def _tags(obj: dict[str, Any]) -> dict[str, str]:
    return {t["key"]: t.get("value", "") for t in obj.get("tags", []) or []}


def _experiment(url: str, auth: Auth, name: str, cafile: Path | None) -> dict[str, Any] | None:
    """The experiment ``name`` as ``auth`` may read it; ``None`` when it does not exist or
    ``auth`` may not read it (a student cannot tell another's homework from none)."""
    status, found = patiently(lambda: rest(url, "/api/2.0/mlflow/experiments/get-by-name",
                                           auth=auth, query={"experiment_name": name},
                                           cafile=cafile))  # fmt: skip
    if status == 200:
        return dict(found["experiment"])
    if status in (403, 404):
        return None
    _refused(status, found, auth, url)
    _checked(status, found, f"cannot read the experiment {name!r}")
    return None  # pragma: no cover


def _refused(status: int, answer: dict[str, Any], auth: Auth, url: str) -> None:
    if status == 401:
        raise HomeworkError(
            f"the class server at {url} refused the account {auth[0]!r}: check "
            "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD"
        )
    if status == 503:
        raise HomeworkError(f"the class server at {url} is unavailable for a moment; try again")


def _call(
    url: str, endpoint: str, body: dict[str, Any] | None, auth: Auth, what: str,
    cafile: Path | None, **kw: Any,
) -> dict[str, Any]:  # fmt: skip
    status, answer = patiently(lambda: rest(url, endpoint, body, auth=auth, cafile=cafile, **kw))
    _refused(status, answer, auth, url)
    return _checked(status, answer, what)


def _create_experiment(
    url: str, admin: Auth, name: str, tags: dict[str, str], note: str, cafile: Path | None
) -> tuple[str, bool]:
    """``(id, created)`` of experiment ``name`` made with ``tags`` (found if it exists)."""
    every = [{"key": k, "value": v} for k, v in tags.items()]
    every += [{"key": str(Tag.EXPERIMENT_KIND), "value": EXPERIMENT_KIND},
              {"key": str(Tag.NOTE), "value": note}]  # fmt: skip
    status, made = rest(url, "/api/2.0/mlflow/experiments/create", {"name": name, "tags": every},
                        auth=admin, cafile=cafile)  # fmt: skip
    if status == 200:
        return str(made["experiment_id"]), True
    if "already exists" in str(made.get("message", "")):
        found = _experiment(url, admin, name, cafile)
        if found is not None:
            return str(found["experiment_id"]), False
    _refused(status, made, admin, url)
    _checked(status, made, f"cannot create the experiment {name!r}")
    raise HomeworkError(f"cannot create the experiment {name!r}")  # pragma: no cover


def _set_experiment_tag(
    url: str, admin: Auth, exp_id: str, key: str, value: str, cafile: Path | None
) -> None:
    _call(url, "/api/2.0/mlflow/experiments/set-experiment-tag",
          {"experiment_id": exp_id, "key": key, "value": value}, admin,
          f"cannot tag experiment {exp_id}", cafile)  # fmt: skip


def _search_runs(
    url: str, auth: Auth, exp_id: str, cafile: Path | None, filter_string: str = ""
) -> list[dict[str, Any]]:
    """Every run of an experiment (all pages), oldest first."""
    out: list[dict[str, Any]] = []
    token = None
    while True:
        body: dict[str, Any] = {"experiment_ids": [exp_id], "max_results": 1000,
                                "order_by": ["attributes.start_time ASC"]}  # fmt: skip
        if filter_string:
            body["filter"] = filter_string
        if token:
            body["page_token"] = token
        page = _call(url, "/api/2.0/mlflow/runs/search", body, auth,
                     f"cannot list the runs of experiment {exp_id}", cafile)  # fmt: skip
        out += page.get("runs", [])
        token = page.get("next_page_token")
        if not token:
            return out


def list_students(url: str, admin: Auth, cafile: Path | None = None) -> list[str]:
    """The class's students: every account that is not an admin (a teacher), by name."""
    found = _call(url, "/api/2.0/mlflow/users/list", None, admin, "cannot list the accounts",
                  cafile)  # fmt: skip
    return sorted(u["username"] for u in found.get("users", [])
                  if not u.get("is_admin") and u["username"] != ADMIN_USERNAME)  # fmt: skip


# --- the teacher: assign ------------------------------------------------------------------------

#: the words of the experiments' descriptions in the MLflow UI
_GRADEBOOK_NOTE = ("Gradebook of the assignment **{name}** (attnref homework): one run per "
                   "student and exercise, the grade the teacher computed from the stored "
                   "answer. `attnref server grades {name}` prints it.")  # fmt: skip
_STUDENT_NOTE = ("Homework **{name}** of {student}: one run per submission, holding its "
                 "answer.json. `attnref homework fetch {name}` writes the exercises, "
                 "`attnref homework submit {name} answer-1.json` submits.")  # fmt: skip


@dataclass(frozen=True)
class Assigned:
    """What `assign` did: the assignment (as stored), its gradebook, who got it."""

    assignment: Assignment
    gradebook_id: str
    created: bool
    enrolled: tuple[str, ...]  # students whose experiment was made now
    already: tuple[str, ...]  # students who had theirs
    due_before: dt.datetime | None = None

    @property
    def due_moved(self) -> bool:
        return not self.created and self.due_before != self.assignment.due

    def describe(self, url: str) -> str:
        """One paragraph for the teacher."""
        a = self.assignment
        made = "created" if self.created else "updated"
        n = len(self.enrolled) + len(self.already)
        who = f"{n} student{'s' if n != 1 else ''}"
        if self.enrolled and self.already:
            who += f" ({len(self.enrolled)} new: {', '.join(self.enrolled)})"
        elif self.enrolled:
            who += f" ({', '.join(self.enrolled)})"
        lines = [
            f"{made} assignment {a.name!r} on {url}: {a.exercises} exercise"
            f"{'s' if a.exercises != 1 else ''} each for {who}, {a.describe_due()}; "
            f"gradebook: experiment {self.gradebook_id} ({gradebook_experiment(a.name)})"
        ]
        if self.due_moved:
            before = f"{self.due_before:%Y-%m-%d %H:%M} UTC" if self.due_before else "none"
            lines.append(f"  the due time moved from {before} to {a.describe_due()[4:]}")
        if n == 0:
            lines.append("  no student yet: add them (attnref server add-student NAME), then "
                         "run this again")  # fmt: skip
        lines.append(f"  students run: attnref homework fetch {a.name}")
        lines.append(f"  the gradebook in the UI: {ui_experiment_url(url, self.gradebook_id)}")
        return "\n".join(lines)


def assign(
    url: str, admin: Auth, asked: Assignment, *, due_given: bool = True,
    cafile: Path | None = None,
) -> Assigned:  # fmt: skip
    """Create assignment ``asked`` (or complete an existing one of the same exercises: its
    due time moved when ``due_given``, the students who joined since enrolled).

    An assignment of that name with other exercises is refused (its students have their
    variants already)."""
    found = _experiment(url, admin, gradebook_experiment(asked.name), cafile)
    due_before = None
    if found is not None:
        current = Assignment.from_tags(_tags(found))
        if not current.same_exercises(asked):
            raise HomeworkError(
                f"assignment {asked.name!r} exists with other exercises ({_shape(current)}); "
                "its students have their variants: choose another name"
            )
        due_before = current.due
        assignment = replace(current, due=asked.due if due_given else current.due)
        gradebook_id, created = str(found["experiment_id"]), False
        if assignment.due != current.due:
            _set_experiment_tag(url, admin, gradebook_id, DUE_TAG,
                                iso(assignment.due) if assignment.due else "", cafile)  # fmt: skip
    else:
        assignment = asked
        gradebook_id, created = _create_experiment(
            url, admin, gradebook_experiment(asked.name), asked.tags(GRADEBOOK),
            _GRADEBOOK_NOTE.format(name=asked.name), cafile,
        )  # fmt: skip
    enrolled, already = [], []
    for student in list_students(url, admin, cafile):
        (enrolled if _enrol(url, admin, assignment, student, cafile) else already).append(student)
    return Assigned(assignment, gradebook_id, created, tuple(enrolled), tuple(already),
                    due_before)  # fmt: skip


def _shape(a: Assignment) -> str:
    s = a.shape()
    mask = "causal" if s["causal"] else "no mask"
    back = ", backward" if s["backward"] else ""
    variant = f", --variant {a.variant}" if a.variant != "mha" else ""
    return (f"{s['exercises']} exercises of {s['tokens']} tokens, d_model {s['d_model']}, "
            f"{s['heads']} heads, {mask}, {s['decimals']} decimals, {s['lang']}{back}"
            f"{variant}")  # fmt: skip


def catalogue_names(assignment: Assignment) -> list[str]:
    """The names of the catalogue that grades this assignment's exercises (the homework's, or
    a variant's own), in its order: the rows of the class's summary."""
    from attention_ref.worked.answer import Problem
    from attention_ref.worked.mistakes import CATALOGUE

    chain = Problem.of_exercise(assignment.options(0)).chain
    return [k.name for k in (chain.catalogue if chain is not None else CATALOGUE)]


def _enrol(
    url: str, admin: Auth, assignment: Assignment, student: str, cafile: Path | None
) -> bool:
    """``student``'s experiment of ``assignment``, made or brought up to date (its due time),
    granted to them; whether it was made now."""
    name = student_experiment(assignment.name, student)
    found = _experiment(url, admin, name, cafile)
    if found is None:
        exp_id, created = _create_experiment(
            url, admin, name, assignment.tags(SUBMISSIONS, student),
            _STUDENT_NOTE.format(name=assignment.name, student=student), cafile,
        )  # fmt: skip
    else:
        exp_id, created = str(found["experiment_id"]), False
        tags = _tags(found)
        if tags.get(SEEDS_TAG) != json.dumps(assignment.seeds(student)):
            raise HomeworkError(f"{name!r} holds other exercises than the assignment's")
        due = iso(assignment.due) if assignment.due else ""
        if tags.get(DUE_TAG, "") != due:
            _set_experiment_tag(url, admin, exp_id, DUE_TAG, due, cafile)
    grant_experiment(url, admin, student, exp_id, "EDIT", cafile=cafile)
    return created


def assignments(url: str, admin: Auth, cafile: Path | None = None) -> list[Assignment]:
    """Every assignment on the server (its gradebook's tags)."""
    body = {"max_results": 1000, "filter": f"tags.`{ROLE_TAG}` = '{GRADEBOOK}'"}
    found = _call(url, "/api/2.0/mlflow/experiments/search", body, admin,
                  "cannot list the assignments", cafile)  # fmt: skip
    return [Assignment.from_tags(_tags(e)) for e in found.get("experiments", [])]


def enrol_everywhere(url: str, admin: Auth, student: str, cafile: Path | None = None) -> list[str]:
    """Give a new student their experiment in every assignment; the names of those made."""
    return [a.name for a in assignments(url, admin, cafile)
            if _enrol(url, admin, a, student, cafile)]  # fmt: skip


# --- the student: fetch and submit -------------------------------------------------------------


@dataclass(frozen=True)
class Mine:
    """A student's side of an assignment: their experiment and their exercises."""

    assignment: Assignment
    student: str
    experiment_id: str
    exercises: tuple[ExerciseOptions, ...]


def mine(url: str, auth: Auth, name: str, cafile: Path | None = None) -> Mine:
    """The assignment ``name`` as student ``auth[0]`` has it."""
    student = auth[0]
    check_name(name)
    found = _experiment(url, auth, student_experiment(name, student), cafile)
    if found is None:
        raise HomeworkError(
            f"no assignment {name!r} for {student!r} on {url} (is the name right? your "
            f"teacher makes it with attnref server assign {name})"
        )
    tags = _tags(found)
    if tags.get(ROLE_TAG) != SUBMISSIONS or tags.get(STUDENT_TAG) != student:
        raise HomeworkError(f"{student_experiment(name, student)!r} is not {student!r}'s homework")
    assignment = Assignment.from_tags(tags)
    if tags.get(SEEDS_TAG) != json.dumps(assignment.seeds(student)):
        raise HomeworkError(f"the exercises of {name!r} on the server are not {student!r}'s")
    return Mine(assignment, student, str(found["experiment_id"]),
                tuple(assignment.exercises_of(student)))  # fmt: skip


@dataclass(frozen=True)
class Submitted:
    """What `submit` stored and what the server said of it."""

    exercise: int
    run_id: str
    received: dt.datetime
    late: dt.timedelta | None
    attempt: int
    report: Report
    due: dt.datetime | None


#: what ``attnref homework submit`` says of a stored submission, per language
SUBMITTED: Final = {
    "en": ("submitted {path} as exercise {k} of {name!r}: attempt {n}, received {when} by the "
           "server, {timing}; submission {run}. Your teacher's grade is computed from the "
           "stored answer.", "on time ({due})", "LATE by {late} ({due})"),
    "pt": ("enviado {path} como exercício {k} de {name!r}: tentativa {n}, recebido {when} pelo "
           "servidor, {timing}; envio {run}. A nota do professor é calculada a partir da "
           "resposta guardada.", "no prazo ({due})", "ATRASADO {late} ({due})"),
}  # fmt: skip


def submitted_line(sent: Submitted, path: str, name: str, lang: str) -> str:
    """One line on a stored submission, in the assignment's language."""
    text, on_time, late = SUBMITTED[lang]
    if sent.due is None:
        due = "no due time" if lang == "en" else "sem prazo"
    else:
        due = f"{'due' if lang == 'en' else 'prazo'} {sent.due:%Y-%m-%d %H:%M} UTC"
    timing = (
        late.format(late=duration(sent.late), due=due) if sent.late else on_time.format(due=due)
    )
    return text.format(
        path=path,
        k=sent.exercise,
        name=name,
        n=sent.attempt,
        run=sent.run_id,
        when=f"{sent.received:%Y-%m-%d %H:%M:%S} UTC",
        timing=timing,
    )


def identify(doc: object, mine_: Mine) -> int:
    """Which of the student's exercises an answer document answers (1-based), else
    `HomeworkError` naming theirs."""
    k = matching_exercise(doc, list(mine_.exercises))
    if k is not None:
        return k
    theirs = ", ".join(f"{i}: seed {o.seed}" for i, o in enumerate(mine_.exercises, start=1))
    named = doc.get("exercise") if isinstance(doc, dict) else None
    if not isinstance(named, dict):
        what = ("holds an exercise's numbers, not an answer" if isinstance(doc, dict)
                and {"X", "heads"} <= set(doc) else "names no exercise")  # fmt: skip
        raise HomeworkError(
            f"the file {what}: fill in the answer-K.json that attnref homework fetch "
            f"{mine_.assignment.name} wrote (it names your exercise K), and submit that"
        )
    raise HomeworkError(
        f"the answer names exercise seed {named.get('seed')}, which is not one of your "
        f"exercises of {mine_.assignment.name!r} ({theirs}): fill in the answer-K.json that "
        "attnref homework fetch wrote"
    )


def check_text(text: bytes, mine_: Mine) -> tuple[int, Report]:
    """Read an answer's bytes as the grader does: which exercise, and its check report.

    A file that is not an answer to one of the student's exercises: `InputError` /
    `HomeworkError` (one line); nothing is sent."""
    from attention_ref.worked.answer import NO_STEP, Problem, read_answer_text
    from attention_ref.worked.check import check_document
    from attention_ref.worked.inputs import InputError

    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("the answer is not UTF-8 text (write it as attnref homework fetch "
                         "wrote it: JSON)") from None  # fmt: skip
    doc = read_answer_text(decoded)
    k = identify(doc, mine_)
    prob = Problem.of_exercise(mine_.exercises[k - 1])
    try:
        return k, check_document(doc, prob)
    except InputError as e:
        if str(e) == NO_STEP[prob.lang]:  # the words of `attnref check`: say the homework's
            raise InputError(_NO_STEP_YET[prob.lang].format(
                k=k, name=mine_.assignment.name)) from None  # fmt: skip
        raise


#: what submit says of an answer file with no step filled in yet, per language
_NO_STEP_YET = {
    "en": "no step given yet: fill in the steps you computed (each null in answer-{k}.json), "
          "then attnref homework submit {name} answer-{k}.json",
    "pt": "nenhum passo dado ainda: preencha os passos que você calculou (cada null de "
          "answer-{k}.json) e envie: attnref homework submit {name} answer-{k}.json",
}  # fmt: skip


#: the tag of a submission's run that holds the key its client drew (found again after a lost
#: reply, so that a retry never makes a second attempt of the same answer)
CLIENT_KEY_TAG: Final = "submission.key"


def _runs_get(url: str, auth: Auth, run_id: str, cafile: Path | None,
              patience: Patience = PATIENCE) -> dict[str, Any]:  # fmt: skip
    status, got = patiently(lambda: rest(url, "/api/2.0/mlflow/runs/get", auth=auth,
                                         cafile=cafile, query={"run_id": run_id}),
                            patience)  # fmt: skip
    _refused(status, got, auth, url)
    return dict(_checked(status, got, "cannot read the submission back")["run"])


def _create_once(url: str, auth: Auth, exp_id: str, k: int, cafile: Path | None,
                 patience: Patience = PATIENCE) -> str:  # fmt: skip
    """The submission's run, made once however often the request must be sent."""
    key = secrets.token_hex(16)
    body = {"experiment_id": exp_id, "run_name": f"exercise {k}",
            "tags": [{"key": CLIENT_KEY_TAG, "value": key}]}  # fmt: skip

    def made_already() -> dict[str, Any] | None:
        found = _search_runs(url, auth, exp_id, cafile, f"tags.`{CLIENT_KEY_TAG}` = '{key}'")
        return {"run": found[0]} if found else None

    status, made = patiently(lambda: rest(url, "/api/2.0/mlflow/runs/create", body, auth=auth,
                                          cafile=cafile), patience,
                             before_retry=made_already)  # fmt: skip
    _refused(status, made, auth, url)
    return str(_checked(status, made, "cannot create the submission")["run"]["info"]["run_id"])


def _upload_once(url: str, auth: Auth, exp_id: str, run_id: str, text: bytes,
                 cafile: Path | None, patience: Patience = PATIENCE) -> None:  # fmt: skip
    """``answer.json`` into the run; a retry after a lost reply finds it there (the same bytes)."""
    upload = _answer_path(exp_id, run_id)
    status, answer = patiently(
        lambda: rest(url, upload, data=text, method="PUT", auth=auth, cafile=cafile), patience
    )
    already = status == 403 and "already" in str(answer.get("message", ""))
    if already and _download(url, auth, exp_id, run_id, cafile) == text:
        return  # an earlier try of this call stored it
    _refused(status, answer, auth, url)
    _checked(status, answer, "the answer did not reach the server")


def _finish_once(url: str, auth: Auth, run_id: str, sha: str, cafile: Path | None,
                 patience: Patience = PATIENCE) -> None:  # fmt: skip
    """End the run FINISHED; a retry after a lost reply finds it finished with this answer."""

    def finished() -> dict[str, Any] | None:
        got = _runs_get(url, auth, run_id, cafile)
        done = got["info"]["status"] == "FINISHED" and _tags(got["data"]).get(ANSWER_SHA_TAG) == sha
        return got if done else None

    status, answer = patiently(
        lambda: rest(url, "/api/2.0/mlflow/runs/update", {"run_id": run_id, "status": "FINISHED"},
                     auth=auth, cafile=cafile),
        patience, before_retry=finished,
    )  # fmt: skip
    if status == 403 and finished() is not None:
        return
    _refused(status, answer, auth, url)
    _checked(status, answer, "the submission could not be finished")


def submit(url: str, auth: Auth, name: str, text: bytes, cafile: Path | None = None,
           patience: Patience = PATIENCE,
           checked: tuple[Mine, int, Report] | None = None) -> Submitted:  # fmt: skip
    """Submit an answer's bytes: checked here first (a bad file sends nothing), then stored
    whole (a run of the student's holding ``answer.json``, ended FINISHED) or not at all (a run
    that could not be finished is ended FAILED and does not count).

    A busy server is asked again (`attention_ref.classroom.patience`), each write at most once
    in effect; whatever fails, what the student is told is what the server holds, read back
    (a submission that is finished is never reported as not submitted)."""
    if checked is None:  # ``checked``: the check made on the student's machine beforehand
        me = mine(url, auth, name, cafile)
        k, report = check_text(text, me)
    else:
        me, k, report = checked
    sha = hashlib.sha256(text).hexdigest()
    run_id = _create_once(url, auth, me.experiment_id, k, cafile, patience)
    try:
        _upload_once(url, auth, me.experiment_id, run_id, text, cafile, patience)
        _finish_once(url, auth, run_id, sha, cafile, patience)
    except (ServerError, HomeworkError) as e:
        try:
            ended = _ended(url, auth, run_id, cafile)
        except ServerError:
            raise HomeworkError(
                f"{e}; the class server did not say whether submission {run_id} was received: "
                f"see attnref homework status {name}"
            ) from None
        if not ended:
            raise HomeworkError(f"{e}; nothing was submitted (submit again)") from None
    got = _runs_get(url, auth, run_id, cafile)
    tags = _tags(got["data"])
    if tags.get(ANSWER_SHA_TAG) != sha:
        raise HomeworkError(f"submission {run_id} does not hold the answer sent; submit again")
    received = from_iso(tags[RECEIVED_TAG])
    attempts = sum(
        r["info"].get("status") == "FINISHED" and r["info"].get("run_name") == f"exercise {k}"
        for r in _search_runs(url, auth, me.experiment_id, cafile)
    )
    due = me.assignment.due
    return Submitted(k, run_id, received, lateness(received, due), attempts, report, due)


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

    def cells(self) -> tuple[str, ...]:
        """submission, exercise, received, late, status, grade, first wrong, diagnosis, counts."""
        g = self.grade
        received = f"{self.received:%Y-%m-%d %H:%M:%S}" if self.received else ""
        late = ("late by " + duration(self.late)) if self.late else ("no" if received else "")
        return (self.run_id, g.get(GRADE + "exercise") or self.name, received, late,
                self.status, g.get(GRADE + "steps", "not graded yet"),
                g.get(GRADE + "first_wrong", ""), g.get(GRADE + "diagnosis", ""),
                g.get(GRADE + "counts", ""))  # fmt: skip


def my_submissions(
    url: str, auth: Auth, name: str, cafile: Path | None = None
) -> tuple[Mine, list[MySubmission]]:
    """A student's submissions of assignment ``name``, oldest first."""
    me = mine(url, auth, name, cafile)
    out = []
    for run in _search_runs(url, auth, me.experiment_id, cafile):
        info, tags = run["info"], _tags(run.get("data", {}))
        received = from_iso(tags[RECEIVED_TAG]) if RECEIVED_TAG in tags else None
        late = lateness(received, me.assignment.due) if received else None
        grade = {k: v for k, v in tags.items() if k.startswith(GRADE)}
        out.append(MySubmission(info["run_id"], info.get("run_name", ""),
                                str(info.get("status", "")), received, late, grade))  # fmt: skip
    return me, out


def _ended(url: str, auth: Auth, run_id: str, cafile: Path | None) -> bool:
    """After a failure: whether the submission did get finished (the answer's reply was
    lost); else it is ended FAILED, best effort, so that it never counts. A server that does
    not answer this read either: `ServerError` (nothing is said that it might contradict)."""
    if _runs_get(url, auth, run_id, cafile)["info"]["status"] == "FINISHED":
        return True
    with contextlib.suppress(ServerError):
        rest(url, "/api/2.0/mlflow/runs/update", {"run_id": run_id, "status": "FAILED"},
             auth=auth, cafile=cafile)  # fmt: skip
    return False


# --- the teacher: grade -------------------------------------------------------------------------


def _student_experiments(url: str, admin: Auth, name: str, cafile: Path | None) -> dict[str, str]:
    """``student -> experiment id`` of every student of assignment ``name``."""
    body = {"max_results": 1000,
            "filter": f"tags.`{ASSIGNMENT_TAG}` = '{name}' and tags.`{ROLE_TAG}` = "
                      f"'{SUBMISSIONS}'"}  # fmt: skip
    found = _call(url, "/api/2.0/mlflow/experiments/search", body, admin,
                  f"cannot list the students of {name!r}", cafile)  # fmt: skip
    out = {}
    for e in found.get("experiments", []):
        tags = _tags(e)
        out[tags[STUDENT_TAG]] = str(e["experiment_id"])
    return dict(sorted(out.items()))


def _gradebook(url: str, admin: Auth, name: str, cafile: Path | None) -> tuple[Assignment, str]:
    found = _experiment(url, admin, gradebook_experiment(name), cafile)
    if found is None:
        raise HomeworkError(
            f"no assignment {name!r} whose gradebook {admin[0]!r} may read on {url}: a teacher "
            f"makes it with attnref server assign {name}; a student sees their own grades with "
            f"attnref homework status {name}"
        )
    return Assignment.from_tags(_tags(found)), str(found["experiment_id"])


def grade_submission(
    student: str, run: dict[str, Any], answer: bytes | None, assignment: Assignment
) -> Graded:
    """One stored submission graded on the teacher's side against the student's variant."""
    from attention_ref.worked.inputs import InputError

    info, tags = run["info"], _tags(run.get("data", {}))
    received = (from_iso(tags[RECEIVED_TAG]) if RECEIVED_TAG in tags
                else from_ms(int(info.get("end_time") or 0)))  # fmt: skip
    base = {"student": student, "run_id": info["run_id"], "received": received,
            "started": int(info.get("start_time") or 0),
            "late": lateness(received, assignment.due)}  # fmt: skip
    me = Mine(assignment, student, "", tuple(assignment.exercises_of(student)))
    # the exercise the submission says it answers (its run's name, given when it was made):
    # where an answer cannot be read, its attempt is counted there
    claimed = next((k for k in range(1, assignment.exercises + 1)
                    if info.get("run_name") == f"exercise {k}"), None)  # fmt: skip
    if RECEIVED_TAG not in tags or ANSWER_SHA_TAG not in tags:  # the client's end time is no proof
        return Graded(exercise=claimed, standing=Standing.MALFORMED,
                      reason="finished without the server's stamp (time received, hash)",
                      **base)  # fmt: skip
    if answer is None:
        return Graded(exercise=claimed, standing=Standing.MALFORMED,
                      reason=f"no {ANSWER_FILE} stored", **base)  # fmt: skip
    if hashlib.sha256(answer).hexdigest() != tags.get(ANSWER_SHA_TAG):
        return Graded(exercise=claimed, standing=Standing.CHANGED,
                      reason=f"its {ANSWER_FILE} is not the one the server received",
                      **base)  # fmt: skip
    try:
        k, report = check_text(answer, me)
    except (InputError, HomeworkError) as e:
        return Graded(exercise=claimed, standing=Standing.MALFORMED, reason=str(e)[:300],
                      **base)  # fmt: skip
    first = report.first_wrong
    return Graded(exercise=k, standing=Standing.GRADED, steps_right=report.steps_right,
                  steps_given=report.steps_given, first_wrong=first.label if first else "",
                  diagnoses=tuple(report.diagnosis_names), **base)  # fmt: skip


def steps_asked(assignment: Assignment) -> int:
    """The steps a whole answer to all of the assignment's exercises has (every student's
    exercises have the same shape): what a grade of steps right is out of."""
    from attention_ref.classroom.simulate import right_answer
    from attention_ref.worked.answer import Problem
    from attention_ref.worked.check import check_document

    total = 0
    for opt in assignment.exercises_of("student"):
        prob = Problem.of_exercise(opt)
        doc = json.loads(right_answer(prob, assignment.decimals))
        total += check_document(doc, prob).steps_given
    return total


def _answer_path(exp_id: str, run_id: str) -> str:
    """The artifact proxy's endpoint of a submission's answer."""
    return f"/api/2.0/mlflow-artifacts/artifacts/{exp_id}/{run_id}/artifacts/{ANSWER_FILE}"


def _download(url: str, auth: Auth, exp_id: str, run_id: str, cafile: Path | None) -> bytes | None:
    status, raw = request_bytes(url, _answer_path(exp_id, run_id), auth=auth, cafile=cafile)
    if status == 404:
        return None
    if status != 200:
        _checked(status, {"message": raw.decode(errors="replace")[:200]},
                 f"cannot download the answer of {run_id}")  # fmt: skip
    return raw


@dataclass(frozen=True)
class Grading:
    """What `grade` did: the gradebook's rows, every submission graded, the runs written."""

    assignment: Assignment
    rows: tuple[Row, ...]
    graded: tuple[Graded, ...]
    gradebook_id: str
    written: int


def grade(
    url: str, admin: Auth, name: str, *, best: bool = False, use: Iterable[str] = (),
    cafile: Path | None = None,
) -> Grading:  # fmt: skip
    """Grade every finished submission of assignment ``name`` from its stored answer and
    write the gradebook (one run per student and exercise, made or updated) and each
    submission's grade (tags on it, for the student)."""
    assignment, book_id = _gradebook(url, admin, name, cafile)
    students = _student_experiments(url, admin, name, cafile)
    use = list(use)
    graded: list[Graded] = []
    for student, exp_id in students.items():
        for run in _search_runs(url, admin, exp_id, cafile):
            if run["info"].get("status") != "FINISHED":
                continue  # not stored whole: never counts
            answer = _download(url, admin, exp_id, run["info"]["run_id"], cafile)
            graded.append(grade_submission(student, run, answer, assignment))
    known = {g.run_id for g in graded}
    if unknown := [r for r in use if r not in known]:
        raise HomeworkError(f"--use {unknown[0]}: no finished submission of {name!r} has that "
                            "run id")  # fmt: skip
    book = rows(graded, list(students), assignment.exercises, best=best, use=use)
    written = _write_gradebook(url, admin, book_id, book, cafile)
    counted = {r.submission for r in book}
    for g in graded:
        _tag_submission(url, admin, g, g.run_id in counted, cafile)
    return Grading(assignment, tuple(book), tuple(graded), book_id, written)


def _log(url: str, admin: Auth, run_id: str, tags: dict[str, str], metrics: dict[str, float],
         cafile: Path | None) -> None:  # fmt: skip
    now = int(time.time() * 1000)
    body = {"run_id": run_id, "tags": [{"key": k, "value": v} for k, v in tags.items()],
            "metrics": [{"key": k, "value": v, "timestamp": now, "step": 0}
                        for k, v in metrics.items()]}  # fmt: skip
    _call(url, "/api/2.0/mlflow/runs/log-batch", body, admin, f"cannot write run {run_id}",
          cafile)  # fmt: skip


def _write_gradebook(
    url: str, admin: Auth, book_id: str, book: Sequence[Row], cafile: Path | None
) -> int:
    """One teacher's run per row in the gradebook experiment, made or updated."""
    existing = {}
    for run in _search_runs(url, admin, book_id, cafile):
        tags = _tags(run.get("data", {}))
        if GRADE + "student" in tags and run["info"].get("lifecycle_stage") == "active":
            key = (tags[GRADE + "student"], tags.get(GRADE + "exercise"))
            existing[key] = run["info"]["run_id"]
    for r in book:
        run_id = existing.get((r.student, str(r.exercise)))
        if run_id is None:
            made = _call(url, "/api/2.0/mlflow/runs/create",
                         {"experiment_id": book_id, "run_name": r.run_name},
                         admin, "cannot write the gradebook", cafile)  # fmt: skip
            run_id = made["run"]["info"]["run_id"]
        _log(url, admin, run_id, r.tags(), r.metrics(), cafile)
        _call(url, "/api/2.0/mlflow/runs/update",
              {"run_id": run_id, "status": "FINISHED", "run_name": r.run_name}, admin,
              "cannot write the gradebook", cafile)  # fmt: skip
    return len(book)


def _tag_submission(url: str, admin: Auth, g: Graded, counts: bool, cafile: Path | None) -> None:
    """The teacher's grade of one submission, on it (the student reads their own)."""
    diagnosis = " | ".join(" + ".join(n) for n in g.diagnoses)
    tags = {GRADE + "status": str(g.standing), GRADE + "exercise": str(g.exercise or ""),
            GRADE + "steps": f"{g.steps_right}/{g.steps_given}",
            GRADE + "first_wrong": g.first_wrong, GRADE + "diagnosis": diagnosis,
            GRADE + "late": "yes" if g.late else "no", GRADE + "counts": "yes" if counts else "no",
            GRADE + "reason": g.reason[:500]}  # fmt: skip
    _log(url, admin, g.run_id, tags, {}, cafile)


def gradebook(
    url: str, auth: Auth, name: str, cafile: Path | None = None
) -> tuple[Assignment, list[Row]]:
    """The assignment and its gradebook as the teacher's runs hold it (what `grade` last
    wrote), by student and exercise."""
    assignment, book_id = _gradebook(url, auth, name, cafile)
    out = []
    for run in _search_runs(url, auth, book_id, cafile):
        data = run.get("data", {})
        tags = _tags(data)
        if GRADE + "student" not in tags or run["info"].get("lifecycle_stage") != "active":
            continue
        metrics = {m["key"]: float(m["value"]) for m in data.get("metrics", [])}
        out.append(Row.from_run(tags, metrics))
    return assignment, sorted(out, key=lambda r: (r.student, r.exercise))


def write_exercises(me: Mine, out: Path) -> list[tuple[Path, str]]:
    """``statement-K.md``, ``statement-K.tex`` and ``answer-K.json`` of each of the student's
    exercises into ``out``; an answer file that is already there is kept (it may hold the
    student's work). Returns ``(path, what)`` per file: ``"written"`` or ``"kept"``."""
    from attention_ref.render import render, to_json
    from attention_ref.worked.exercise import make_exercise

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
            done.append((path, "written"))
    return done


def _kept(path: Path, me: Mine, k: int) -> str:
    """What an answer file already there is: the student's answer to exercise ``k``, or not."""
    from attention_ref.worked.answer import read_answer_text

    try:
        doc = read_answer_text(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return "kept (it is not an answer file: move it away to get the template)"
    if matching_exercise(doc, list(me.exercises)) == k:
        return "kept"
    return f"kept (it does not answer your exercise {k}: move it away to get the template)"


#: the homework's words on a statement, per language
_HOMEWORK_WORDS = {
    "en": ("Homework {name}, exercise {k} of {n}",
           "For {student}, {due}. Fill in answer-{k}.json, then submit it: attnref homework "
           "submit {name} answer-{k}.json (you see the check at once; resubmitting keeps every "
           "attempt and the latest counts). The seed below is your own exercise's."),
    "pt": ("Lição de casa {name}, exercício {k} de {n}",
           "Para {student}, {due}. Preencha answer-{k}.json e envie: attnref homework submit "
           "{name} answer-{k}.json (a correção aparece na hora; reenviar guarda todas as "
           "tentativas e vale a última). A semente abaixo é a do seu exercício."),
}  # fmt: skip


def _homework_statement(statement: Any, me: Mine, k: int) -> Any:
    from attention_ref.render import Section

    a = me.assignment
    title, text = _HOMEWORK_WORDS[a.lang]
    due = a.describe_due()
    if a.lang == "pt":
        due = f"prazo {a.due:%Y-%m-%d %H:%M} UTC" if a.due else "sem prazo"
    head = Section(title=title.format(name=a.name, k=k, n=a.exercises),
                   text=text.format(name=a.name, k=k, student=me.student, due=due))  # fmt: skip
    *body, how = statement.sections
    closing = how.text
    for old, new in _CLOSING[a.lang]:  # the exercise's own words of how to answer: the homework's
        closing = closing.replace(old, new.format(name=a.name, k=k))
    source = statement.source if a.source else _NO_SOURCE[a.lang].format(name=a.name, k=k)
    return replace(statement, source=source, sections=[head, *body, replace(how, text=closing)])


#: the source line of a statement under ``server assign --no-source``, per language
_NO_SOURCE = {
    "en": "homework {name}, exercise {k} (the command that draws it is the teacher's)",
    "pt": "lição de casa {name}, exercício {k} (o comando que o sorteia fica com o professor)",
}


#: the closing paragraph of an exercise (`attnref exercise`) made the homework's, per language
_CLOSING = {
    "en": (("answer.json (attnref exercise --out writes it", "answer-{k}.json (attnref homework "
            "fetch wrote it"),
           ("Then run attnref check answer.json.", "Then submit it: attnref homework submit "
            "{name} answer-{k}.json (attnref check answer-{k}.json checks it without "
            "submitting). The problem's numbers are in exercise-{k}.json.")),
    "pt": (("answer.json (attnref exercise --out o escreve", "answer-{k}.json (attnref homework "
            "fetch o escreveu"),
           ("Depois rode attnref check answer.json.", "Depois envie: attnref homework submit "
            "{name} answer-{k}.json (attnref check answer-{k}.json confere sem enviar). Os "
            "números do problema estão em exercise-{k}.json."),
           ("attnref check answer.json.", "attnref homework submit {name} answer-{k}.json.")),
}  # fmt: skip


__all__ = ["Assigned", "Grading", "HomeworkError", "Mine", "MySubmission", "Submitted", "assign",
           "assignments", "catalogue_names", "check_text", "enrol_everywhere", "grade",
           "grade_submission",
           "gradebook", "identify", "list_students", "mine", "my_submissions", "steps_asked",
           "submit",
           "submitted_line",
           "write_exercises"]  # fmt: skip
