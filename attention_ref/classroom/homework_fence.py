"""The class server's gate, the homework fence: what a student may write in a submission.

No student writes a tag, parameter or metric of the homework's or the grades' namespaces, on
any run. In a student's submissions experiment a run holds one ``answer.json``: uploaded once
while the run is RUNNING, then the run is ended; FINISHED needs the answer, whose SHA-256
and time received (the server's clock) the gate records (`_finish`); a finished run is final.
Step 4 of `attention_ref.classroom.auth` (its docstring says the whole rule).
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from attention_ref.classroom import uploads
from attention_ref.classroom.access import Access
from attention_ref.classroom.assignment import (
    ANSWER_FILE,
    ANSWER_SHA_TAG,
    RECEIVED_TAG,
    RESERVED,
    ROLE_TAG,
    STUDENT_TAG,
    SUBMISSIONS,
    from_ms,
    iso_ms,
)
from attention_ref.classroom.ownership import (
    _ARTIFACT_ROUTE,
    _MODEL_ARTIFACTS,
    _MODEL_ROUTE,
    _RUN_ARTIFACTS,
    _model_source,
    _now_ms,
    _run,
    _values,
)
from attention_ref.classroom.refusals import _forbidden, _unavailable

if TYPE_CHECKING:
    from flask import Response

MAX_ANSWER_BYTES = uploads.MAX_ANSWER_BYTES
_TERMINAL = ("FINISHED", "FAILED", "KILLED")
_UPDATE = "POST /mlflow/runs/update"
_UPLOAD = "PUT /mlflow-artifacts/artifacts/{artifact_path:path}"


def _written_keys() -> list[str]:
    """Every tag, parameter and metric key a request writes (any route that writes some)."""
    from flask import request

    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict):
        return []
    keys = [str(body["key"])] if "key" in body else []
    for name in ("tags", "params", "metrics"):
        items = body.get(name)
        if isinstance(items, list):
            keys += [str(t.get("key")) for t in items if isinstance(t, dict)]
    return keys


def _experiment_tags(experiment_id: str) -> dict[str, str]:
    """An experiment's tags, or ``{}`` when there is no such experiment: read from the store at
    every request, never cached (an experiment made later under an id a student named before
    it existed is the homework it is; a teacher's change of a tag counts at once)."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST, ErrorCode
    from mlflow.server.handlers import _get_tracking_store

    try:
        return dict(_get_tracking_store().get_experiment(experiment_id).tags)
    except MlflowException as e:
        if e.error_code in (ErrorCode.Name(RESOURCE_DOES_NOT_EXIST), "INVALID_PARAMETER_VALUE"):
            return {}
        raise


def _experiment_of(access: Access) -> tuple[str | None, str | None]:
    """``(experiment id, run id)`` a student's write names (``None`` where it names none)."""
    from flask import request

    if access is Access.CREATE_RUN:
        ids = _values("experiment_id")
        return (ids[0] if ids else None), None
    if access is Access.OWN_ARTIFACT:
        path = (request.view_args or {}).get("artifact_path")
        if path is None and (m := _ARTIFACT_ROUTE.search(request.path)):
            path = m.group(1)
        m = _RUN_ARTIFACTS.match(path or "") or _MODEL_ARTIFACTS.match(path or "")
        run = m.group(2) if m and not m.group(2).startswith("m-") else None
        return (m.group(1) if m else None), run
    if access in (Access.CREATE_MODEL, Access.OWN_MODEL):
        runs = _values("source_run_id")
        if not runs:
            models = _values("model_id")
            if not models and (m := _MODEL_ROUTE.search(request.path)):
                models = [m.group(1)]
            found = _model_source(models[0]) if models else None
            runs = [found[0]] if found and found[0] else []
    else:
        runs = _values("run_id") + _values("run_uuid")
    owned = _run(runs[0]) if runs else None
    return (owned[1] if owned else None), (runs[0] if runs else None)


def _homework_fence(username: str, access: Access, key: str) -> Response | None:
    """A student's write, against the homework's rules (`attention_ref.classroom.auth`, item 4)."""
    if access is not Access.OWN_ARTIFACT and (
        bad := [k for k in _written_keys() if k.startswith(RESERVED)]
    ):
        return _forbidden(f"{bad[0]!r} is the teacher's and the server's to write (homework "
                          "and grades); a student's run may not carry it")  # fmt: skip
    if access not in (Access.CREATE_RUN, Access.OWN_RUN, Access.OWN_ARTIFACT,
                      Access.CREATE_MODEL, Access.OWN_MODEL):  # fmt: skip
        return None
    experiment, run_id = _experiment_of(access)
    tags = _experiment_tags(experiment) if experiment else {}
    if tags.get(ROLE_TAG) != SUBMISSIONS:
        return None
    if tags.get(STUDENT_TAG) != username:
        return _forbidden(f"experiment {experiment} holds {tags.get(STUDENT_TAG)!r}'s homework")
    if access is Access.CREATE_RUN:
        return None
    if key == _UPDATE and run_id:
        return _end_submission(experiment, run_id)  # type: ignore[arg-type]
    if key == _UPLOAD and run_id:
        return _upload_answer(experiment, run_id)  # type: ignore[arg-type]
    return _forbidden(
        f"a submission holds its {ANSWER_FILE} and nothing else ({key} refused); submit with "
        "attnref homework submit"
    )


def _status(run_id: str) -> str:
    from mlflow.server.handlers import _get_tracking_store

    return str(_get_tracking_store().get_run(run_id).info.status)


def _stored_answer(experiment: str, run_id: str) -> bytes | None:
    """The submission's ``answer.json`` as stored by the artifact proxy, or ``None``."""
    from mlflow.server.handlers import _get_artifact_repo_mlflow_artifacts

    repo = _get_artifact_repo_mlflow_artifacts()
    folder = f"{experiment}/{run_id}/artifacts"
    if ANSWER_FILE not in {Path(f.path).name for f in repo.list_artifacts(folder) or []}:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        local = repo.download_artifacts(f"{folder}/{ANSWER_FILE}", tmp)
        return Path(local).read_bytes()


def _upload_answer(experiment: str, run_id: str) -> Response | None:
    """``answer.json`` into a RUNNING submission that has none yet, of a bounded size."""
    from flask import request

    path = (request.view_args or {}).get("artifact_path")
    if path is None and (m := _ARTIFACT_ROUTE.search(request.path)):
        path = m.group(1)
    if (path or "").strip("/") != f"{experiment}/{run_id}/artifacts/{ANSWER_FILE}":
        return _forbidden(f"a submission holds one file, {ANSWER_FILE}, at its root")
    # a length said to be over the limit is refused before the body; the bytes themselves are
    # counted as they arrive (`attention_ref.classroom.uploads`), whatever was said
    size = request.content_length
    if size is not None and size > MAX_ANSWER_BYTES:
        return _forbidden(f"an answer is at most {MAX_ANSWER_BYTES} bytes")
    if _status(run_id) != "RUNNING":
        return _forbidden(f"submission {run_id} is finished: it is final (submit again)")
    if _stored_answer(experiment, run_id) is not None:
        return _forbidden(f"submission {run_id} has its {ANSWER_FILE} already")
    return None


def _end_submission(experiment: str, run_id: str) -> Response | None:
    """End a RUNNING submission: FINISHED (with its answer: its hash and the time received
    recorded by the server), FAILED or KILLED; ``end_time`` on the server's clock."""
    from flask import request

    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict) or set(body) - {"run_id", "run_uuid", "status", "end_time"}:
        return _forbidden("a submission's run is only ended (status and end_time)")
    status = body.get("status")
    if status not in _TERMINAL:
        return _forbidden(f"a submission is ended {', '.join(_TERMINAL)}, not {status!r}")
    if _status(run_id) != "RUNNING":
        return _forbidden(f"submission {run_id} is ended already: it is final (submit again)")
    now = _now_ms()
    body["end_time"] = now
    if status == "FINISHED":
        try:
            with uploads.run_lock(run_id):
                refused = _finish(experiment, run_id, now)
        except uploads.AnswerRefusedError as e:
            return _unavailable(e.message) if e.status == 503 else _forbidden(e.message)
        if refused is not None:
            return refused
    if request.get_json(force=True, silent=True) is not body:
        return _forbidden("the server could not stamp the submission's end time")
    return None


def _finish(experiment: str, run_id: str, now: int) -> Response | None:
    """Holding the run's lock: record the answer's hash and the time received, and set the run
    FINISHED (MLflow's handler then writes the same status and end time again), so that no
    upload can land after the hash was taken (`attention_ref.classroom.uploads`)."""
    from mlflow.entities import RunStatus, RunTag
    from mlflow.server.handlers import _get_tracking_store

    if _status(run_id) != "RUNNING":
        return _forbidden(f"submission {run_id} is ended already: it is final (submit again)")
    answer = _stored_answer(experiment, run_id)
    if answer is None:
        return _forbidden(f"a submission is FINISHED with its {ANSWER_FILE}: upload it first")
    store = _get_tracking_store()
    store.set_tag(run_id, RunTag(ANSWER_SHA_TAG, hashlib.sha256(answer).hexdigest()))
    store.set_tag(run_id, RunTag(RECEIVED_TAG, iso_ms(from_ms(now))))
    store.update_run_info(run_id, RunStatus.from_string("FINISHED"), now, None)
    return None
