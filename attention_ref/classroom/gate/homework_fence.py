"""The class server's gate, the homework fence: what a student may write in a submission.

No student writes a tag, parameter or metric of the homework's or the grades' namespaces, on
any run, however the key is spelled (`attention_ref.classroom.gate.ownership.judged_key`:
``" attnref.homework.received"``, ``"Attnref.Homework.received"``, a fullwidth ``ａttnref``).
In a student's submissions experiment a run holds one ``answer.json``: uploaded once
while the run is RUNNING, then the run is ended; FINISHED needs the answer, whose SHA-256
and time received (the server's clock) the gate records (`_finish`); a finished run is final.
Step 4 of `attention_ref.classroom.gate.auth` (its docstring says the whole rule).
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from attention_ref.classroom.coursework.assignment import (
    ANSWER_FILE,
    ANSWER_SHA_TAG,
    RECEIVED_TAG,
    RESERVED,
    ROLE_TAG,
    STUDENT_TAG,
    SUBMISSIONS,
    ZONE_TAG,
    Assignment,
    AssignmentError,
    from_ms,
    iso_ms,
    matching_exercise,
)
from attention_ref.classroom.coursework.class_time import UTC_NAME, checked_zone, shown
from attention_ref.classroom.coursework.policy import EXERCISE_TAG, MAX_ATTEMPTS, POLICY_TAG, Policy
from attention_ref.classroom.gate import uploads
from attention_ref.classroom.gate.access_table import Access
from attention_ref.classroom.gate.mlflow_seam import artifact_repo, tracking_store
from attention_ref.classroom.gate.ownership import (
    MODEL_ARTIFACTS,
    RUN_ARTIFACTS,
    artifact_path,
    judged_key,
    model_facts,
    now_ms,
    rows,
    run_facts,
    said,
)
from attention_ref.classroom.gate.refusals import closed, forbidden, hidden, unavailable

if TYPE_CHECKING:
    from flask import Response

MAX_ANSWER_BYTES = uploads.MAX_ANSWER_BYTES
_TERMINAL = ("FINISHED", "FAILED", "KILLED")
_UPDATE = "POST /mlflow/runs/update"
_UPLOAD = "PUT /mlflow-artifacts/artifacts/{artifact_path:path}"


def written_keys() -> list[str]:
    """Every tag, parameter and metric key a request writes (any route that writes some)."""
    body = said().body
    keys = [str(body["key"])] if "key" in body else []
    for name in ("tags", "params", "metrics"):
        items = body.get(name)
        if isinstance(items, list):
            keys += [str(t.get("key")) for t in items if isinstance(t, dict)]
        elif isinstance(items, dict):  # a registered model's tags, by key
            keys += [str(k) for k in items]
    return keys


def experiment_tags(experiment_id: str) -> dict[str, str]:
    """An experiment's tags, or ``{}`` when there is no such experiment: read from the store at
    every request (one query), never cached (an experiment made later under an id a student
    named before it existed is the homework it is; a teacher's change of a tag counts at once)."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST, ErrorCode

    if not experiment_id.isdigit():
        return {}
    try:
        return dict(rows("SqlExperimentTag", ("key", "value"), "experiment_id", experiment_id))  # type: ignore[arg-type]
    except LookupError:
        pass
    try:
        return dict(tracking_store().get_experiment(experiment_id).tags)
    except MlflowException as e:
        if e.error_code in (ErrorCode.Name(RESOURCE_DOES_NOT_EXIST), "INVALID_PARAMETER_VALUE"):
            return {}
        raise


def _experiment_of(access: Access) -> tuple[str | None, str | None]:
    """``(experiment id, run id)`` a student's write names (``None`` where it names none)."""
    s = said()
    if access is Access.CREATE_RUN:
        return s.one("experiment_id"), None
    if access is Access.OWN_ARTIFACT:
        path = artifact_path() or ""
        m = RUN_ARTIFACTS.match(path) or MODEL_ARTIFACTS.match(path)
        run = m.group(2) if m and not m.group(2).startswith("m-") else None
        return (m.group(1) if m else None), run
    if access is Access.CREATE_MODEL:
        run_id = s.one("source_run_id")
    elif access is Access.OWN_MODEL:
        model = s.one("model_id")
        found = model_facts(model) if model else None
        return (found[1] if found else None), (found[0] if found else None)
    else:
        run_id = s.one("run_id", "run_uuid")
    owned = run_facts(run_id) if run_id else None
    return (owned[1] if owned else None), run_id


def homework_fence(username: str, access: Access, key: str) -> Response | None:
    """A student's write, against the homework's rules (`attention_ref.classroom.gate.auth`, item
    4).

    Another student's submissions experiment is `hidden` (as one that does not exist)."""
    if access is not Access.OWN_ARTIFACT and (
        bad := [k for k in written_keys() if judged_key(k).startswith(RESERVED)]
    ):
        return forbidden(
            f"{bad[0]!r} is the teacher's and the server's to write (homework "
            "and grades); a student's run may not carry it"
        )
    if access not in (
        Access.CREATE_RUN,
        Access.OWN_RUN,
        Access.OWN_ARTIFACT,
        Access.CREATE_MODEL,
        Access.OWN_MODEL,
    ):
        return None
    experiment, run_id = _experiment_of(access)
    tags = experiment_tags(experiment) if experiment else {}
    if tags.get(ROLE_TAG) != SUBMISSIONS:
        return None
    if tags.get(STUDENT_TAG) != username:
        return hidden()
    if access is Access.CREATE_RUN:
        return None
    if key == _UPDATE and run_id:
        return _end_submission(experiment, run_id, tags)  # type: ignore[arg-type]
    if key == _UPLOAD and run_id:
        return _upload_answer(experiment, run_id)  # type: ignore[arg-type]
    return forbidden(
        f"a submission holds its {ANSWER_FILE} and nothing else ({key} refused); submit with "
        "attnref homework submit"
    )


def run_status(run_id: str) -> str:
    """A run's status, read from the store now (one query)."""

    try:
        found = rows("SqlRun", ("status",), "run_uuid", run_id)
    except LookupError:
        return str(tracking_store().get_run(run_id).info.status)
    if not found:
        return str(tracking_store().get_run(run_id).info.status)  # MLflow's "not found"
    return str(found[0][0])


def _stored_answer(experiment: str, run_id: str) -> bytes | None:
    """The submission's ``answer.json`` as stored by the artifact proxy, or ``None``."""

    repo = artifact_repo()
    folder = f"{experiment}/{run_id}/artifacts"
    if ANSWER_FILE not in {Path(f.path).name for f in repo.list_artifacts(folder) or []}:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        local = repo.download_artifacts(f"{folder}/{ANSWER_FILE}", tmp)
        return Path(local).read_bytes()


def _upload_answer(experiment: str, run_id: str) -> Response | None:
    """``answer.json`` into a RUNNING submission that has none yet, of a bounded size."""
    from flask import request

    path = artifact_path()
    if (path or "").strip("/") != f"{experiment}/{run_id}/artifacts/{ANSWER_FILE}":
        return forbidden(f"a submission holds one file, {ANSWER_FILE}, at its root")
    # a length said to be over the limit is refused before the body; the bytes themselves are
    # counted as they arrive (`attention_ref.classroom.gate.uploads`), whatever was said
    size = request.content_length
    if size is not None and size > MAX_ANSWER_BYTES:
        return forbidden(f"an answer is at most {MAX_ANSWER_BYTES} bytes")
    if run_status(run_id) != "RUNNING":
        return forbidden(f"submission {run_id} is finished: it is final (submit again)")
    if _stored_answer(experiment, run_id) is not None:
        return forbidden(f"submission {run_id} has its {ANSWER_FILE} already")
    return None


def _end_submission(experiment: str, run_id: str, tags: dict[str, str]) -> Response | None:
    """End a RUNNING submission: FINISHED (with its answer: its hash and the time received
    recorded by the server, within the assignment's `Policy`: its cut-off, its attempts), FAILED or
    KILLED; ``end_time`` on the server's clock."""
    from flask import request

    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict) or set(body) - {"run_id", "run_uuid", "status", "end_time"}:
        return forbidden("a submission's run is only ended (status and end_time)")
    status = body.get("status")
    if status not in _TERMINAL:
        return forbidden(f"a submission is ended {', '.join(_TERMINAL)}, not {status!r}")
    if run_status(run_id) != "RUNNING":
        return forbidden(f"submission {run_id} is ended already: it is final (submit again)")
    now = now_ms()
    body["end_time"] = now
    if status == "FINISHED":
        policy = Policy.from_json(tags.get(POLICY_TAG, ""))
        if policy.after_cutoff(from_ms(now)):
            return closed(
                f"the cut-off for this assignment, {cutoff_at(policy, tags)}, has passed by "
                "the server's clock: no submission is received after it"
            )
        try:
            with contextlib.ExitStack() as held:
                if policy.attempts is not None:  # one finish at a time per student: a count
                    held.enter_context(uploads.run_lock(_attempts_key(experiment)))
                held.enter_context(uploads.run_lock(run_id))
                refused = _finish(experiment, run_id, now, tags, policy)
        except uploads.AnswerRefusedError as e:
            return unavailable(e.message) if e.status == 503 else forbidden(e.message)
        if refused is not None:
            return refused
    if request.get_json(force=True, silent=True) is not body:
        return forbidden("the server could not stamp the submission's end time")
    return None


