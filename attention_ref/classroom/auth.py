"""The class server's gate: basic auth, then the access table, inside ``mlflow server``.

MLflow's basic-auth app asks one function who sent a request (``authorization_function`` in
its configuration file; ``attnref server`` points it at `authenticate`). It gets the answer
on every request it protects, Flask's and the native FastAPI routes' alike, before its own
per-resource checks. Here that answer is:

1. **Who**: MLflow's password check (its cache included). A request without an account, or
   with a wrong password, gets 401. When the accounts' database cannot answer (PostgreSQL
   restarting), 503 instead: clients retry a 503; a 401 would end a training.
2. **May they**: the route's rule in `attention_ref.classroom.access` and the sender's role
   give a `Verdict`. A route without a rule is refused to everyone (403).
3. **Is it theirs**: for the rules a student passes only for their own things, the run,
   logged model, artifact folder or account the request names must be the sender's. A run's
   owner is its ``user_id``, which the server sets itself when the run is created (the
   request's ``user_id`` and ``mlflow.user`` tag are replaced by the account's name, so no
   one can create a run in another's name, and only an admin changes ``mlflow.user``), with
   its ``start_time`` on the server's clock.
4. **Homework** (`attention_ref.classroom.assignment`): no student writes a tag, parameter
   or metric of the ``attnref.homework.`` or ``attnref.grade.`` namespaces, on any run. In a
   student's submissions experiment, a run holds one thing, its ``answer.json``: a student
   creates a run there (only in their own), uploads ``answer.json`` once while the run is
   RUNNING, and ends the run; nothing else (no tag, metric, parameter, model or other file).
   Ending it FINISHED needs the answer: the gate then records the answer's SHA-256 and the
   time received (the server's clock) in the run's tags and stamps ``end_time`` with the
   same clock. A finished run is final (no upload, no status change): a new attempt is a new
   run. So the time that decides lateness is the server's, and the answer graded is the one
   that was there when the student finished (the grader compares the hash).

MLflow's own checks run after this one (a student's EDIT grant on the class experiment, a
registered model's creator): the table is a ceiling, never a widening. MLflow imports this
module in the server's workers; nothing here runs in a training process.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import time
from collections.abc import Callable
from contextvars import ContextVar
from functools import wraps
from pathlib import Path
from threading import Lock
from typing import TYPE_CHECKING, Any, TypeVar

from attention_ref.classroom import admission, uploads
from attention_ref.classroom.access import Access, Role, Verdict, access_of, verdict
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
from attention_ref.classroom.bodies import malformed

if TYPE_CHECKING:
    from flask import Response
    from werkzeug.datastructures import Authorization

#: where the artifact proxy keeps a run's and a logged model's files (``--artifacts-destination``)
_RUN_ARTIFACTS = re.compile(r"^/?([^/]+)/(?!models/)([0-9a-f]{32})(?:/|$)")
_MODEL_ARTIFACTS = re.compile(r"^/?([^/]+)/models/(m-[0-9a-f]+)(?:/|$)")
_ARTIFACT_ROUTE = re.compile(r"/mlflow-artifacts/(?:artifacts|mpu/(?:create|complete|abort))/(.*)$")
_MODEL_ROUTE = re.compile(r"/mlflow/logged-models/(m-[0-9a-f]+)")
#: the run tag that names its owner in MLflow's UI: set by the server, changed by no student
OWNER_TAG = "mlflow.user"
_ANSWER = "attnref_class_auth"
#: the prefix of this gate's refusals (MLflow's own say "Permission denied")
REFUSAL = "class server: "


def authenticate() -> Authorization | Response:
    """The sender's credentials, or the 401/403/503 response that refuses the request.

    MLflow asks several times per request; the answer is computed once (kept in ``flask.g``).
    """
    from flask import g

    _guard_the_fastapi_bridge()
    uploads.install(_experiment_tags, _status)
    answer = g.get(_ANSWER)
    if answer is None:
        answer = _admitted() or _answer()
        setattr(g, _ANSWER, answer)
    return answer


_ADMISSION: list[admission.Admission] = []  # the worker's, made at its first request
_BRIDGED: ContextVar[bool] = ContextVar("attnref_bridged", default=False)


def _admitted() -> Response | None:
    """``None`` when the worker takes the request on (and counts it until it is answered);
    else the 503 that tells the client to come back (`attention_ref.classroom.admission`).
    The FastAPI routes' copy of a request is counted by none (it has no end here)."""
    from flask import after_this_request, make_response

    if _BRIDGED.get():
        return None
    if not _ADMISSION:
        _ADMISSION.append(admission.from_environment())
    gate = _ADMISSION[0]
    if not gate.enter():
        busy = make_response(
            {"error_code": "TEMPORARILY_UNAVAILABLE",
             "message": REFUSAL + "busy: too many requests at once; try again"}, 503,
        )  # fmt: skip
        busy.headers["Retry-After"] = str(gate.retry_after())
        return busy

    @after_this_request
    def answered(response: Response) -> Response:
        gate.leave()
        return response

    return None


