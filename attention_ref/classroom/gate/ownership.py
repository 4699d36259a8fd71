"""The class server's gate, is it theirs: what a request names, whose it is, whether it is seen.

Step 3 of `attention_ref.classroom.gate.auth`. What the request names is read once
(`attention_ref.classroom.gate.parameters`, kept for the request: `said`). For a student:

* **seen or not** (`unseen`): every run and logged model a request names must exist and be
  readable by the student (MLflow's per-experiment grants), else the one answer `HIDDEN`. An
  absent thing and another's cost the same work (one read of the thing, one read of a
  permission), and the gate answers both before MLflow's own checks run;
* **theirs** (`OWNERSHIP`, for `Verdict.IF_OWNER`): the run, logged model, artifact folder or
  account a write names must be the sender's; a new logged model's ``experiment_id`` must be
  its source run's; a new run is stamped with its owner and the server's clock
  (`stamp_owner`);
* **keys by spelling** (`judged_key`): a key is judged as it reads, not as it is spelled: the
  owner tag written ``"mlflow.user "`` or ``"MLflow.User"`` is the owner tag (and the homework's
  and the grades' prefixes the same, `attention_ref.classroom.gate.homework_fence`). MLflow reads
  only the exact key today; a key that looks like it is a trap for whatever reads it tomorrow
  (a query that folds case, a person reading the UI).

The only caches of the gate are here (`found_once`): facts fixed when a thing is created, kept
only once found.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Callable
from functools import wraps
from threading import Lock
from typing import TYPE_CHECKING, TypeVar

from attention_ref.classroom.gate.access_table import Access
from attention_ref.classroom.gate.mlflow_seam import (
    can_read_experiment,
    sql_model,
    sql_session,
    tracking_store,
)
from attention_ref.classroom.gate.parameters import Said
from attention_ref.classroom.gate.refusals import forbidden, hidden

if TYPE_CHECKING:
    from flask import Response

#: where the artifact proxy keeps a run's and a logged model's files (``--artifacts-destination``)
RUN_ARTIFACTS = re.compile(r"^/?([^/]+)/(?!models/)([0-9a-f]{32})(?:/|$)")
MODEL_ARTIFACTS = re.compile(r"^/?([^/]+)/models/(m-[0-9a-f]+)(?:/|$)")
ARTIFACT_ROUTE = re.compile(r"/mlflow-artifacts/(?:artifacts|mpu/(?:create|complete|abort))/(.*)$")
#: the run tag that names its owner in MLflow's UI: set by the server, changed by no student
OWNER_TAG = "mlflow.user"
#: the parameters that name a run, and those that name a logged model
RUN_NAMES = ("run_id", "run_uuid", "run_ids", "source_run_id")
MODEL_NAMES = ("model_id",)
_SAID = "attnref_said"
#: the experiment whose permission an absent thing's check reads (the same work as a real one)
_NO_EXPERIMENT = "0"


def judged_key(key: str) -> str:
    """A tag, parameter or metric key as the gate judges it: Unicode's compatibility form
    (NFKC: a fullwidth ``ａ`` is ``a``, ``․`` is ``.``), case-folded (`str.casefold`), without
    control or invisible format characters (a zero-width space, a soft hyphen, a
    bidirectional mark), trimmed of every white space (a no-break space, U+3000 too)."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", key).casefold())
    shown = "".join(c for c in folded if unicodedata.category(c) not in ("Cc", "Cf"))
    return shown.strip()


def keep_said(said: Said) -> None:
    """Keep what the request says for the gate's later steps (``flask.g``)."""
    from flask import g

    setattr(g, _SAID, said)


def said() -> Said:
    """What the request says, read once by the gate (`keep_said`)."""
    from flask import g

    return getattr(g, _SAID)


def artifact_path() -> str | None:
    """The artifact proxy's path the request names (its route's path parameter)."""
    s = said()
    if "artifact_path" in s.path:
        return s.path["artifact_path"]
    from flask import request

    m = ARTIFACT_ROUTE.search(request.path)
    return m.group(1) if m else None


_T = TypeVar("_T")