def cutoff_at(policy: Policy, tags: dict[str, str]) -> str:
    """The cut-off as the student reads it: in the class's zone the experiment carries."""
    assert policy.cutoff is not None
    try:
        zone = checked_zone(tags.get(ZONE_TAG) or UTC_NAME)
    except ValueError:  # a tag only teachers write; UTC rather than no refusal
        zone = UTC_NAME
    return shown(policy.cutoff, zone, seconds=True)


def _attempts_key(experiment: str) -> str:
    """The lock of a student's attempts count (a run id's form: `uploads.run_lock`)."""
    return hashlib.sha256(f"attnref attempts {experiment}".encode()).hexdigest()[:32]


def _attempt_of(
    experiment: str, answer: bytes, tags: dict[str, str], policy: Policy
) -> tuple[str | None, Response | None]:
    """Under an attempts limit: the exercise the answer names (its tag), or the refusal (an
    answer that names none of the student's exercises, or one attempt too many)."""
    from mlflow.entities import ViewType

    from attention_ref.exercises.answer import read_answer_text

    try:  # the answer read as the grader reads it (`attention_ref.classroom.exchange.answers`)
        assignment = Assignment.from_tags(tags)
        doc = read_answer_text(answer.decode("utf-8"))
    except (AssignmentError, ValueError):
        doc, assignment = None, None
    try:  # the student's own seeds: their experiment's copy carries no salt
        mine = assignment.student_exercises(tags) if assignment is not None else None
    except AssignmentError:
        mine = None
    k = matching_exercise(doc, mine) if mine is not None else None
    if k is None:
        return None, forbidden(
            "this assignment limits the attempts per exercise, and this answer names none of "
            "your exercises (attnref check says why)"
        )
    found = tracking_store().search_runs(
        [experiment],
        f"tags.`{EXERCISE_TAG}` = '{k}' and attributes.status = 'FINISHED'",
        ViewType.ACTIVE_ONLY,
        max_results=MAX_ATTEMPTS + 1,
    )
    if len(found) >= (policy.attempts or 0):
        n = policy.attempts
        return None, closed(
            f"you have used your {n} attempt{'s' if n != 1 else ''} at exercise {k} of this "
            "assignment: the latest you submitted counts"
        )
    return str(k), None


