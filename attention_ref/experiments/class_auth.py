"""Run ownership on the class server: a student edits their own runs, never another's.

MLflow's basic-auth app grants permissions per experiment: whoever may edit the class
experiment may edit every run in it. A class needs one experiment (the teacher compares
everyone's runs side by side) and runs that belong to the student who made them, so the
class server adds one rule on top of basic auth, through the hook basic auth offers for it
(``authorization_function`` in its configuration file):

* ``CreateRun`` by a student is stamped with the authenticated name: the request's
  ``user_id`` and its ``mlflow.user`` tag are set to it before MLflow stores the run, so a
  run's ``user_id`` names the account that created it (a client cannot claim another's).
* Every request that writes to a run (params, metrics, tags, status, delete/restore, inputs,
  outputs, artifact uploads and deletes through the proxy) and every write to a logged model
  (through its source run) is refused with 403 unless the run's ``user_id`` is the sender.
* Admins are not restricted. Everything else is decided by basic auth as usual (the
  experiment permissions: students READ everything, EDIT the class experiment).

MLflow imports this module inside the server's workers (``attnref server`` writes the
configuration); nothing here runs in a training process.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Response
    from werkzeug.datastructures import Authorization

#: where the artifact proxy keeps a run's and a logged model's files (``--artifacts-destination``)
_RUN_ARTIFACTS = re.compile(r"^/?[^/]+/(?!models/)([0-9a-f]{32})(?:/|$)")
_MODEL_ARTIFACTS = re.compile(r"^/?[^/]+/models/(m-[0-9a-f]+)(?:/|$)")
_MODEL_ROUTE = re.compile(r"/mlflow/logged-models/(m-[0-9a-f]+)")
_ANSWER = "attnref_class_auth"


def authenticate() -> Authorization | Response:
    """Basic auth, then the ownership rule; a 401/403 response, or the sender's credentials.

    MLflow asks several times per request (its validators ask again who the sender is); the
    answer is computed once per request (in ``flask.g``): a password hash is checked once.
    """
    from flask import g
    from mlflow.server.auth import authenticate_request_basic_auth

    answer = g.get(_ANSWER)
    if answer is None:
        answer = authenticate_request_basic_auth()
        if hasattr(answer, "username"):  # not a 401 response
            verdict = _verdict(str(answer.username))
            answer = answer if verdict is True else verdict
        setattr(g, _ANSWER, answer)
    return answer


def _forbidden(message: str) -> Response:
    from flask import make_response

    return make_response({"error_code": "PERMISSION_DENIED", "message": message}, 403)


def _verdict(username: str) -> Any:
    """``True``, or the 403 response that refuses this request to ``username``."""
    from flask import request
    from mlflow.exceptions import MlflowException
    from mlflow.server import auth as basic

    if basic.store.get_user(username).is_admin:
        return True
    validator = basic._find_validator(request)
    if validator is basic.validate_can_create_run:
        return _stamp_owner(username)
    run_writes = {
        basic.validate_can_update_run, basic.validate_can_delete_run,
        basic.validate_can_manage_run, basic.validate_can_log_metric,
        basic.validate_can_log_batch, basic.validate_can_log_inputs,
        basic.validate_can_log_outputs,
    }  # fmt: skip
    model_writes = {
        basic.validate_can_update_logged_model, basic.validate_can_delete_logged_model,
        basic.validate_can_manage_logged_model,
    }  # fmt: skip
    try:
        if validator in run_writes:
            return _owns_run(username, basic._get_request_param("run_id"))
        if validator in model_writes and (m := _MODEL_ROUTE.search(request.path)):
            return _owns_model(username, m.group(1))
    except MlflowException:
        return True  # a malformed request: MLflow's own handler answers it
    if basic._is_proxy_artifact_path(request.path) and request.method in ("PUT", "POST", "DELETE"):
        path = (request.view_args or {}).get("artifact_path") or ""
        if m := _RUN_ARTIFACTS.match(path):
            return _owns_run(username, m.group(1))
        if m := _MODEL_ARTIFACTS.match(path):
            return _owns_model(username, m.group(1))
    return True


def _stamp_owner(username: str) -> Any:
    """Set the run's ``user_id`` and ``mlflow.user`` tag to ``username`` in the request body."""
    from flask import request

    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict):
        return True  # not a run to create: MLflow rejects it
    body["user_id"] = username
    tags = [t for t in body.get("tags") or [] if isinstance(t, dict)]
    body["tags"] = [t for t in tags if t.get("key") != "mlflow.user"]
    body["tags"].append({"key": "mlflow.user", "value": username})
    # MLflow's handler reads the same cached object; if it would not, refuse rather than let
    # the client's own user_id through
    if request.get_json(force=True, silent=True) is not body:
        return _forbidden("the class server could not record the run's owner")
    return True


def _owns_run(username: str, run_id: str) -> Any:
    from mlflow.server.handlers import _get_tracking_store

    try:
        owner = _get_tracking_store().get_run(run_id).info.user_id
    except Exception:  # an unknown run: MLflow's own validator refuses or answers 404
        return True
    if owner == username:
        return True
    return _forbidden(f"run {run_id} belongs to {owner!r}; {username!r} may read it, not change it")


def _owns_model(username: str, model_id: str) -> Any:
    from mlflow.server.handlers import _get_tracking_store

    try:
        run_id = _get_tracking_store().get_logged_model(model_id).source_run_id
    except Exception:
        return True
    if not run_id:
        return _forbidden(f"logged model {model_id} has no source run; only an admin may change it")
    return _owns_run(username, run_id)