def found_once(maxsize: int) -> Callable[[Callable[[str], _T | None]], Callable[[str], _T | None]]:
    """Cache what a look-up *found*, never that it found nothing.

    The gate's only caches: facts fixed when the thing is created (a run's owner and
    experiment, a logged model's source run and experiment), keyed by ids the server draws at
    random. A "not found" is not cached: a request naming an id before it exists would
    otherwise decide for the thing made later under that id. Oldest entries go first past
    ``maxsize``.
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
        cached.peek = kept.get  # type: ignore[attr-defined]  # what is kept, with no read
        return cached

    return wrap


def _not_found(e: Exception) -> bool:
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST, ErrorCode

    return isinstance(e, MlflowException) and e.error_code in (
        ErrorCode.Name(RESOURCE_DOES_NOT_EXIST),
        "INVALID_PARAMETER_VALUE",
    )


def rows(
    table: str, columns: tuple[str, ...], key: str, value: str, limit: int | None = None
) -> list[tuple[str, ...]]:
    """Every row's ``columns`` of MLflow's ``table`` where ``key`` is ``value`` (at most
    ``limit``), in one query; ``LookupError`` where the store is not SQL (the caller asks
    MLflow's API instead)."""
    model = sql_model(table)
    with sql_session() as session:
        query = session.query(*(getattr(model, c) for c in columns))
        query = query.filter(getattr(model, key) == value)
        found = (query.limit(limit) if limit is not None else query).all()
    return [tuple(None if v is None else str(v) for v in row) for row in found]


def _row(table: str, columns: tuple[str, ...], key: str, value: str) -> tuple[str, ...] | None:
    """One row's ``columns`` of MLflow's ``table`` where ``key`` is ``value``, in one query
    that costs the same whether the row is there or not; ``None``: no row. ``LookupError``
    where the store is not SQL (the caller asks MLflow's API instead)."""
    found = rows(table, columns, key, value, limit=1)
    return found[0] if found else None


def read_run(run_id: str) -> tuple[str, str] | None:
    """``(owner, experiment id)`` of a run, read from the store now, or ``None``."""
    try:
        return _row("SqlRun", ("user_id", "experiment_id"), "run_uuid", run_id)  # type: ignore[return-value]
    except LookupError:
        pass
    try:
        info = tracking_store().get_run(run_id).info
    except Exception as e:
        if _not_found(e):
            return None
        raise  # the store is down: MLflow answers 503, the client retries
    return str(info.user_id), str(info.experiment_id)


def read_model(model_id: str) -> tuple[str | None, str] | None:
    """``(source run id, experiment id)`` of a logged model, read now, or ``None``."""
    try:
        return _row("SqlLoggedModel", ("source_run_id", "experiment_id"), "model_id", model_id)  # type: ignore[return-value]
    except LookupError:
        pass
    try:
        model = tracking_store().get_logged_model(model_id)
    except Exception as e:
        if _not_found(e):
            return None
        raise
    return (model.source_run_id or None), str(model.experiment_id)


def read_experiment(name: str) -> str | None:
    """The id of the experiment named ``name``, read now, or ``None``."""
    try:
        found = _row("SqlExperiment", ("experiment_id",), "name", name)
    except LookupError:
        experiment = tracking_store().get_experiment_by_name(name)
        return str(experiment.experiment_id) if experiment else None
    return found[0] if found else None


run_facts = found_once(maxsize=4096)(read_run)
model_facts = found_once(maxsize=4096)(read_model)


def may_read(experiment_id: str, username: str) -> bool:
    """Whether MLflow lets ``username`` read the experiment (its per-experiment grants)."""
    try:
        return can_read_experiment(experiment_id, username)
    except Exception:  # the store could not say: not readable
        return False


def _seen(experiment: str | None, owner: str | None, username: str) -> bool:
    """One permission read whether the thing exists or not (`_NO_EXPERIMENT` for an absent
    one), so that an absent thing costs what another's costs."""
    readable = may_read(experiment or _NO_EXPERIMENT, username)
    return experiment is not None and (owner == username or readable)


def _run_seen(run_id: str, username: str) -> bool:
    kept = run_facts.peek(run_id)  # type: ignore[attr-defined]
    if kept is not None and kept[0] == username:
        return True  # one's own run, known: no read (a training's every write)
    found = read_run(run_id)
    return _seen(found[1] if found else None, found[0] if found else None, username)


def _model_seen(model_id: str, username: str) -> bool:
    kept = model_facts.peek(model_id)  # type: ignore[attr-defined]
    source = run_facts.peek(kept[0]) if kept and kept[0] else None  # type: ignore[attr-defined]
    if source is not None and source[0] == username:
        return True
    found = read_model(model_id)
    return _seen(found[1] if found else None, None, username)


def _experiment_seen(name: str, username: str) -> bool:
    return _seen(read_experiment(name), None, username)


def unseen(username: str) -> Response | None:
    """`HIDDEN` when a run, logged model or experiment (by name) the request names is absent
    or not readable by ``username``; ``None`` when each is there to see. Each is read from the
    store now, the same reads for an absent one as for another's; only one's own run (or
    model), known from an earlier request, is passed with no read."""
    s = said()
    runs = {v for name in RUN_NAMES for v in s.values(name)}
    if any(not _run_seen(run_id, username) for run_id in runs):
        return hidden()
    if any(not _model_seen(model_id, username) for model_id in set(s.values("model_id"))):
        return hidden()
    if any(not _experiment_seen(n, username) for n in set(s.values("experiment_name"))):
        return hidden()
    return None


def _owns_run(username: str, run_id: str, experiment_id: str | None = None) -> Response | None:
    """``None`` when the run is ``username``'s (in ``experiment_id``, when given); else the
    refusal: `hidden` for a run that does not exist or that they may not read."""
    found = run_facts(run_id)
    if found is None:
        return hidden()
    owner, experiment = found
    if owner != username:
        if not may_read(experiment, username):
            return hidden()
        return forbidden(
            f"run {run_id} belongs to {owner!r}; {username!r} may read it, not change it"
        )
    if experiment_id is not None and experiment_id != experiment:
        return forbidden(f"run {run_id} is in experiment {experiment}, not {experiment_id}")
    return None


def _owns_model(username: str, model_id: str, experiment_id: str | None = None) -> Response | None:
    found = model_facts(model_id)
    if found is None:
        return hidden()
    run_id, experiment = found
    if run_id is None:
        return forbidden(f"logged model {model_id} has no source run; only a teacher changes it")
    if experiment_id is not None and experiment_id != experiment:
        return forbidden(
            f"logged model {model_id} is in experiment {experiment}, not {experiment_id}"
        )
    return _owns_run(username, run_id)


# ------------------------------------------------------------------ the checks, by Access


def _tag_keys(s: Said) -> list[str]:
    """The tag keys a run write sets or deletes (``set-tag``, ``delete-tag``, ``log-batch``)."""
    keys = [str(s.body["key"])] if "key" in s.body else []
    tags = s.body.get("tags")
    if isinstance(tags, list):
        keys += [str(t.get("key")) for t in tags if isinstance(t, dict)]
    return keys


def _check_run(username: str) -> Response | None:
    s = said()
    run_id = s.one("run_id", "run_uuid")  # MLflow reads one or the other: they must agree
    if run_id is None:
        return forbidden("the request names no run")
    if refused := _owns_run(username, run_id):
        return refused
    if bad := [k for k in _tag_keys(s) if judged_key(k) == OWNER_TAG]:
        named = OWNER_TAG if bad[0] == OWNER_TAG else f"{bad[0]!r} (read as {OWNER_TAG})"
        return forbidden(f"the tag {named} names a run's owner; only a teacher changes it")
    return None


def _check_new_model(username: str) -> Response | None:
    s = said()
    run_id = s.one("source_run_id")
    if run_id is None:
        return forbidden("a student's logged model comes from their own run (source_run_id)")
    return _owns_run(username, run_id, s.one("experiment_id"))


def _check_model(username: str) -> Response | None:
    model_id = said().one("model_id")
    if model_id is None:
        return forbidden("the request names no logged model")
    return _owns_model(username, model_id)


def _check_artifact(username: str) -> Response | None:
    path = artifact_path()
    if not path:
        return forbidden("the request names no artifact path")
    if m := RUN_ARTIFACTS.match(path):
        return _owns_run(username, m.group(2), m.group(1))
    if m := MODEL_ARTIFACTS.match(path):
        return _owns_model(username, m.group(2), m.group(1))
    return forbidden(f"{path!r} is not a run's or a logged model's folder")


def _check_self(username: str) -> Response | None:
    name = said().one("username")
    if name is None:
        return forbidden("the request names no account")
    if name != username:
        return forbidden(f"account {name!r} is not {username!r}'s")
    return None


#: the check of each access a student passes only for what is their own
OWNERSHIP: dict[Access, Callable[[str], Response | None]] = {
    Access.OWN_RUN: _check_run,
    Access.CREATE_MODEL: _check_new_model,
    Access.OWN_MODEL: _check_model,
    Access.OWN_ARTIFACT: _check_artifact,
    Access.SELF: _check_self,
}


def now_ms() -> int:
    """The server's clock, in milliseconds since the epoch."""
    return int(time.time() * 1000)


def stamp_owner(username: str) -> Response | None:
    """Set the new run's ``user_id`` and ``mlflow.user`` tag to ``username`` in the request,
    and its ``start_time`` to the server's clock."""
    from flask import request

    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict):
        return None  # not a run to create: MLflow rejects it
    body["user_id"] = username
    body["start_time"] = now_ms()
    tags = [t for t in body.get("tags") or [] if isinstance(t, dict)]
    keys = [str(t.get("key")) for t in tags]
    if bad := [k for k in keys if k != OWNER_TAG and judged_key(k) == OWNER_TAG]:
        return forbidden(f"the tag {bad[0]!r} reads as {OWNER_TAG}: a run's owner is the server's")
    body["tags"] = [t for t in tags if t.get("key") != OWNER_TAG]
    body["tags"].append({"key": OWNER_TAG, "value": username})
    # MLflow's handler reads the same cached object; if it would not, refuse rather than let
    # the client's own user_id through
    if request.get_json(force=True, silent=True) is not body:
        return forbidden("the server could not record the run's owner")
    return None