def _finish(
    experiment: str, run_id: str, now: int, tags: dict[str, str], policy: Policy
) -> Response | None:
    """Holding the run's lock: record the answer's hash and the time received, and set the run
    FINISHED (MLflow's handler then writes the same status and end time again), so that no
    upload can land after the hash was taken (`attention_ref.classroom.gate.uploads`). Under an
    attempts limit (holding the student's attempts lock too) the exercise answered is
    recorded, and an attempt past the limit refused."""
    from mlflow.entities import RunStatus, RunTag

    if run_status(run_id) != "RUNNING":
        return forbidden(f"submission {run_id} is ended already: it is final (submit again)")
    answer = _stored_answer(experiment, run_id)
    if answer is None:
        return forbidden(f"a submission is FINISHED with its {ANSWER_FILE}: upload it first")
    store = tracking_store()
    stamps = [
        RunTag(ANSWER_SHA_TAG, hashlib.sha256(answer).hexdigest()),
        RunTag(RECEIVED_TAG, iso_ms(from_ms(now))),
    ]
    if policy.attempts is not None:
        k, refused = _attempt_of(experiment, answer, tags, policy)
        if refused is not None:
            return refused
        stamps.append(RunTag(EXERCISE_TAG, str(k)))
    store.log_batch(run_id, metrics=[], params=[], tags=stamps)
    store.update_run_info(run_id, RunStatus.from_string("FINISHED"), now, None)
    return None
