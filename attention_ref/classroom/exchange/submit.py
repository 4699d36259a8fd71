"""The student's verb ``submit`` (and ``status``): an answer checked, then stored whole.

`check_text` reads an answer as the grader does (which exercise, its check report); `submit`
stores it as a run of the student's holding ``answer.json``, ended FINISHED, each write made
at most once however often a busy server must be asked; `my_submissions` reads the student's
submissions back with the teacher's grade once given.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from attention_ref.classroom.assignment import (
    ANSWER_SHA_TAG,
    GRADE,
    RECEIVED_TAG,
    duration,
    from_iso,
    lateness,
    matching_exercise,
)
from attention_ref.classroom.exchange.fetch import Mine, mine
from attention_ref.classroom.exchange.rest import (
    Auth,
    HomeworkError,
    _answer_path,
    _download,
    _refused,
    _search_runs,
    _tags,
)
from attention_ref.classroom.patience import PATIENCE, Patience, patiently
from attention_ref.classroom.server import ServerError, _checked, rest

if TYPE_CHECKING:
    from attention_ref.exercises.grader import Report


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
    `HomeworkError` naming theirs; an ``"exercise"`` that is none (its seed not an integer, an
    option unknown): `InputError`, as ``attnref check`` says it."""
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
    from attention_ref.exercises.options import options_from_json

    options_from_json(named)  # `InputError` where it is no exercise: a seed not an integer
    raise HomeworkError(
        f"the answer names exercise seed {named['seed']}, which is not one of your "
        f"exercises of {mine_.assignment.name!r} ({theirs}): fill in the answer-K.json that "
        "attnref homework fetch wrote"
    )


def check_text(text: bytes, mine_: Mine) -> tuple[int, Report]:
    """Read an answer's bytes as the grader does: which exercise, and its check report.

    A file that is not an answer to one of the student's exercises: `InputError` /
    `HomeworkError` (one line); nothing is sent."""
    from attention_ref.exercises.answer import NO_STEP, Problem, read_answer_text
    from attention_ref.exercises.grader import check_document
    from attention_ref.inputs.attention_input import InputError

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
