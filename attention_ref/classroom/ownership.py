"""The class server's gate, is it theirs: what a request names, and whose it is.

For the rules a student passes only for their own things (`Verdict.IF_OWNER`), the run,
logged model, artifact folder or account the request names must be the sender's
(`_OWNERSHIP`, by `Access`); a new run is stamped with its owner and the server's clock
(`_stamp_owner`). The only caches of the gate are here (`found_once`): facts fixed when a
thing is created, kept only once found. Step 3 of `attention_ref.classroom.auth`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from functools import wraps
from threading import Lock
from typing import TYPE_CHECKING, TypeVar

from attention_ref.classroom.access import Access
from attention_ref.classroom.refusals import _forbidden, _hidden

if TYPE_CHECKING:
    from flask import Response

#: where the artifact proxy keeps a run's and a logged model's files (``--artifacts-destination``)
_RUN_ARTIFACTS = re.compile(r"^/?([^/]+)/(?!models/)([0-9a-f]{32})(?:/|$)")
_MODEL_ARTIFACTS = re.compile(r"^/?([^/]+)/models/(m-[0-9a-f]+)(?:/|$)")
_ARTIFACT_ROUTE = re.compile(r"/mlflow-artifacts/(?:artifacts|mpu/(?:create|complete|abort))/(.*)$")
_MODEL_ROUTE = re.compile(r"/mlflow/logged-models/(m-[0-9a-f]+)")
#: the run tag that names its owner in MLflow's UI: set by the server, changed by no student
OWNER_TAG = "mlflow.user"


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