def _answer() -> Any:
    from flask import request
    from mlflow.server import auth as basic

    sent = request.authorization
    if sent is None or not sent.username:
        return basic.make_basic_auth_response()
    user = basic._authenticate_cached(sent.username, sent.password or "")
    if user is None:
        from mlflow.server.auth.entities import User

        user = _second_look(sent.username, sent.password or "")
        if not isinstance(user, User):
            return user
    role = role_of(user.username, user.is_admin, basic.auth_config.admin_username)
    rule = request.url_rule.rule if request.url_rule is not None else None
    key, access = access_of(request.method, request.path, rule)
    if access is not None and (why := malformed(request, key or "")):
        return _bad_request(why)
    if role is Role.STUDENT:
        from flask import after_this_request

        after_this_request(_absent_as_forbidden)
    decided = verdict(role, access)
    if decided is Verdict.FORBIDDEN:
        what = f"{request.method} {request.path}"
        if access is None:
            return _forbidden(f"{what} has no rule in the access table; refused to everyone")
        return _forbidden(f"{what} ({key}) is the teacher's; {user.username!r} is a student")
    if access is Access.CREATE_RUN:
        refused = _stamp_owner(user.username)
        if refused is not None:
            return refused
    if decided is Verdict.IF_OWNER:
        check = _OWNERSHIP[access]  # type: ignore[index]
        refused = check(user.username)
        if refused is not None:
            return refused
    if role is Role.STUDENT and access is not None:
        refused = _homework_fence(user.username, access, key or "") or _no_prompts(access)
        if refused is not None:
            return refused
    if key == "GET /" and not request.query_string and (landing := _landing()) is not None:
        return landing
    return sent


#: the query that marks the UI's root as already sent to the class's runs (no second redirect)
LANDED = "class"


def _landing() -> Response | None:
    """The UI's root, for anyone who may enter: a page that sends the browser on to the class
    experiment's runs (MLflow 3 opens its GenAI home otherwise), or to the page its link names
    after the ``#`` (which a server never sees: a link to any other experiment keeps working);
    ``None`` when no class experiment is known."""
    import json
    import os

    from flask import make_response
    from mlflow.server.handlers import _get_tracking_store

    from attention_ref.experiments.names import UI_RUNS_QUERY

    name = os.environ.get("ATTNREF_CLASS_EXPERIMENT")
    if not name:
        return None
    try:
        found = _get_tracking_store().get_experiment_by_name(name)
    except Exception:  # the store is down: the UI's own root, as MLflow serves it
        return None
    if found is None:
        return None
    runs = f"#/experiments/{found.experiment_id}?{UI_RUNS_QUERY}"
    page = (
        '<!doctype html><html><head><meta charset="utf-8"><title>class server</title>'
        f"<script>location.replace({json.dumps('/?' + LANDED)} + (location.hash || "
        f"{json.dumps(runs)}));</script></head><body>"
        f'<a href="/?{LANDED}{runs}">the class\'s runs</a></body></html>'
    )
    response = make_response(page, 200)
    response.headers["Content-Type"] = "text/html; charset=utf-8"
    response.headers["Cache-Control"] = "no-store"
    return response


def role_of(username: str, is_admin: bool, admin_username: str) -> Role:
    """MLflow's admin account is the admin; any other admin account a teacher; the rest students."""
    if username == admin_username:
        return Role.ADMIN
    return Role.TEACHER if is_admin else Role.STUDENT


_UNAVAILABLE = {
    "error_code": "TEMPORARILY_UNAVAILABLE",
    "message": "the class server's accounts are unavailable for a moment; try again",
}


def _look_again(username: str, password: str) -> Any:
    """One more read of the account: the account if the password is right, else why not.

    MLflow's password check answers "no" both for a wrong password and for a database that
    could not be read. This read tells them apart, and it decides alone: the store may have
    come back between the two reads (PostgreSQL restarting), so an account that is found has
    its password checked here against the hash just read. Returns the `User`, ``"unknown"``
    (no such account, or a wrong password: 401) or ``"unavailable"`` (the store is down: 503).
    """
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST, ErrorCode
    from mlflow.server import auth as basic
    from werkzeug.security import check_password_hash

    try:
        user = basic.store.get_user(username)
    except MlflowException as e:
        gone = e.error_code == ErrorCode.Name(RESOURCE_DOES_NOT_EXIST)
        return "unknown" if gone else "unavailable"
    except Exception:  # a driver error MLflow did not wrap: the store is down all the same
        return "unavailable"
    if not check_password_hash(user.password_hash, password):
        return "unknown"
    if basic._is_disabled_legacy_admin_login(username, password, user):
        return "unknown"
    return user


def _second_look(username: str, password: str) -> Any:
    """After MLflow's check said no: the account (the store came back), or the 401/503 response."""
    from flask import make_response
    from mlflow.server import auth as basic

    found = _look_again(username, password)
    if found == "unavailable":
        return make_response(_UNAVAILABLE, 503)
    if found == "unknown":
        return basic.make_basic_auth_response()
    return found


def _guard_the_fastapi_bridge() -> None:
    """Make MLflow's FastAPI routes answer 503, not 401, when the accounts' store is down.

    MLflow serves some routes (the artifact upload among them: a training's sample at each
    evaluation) from its FastAPI app, whose middleware calls this gate and then reads the
    account once more, turning any error of that read into "not authenticated": 401, which
    ends a training, where a 503 is retried. The bridge it calls is wrapped here: when it
    finds no account although the request carries credentials, the account is read again
    (`_look_again`): the account if the store is back and the password right, 503 if the store
    is still down, 401 otherwise. Installed by the first request a worker's gate sees.
    """
    from mlflow.server import auth as basic

    bridge = basic._authenticate_custom_for_fastapi
    if getattr(bridge, "attnref_guard", False):
        return

    def guarded(request: Any) -> Any:
        token = _BRIDGED.set(True)
        try:
            found = bridge(request)
        finally:
            _BRIDGED.reset(token)
        if found is not None:
            return found
        sent = _basic_credentials(request.headers.get("authorization", ""))
        if sent is None:
            return None
        again = _look_again(*sent)
        if again == "unknown":
            return None
        if again == "unavailable":
            from fastapi.responses import JSONResponse

            return JSONResponse(status_code=503, content=_UNAVAILABLE)
        return again

    guarded.attnref_guard = True  # type: ignore[attr-defined]
    basic._authenticate_custom_for_fastapi = guarded


def _basic_credentials(header: str) -> tuple[str, str] | None:
    """``(username, password)`` of an ``Authorization: Basic …`` header, or None."""
    import base64
    import binascii

    scheme, _, token = header.partition(" ")
    if scheme.lower() != "basic" or not token:
        return None
    try:
        username, sep, password = base64.b64decode(token, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (username, password) if sep and username else None


def _forbidden(message: str) -> Response:
    from flask import make_response

    return make_response({"error_code": "PERMISSION_DENIED", "message": REFUSAL + message}, 403)


def _bad_request(message: str) -> Response:
    from flask import make_response

    return make_response({"error_code": "BAD_REQUEST", "message": REFUSAL + message}, 400)


#: a student's one answer for what does not exist and for what they may not see
HIDDEN = "it does not exist, or it is not yours to see"


def _hidden() -> Response:
    """The same 403 and body for a thing that is absent and one that is another's."""
    return _forbidden(HIDDEN)


def _absent_as_forbidden(response: Response) -> Response:
    """After MLflow answered a student: "not found" and MLflow's own "permission denied" become
    one answer (`_hidden`), so that no name or id tells a classmate's thing from none."""
    if response.status_code == 404 or (
        response.status_code == 403 and response.get_data() == b"Permission denied"
    ):
        return _hidden()
    return response


#: the tags that make a registered model a prompt (MLflow's prompt registry)
_PROMPT_TAGS = ("mlflow.prompt.",)


def _no_prompts(access: Access) -> Response | None:
    """A student registers models (``attnref train --register``), never prompts: a class has
    no prompt registry, and a prompt's tags on a registered model are refused."""
    if access is not Access.REGISTRY:
        return None
    from flask import request

    names = [str(k) for k in _written_keys()]
    body = request.get_json(force=True, silent=True)
    if isinstance(body, dict) and isinstance(body.get("tags"), dict):
        names += [str(k) for k in body["tags"]]
    if bad := [k for k in names if k.startswith(_PROMPT_TAGS)]:
        return _forbidden(f"{bad[0]!r} makes a prompt; the class server keeps no prompts")
    return None


# -------------------------------------------------------------------- what the request names


def _values(name: str) -> list[str]:
    """Every value of ``name`` the request carries: JSON body, query string, path."""
    from flask import request

    found = []
    # parsed as MLflow's handlers parse it (whatever the Content-Type says)
    body = request.get_json(force=True, silent=True)
    for source in (body if isinstance(body, dict) else {}, request.args, request.view_args or {}):
        value = source.get(name)
        if value is not None:
            found.append(str(value))
    return found


def _tag_keys() -> list[str]:
    """The tag keys a run write sets or deletes (``set-tag``, ``delete-tag``, ``log-batch``)."""
    from flask import request

    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict):
        return []
    keys = [str(body["key"])] if "key" in body else []
    tags = body.get("tags")
    if isinstance(tags, list):
        keys += [str(t.get("key")) for t in tags if isinstance(t, dict)]
    return keys


_T = TypeVar("_T")


def found_once(maxsize: int) -> Callable[[Callable[[str], _T | None]], Callable[[str], _T | None]]:
    """Cache what a look-up *found*, never that it found nothing.

    The gate's only caches: facts fixed when the thing is created (a run's owner and
    experiment, a logged model's source run), keyed by ids the server draws at random. A
    "not found" is not cached: a request naming an id before it exists would otherwise decide
    for the thing made later under that id. Oldest entries go first past ``maxsize``.
    """

    def wrap(look_up: Callable[[str], _T | None]) -> Callable[[str], _T | None]:
        kept: dict[str, _T] = {}
        lock = Lock()

        @wraps(look_up)
        def cached(key: str) -> _T | None:
            with lock:
                if key in kept:
                    return kept[key]
            value = look_up(key)
            if value is not None:
                with lock:
                    kept[key] = value
                    while len(kept) > maxsize:
                        del kept[next(iter(kept))]
            return value

        cached.cache_clear = kept.clear  # type: ignore[attr-defined]
        return cached

    return wrap


@found_once(maxsize=4096)
def _run(run_id: str) -> tuple[str, str] | None:
    """``(owner, experiment id)`` of a run (both fixed at its creation), or ``None``."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST, ErrorCode
    from mlflow.server.handlers import _get_tracking_store

    try:
        info = _get_tracking_store().get_run(run_id).info
    except MlflowException as e:
        if e.error_code in (ErrorCode.Name(RESOURCE_DOES_NOT_EXIST), "INVALID_PARAMETER_VALUE"):
            return None
        raise  # the store is down: MLflow answers 503, the client retries
    return str(info.user_id), str(info.experiment_id)


@found_once(maxsize=4096)
def _model_source(model_id: str) -> tuple[str | None] | None:
    """``(source run id,)`` of a logged model (fixed at its creation), or ``None``: no model."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST, ErrorCode
    from mlflow.server.handlers import _get_tracking_store

    try:
        model = _get_tracking_store().get_logged_model(model_id)
    except MlflowException as e:
        if e.error_code in (ErrorCode.Name(RESOURCE_DOES_NOT_EXIST), "INVALID_PARAMETER_VALUE"):
            return None
        raise
    return (model.source_run_id or None,)


def _may_read(experiment_id: str, username: str) -> bool:
    """Whether MLflow lets ``username`` read the experiment (its per-experiment grants)."""
    from mlflow.server import auth as basic

    try:
        return bool(basic._get_experiment_permission(experiment_id, username).can_read)
    except Exception:  # no such experiment, or the store could not say: not readable
        return False


def _owns_run(username: str, run_id: str, experiment_id: str | None = None) -> Response | None:
    """``None`` when the run is ``username``'s (in ``experiment_id``, when given); else the
    refusal: `_hidden` for a run that does not exist or that they may not read."""
    found = _run(run_id)
    if found is None:
        return _hidden()
    owner, experiment = found
    if owner != username:
        if not _may_read(experiment, username):
            return _hidden()
        return _forbidden(
            f"run {run_id} belongs to {owner!r}; {username!r} may read it, not change it"
        )
    if experiment_id is not None and experiment_id != experiment:
        return _forbidden(f"run {run_id} is in experiment {experiment}, not {experiment_id}")
    return None


def _owns_model(username: str, model_id: str, experiment_id: str | None = None) -> Response | None:
    found = _model_source(model_id)
    if found is None:
        return _hidden()
    (run_id,) = found
    if run_id is None:
        return _forbidden(f"logged model {model_id} has no source run; only a teacher changes it")
    return _owns_run(username, run_id, experiment_id)


# ------------------------------------------------------------------ the checks, by Access


def _check_run(username: str) -> Response | None:
    ids = _values("run_id") + _values("run_uuid")  # MLflow reads one or the other
    if not ids:
        return _forbidden("the request names no run")
    for run_id in ids:
        if refused := _owns_run(username, run_id):
            return refused
    if OWNER_TAG in _tag_keys():
        return _forbidden(f"the tag {OWNER_TAG} names a run's owner; only a teacher changes it")
    return None


def _check_new_model(username: str) -> Response | None:
    runs = _values("source_run_id")
    if not runs:
        return _forbidden("a student's logged model comes from their own run (source_run_id)")
    for run_id in runs:
        if refused := _owns_run(username, run_id):
            return refused
    return None


def _check_model(username: str) -> Response | None:
    from flask import request

    ids = _values("model_id")
    if not ids and (m := _MODEL_ROUTE.search(request.path)):
        ids = [m.group(1)]
    if not ids:
        return _forbidden("the request names no logged model")
    for model_id in ids:
        if refused := _owns_model(username, model_id):
            return refused
    return None


def _check_artifact(username: str) -> Response | None:
    from flask import request

    # the path only: an upload's body is the file (never parsed here)
    path = (request.view_args or {}).get("artifact_path")
    if path is None and (m := _ARTIFACT_ROUTE.search(request.path)):
        path = m.group(1)
    if not path:
        return _forbidden("the request names no artifact path")
    if m := _RUN_ARTIFACTS.match(path):
        return _owns_run(username, m.group(2), m.group(1))
    if m := _MODEL_ARTIFACTS.match(path):
        return _owns_model(username, m.group(2), m.group(1))
    return _forbidden(f"{path!r} is not a run's or a logged model's folder")


def _check_self(username: str) -> Response | None:
    names = _values("username")
    if not names:
        return _forbidden("the request names no account")
    for name in names:
        if name != username:
            return _forbidden(f"account {name!r} is not {username!r}'s")
    return None


_OWNERSHIP = {
    Access.OWN_RUN: _check_run,
    Access.CREATE_MODEL: _check_new_model,
    Access.OWN_MODEL: _check_model,
    Access.OWN_ARTIFACT: _check_artifact,
    Access.SELF: _check_self,
}


def _now_ms() -> int:
    return int(time.time() * 1000)


def _stamp_owner(username: str) -> Response | None:
    """Set the new run's ``user_id`` and ``mlflow.user`` tag to ``username`` in the request,
    and its ``start_time`` to the server's clock."""
    from flask import request

    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict):
        return None  # not a run to create: MLflow rejects it
    body["user_id"] = username
    body["start_time"] = _now_ms()
    tags = [t for t in body.get("tags") or [] if isinstance(t, dict)]
    body["tags"] = [t for t in tags if t.get("key") != OWNER_TAG]
    body["tags"].append({"key": OWNER_TAG, "value": username})
    # MLflow's handler reads the same cached object; if it would not, refuse rather than let
    # the client's own user_id through
    if request.get_json(force=True, silent=True) is not body:
        return _forbidden("the server could not record the run's owner")
    return None


# ------------------------------------------------------------------------------- homework

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
    """A student's write, against the homework's rules (the module docstring's item 4)."""
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


def _unavailable(message: str) -> Response:
    from flask import make_response

    return make_response({"error_code": "TEMPORARILY_UNAVAILABLE", "message": message}, 503)


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
