"""The one place the class's gate touches MLflow's private names: a seam, pinned and tested.

The gate runs inside ``mlflow server`` and needs a few things MLflow keeps private: the
server's tracking store and artifact repository (``mlflow.server.handlers``), the SQL store's
session and table models, and basic auth's credential cache. Each is reached here, by one
small function that says what it must give; every other module of the class imports these
functions, never an underscored name of MLflow's (a test reads every module for it), and
``tests/classroom/test_mlflow_seam.py`` holds each function to its contract against MLflow as
installed. The server extra pins the MLflow these contracts were tested with (``pyproject``):
a newer MLflow that moves one of these names fails that test, not a class.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: MLflow's private names this module uses, by module: what the contract test checks exists
PRIVATE_NAMES: dict[str, tuple[str, ...]] = {
    "mlflow.server.handlers": (
        "_artifact_repo",
        "_get_artifact_repo_mlflow_artifacts",
        "_get_tracking_store",
    ),
    "mlflow.server.auth": (
        "_USER_AUTH_CACHE",
        "_USER_AUTH_CACHE_LOCK",
        "_auth_cache_key",
        "_is_disabled_legacy_admin_login",
        "_get_experiment_permission",
        "_authenticate_custom_for_fastapi",
    ),
}


def tracking_store() -> Any:
    """The server's tracking store (the one ``mlflow server``'s handlers use)."""
    from mlflow.server.handlers import _get_tracking_store

    return _get_tracking_store()


def artifact_repo() -> Any:
    """The server's artifact repository behind the proxy (``--artifacts-destination``)."""
    from mlflow.server.handlers import _get_artifact_repo_mlflow_artifacts

    return _get_artifact_repo_mlflow_artifacts()


def replace_artifact_repo(repo: Any) -> None:
    """Make ``repo`` the one `artifact_repo` gives from now on (this worker's): every route
    that writes an artifact reaches the repository through that one getter."""
    from mlflow.server import handlers

    handlers._artifact_repo = repo


def artifact_root() -> Path | None:
    """The local folder of the artifact proxy (``--artifacts-destination``, as ``mlflow
    server`` hands it to its workers), or ``None`` where the artifacts are not local files."""
    import os
    from urllib.parse import urlparse

    from mlflow.server import ARTIFACTS_DESTINATION_ENV_VAR

    where = os.environ.get(ARTIFACTS_DESTINATION_ENV_VAR, "")
    parsed = urlparse(where)
    if not where or parsed.scheme not in ("", "file"):
        return None
    return Path(parsed.path if parsed.scheme else where)


@contextlib.contextmanager
def sql_session() -> Iterator[Any]:
    """A session of the SQL tracking store; ``LookupError`` where the store is not SQL (the
    caller asks MLflow's API instead)."""
    maker = getattr(tracking_store(), "ManagedSessionMaker", None)
    if maker is None:
        raise LookupError("the tracking store is not SQL")
    with maker() as session:
        yield session


def sql_model(name: str) -> Any:
    """The SQLAlchemy model of one of MLflow's tables (``SqlRun``, ``SqlMetric``, …)."""
    from mlflow.store.tracking.dbmodels import models

    return getattr(models, name)


# --- basic auth's internals ---------------------------------------------------------------------


def cached_user(username: str, password: str) -> Any:
    """The account when basic auth's cache holds these credentials as right (it keeps right
    ones for ``auth_cache_ttl_seconds``), else ``None``."""
    from mlflow.server import auth as basic

    if basic._USER_AUTH_CACHE is None:
        return None
    key = basic._auth_cache_key(username, password)
    with basic._USER_AUTH_CACHE_LOCK:
        return basic._USER_AUTH_CACHE.get(key)


def cache_user(username: str, password: str, user: Any) -> None:
    """Keep right credentials in basic auth's cache, as MLflow's own check does (nothing
    where the cache is off)."""
    from mlflow.server import auth as basic

    if basic._USER_AUTH_CACHE is None:
        return
    key = basic._auth_cache_key(username, password)
    with basic._USER_AUTH_CACHE_LOCK:
        basic._USER_AUTH_CACHE[key] = user


def legacy_admin_login_refused(username: str, password: str, user: Any) -> bool:
    """Whether basic auth refuses this admin login as a disabled legacy one (the default
    admin password, once changed), though its hash matched."""
    from mlflow.server import auth as basic

    return bool(basic._is_disabled_legacy_admin_login(username, password, user))


def can_read_experiment(experiment_id: str, username: str) -> bool:
    """Whether basic auth grants ``username`` reading ``experiment_id`` (their grant, else the
    default permission)."""
    from mlflow.server import auth as basic

    return bool(basic._get_experiment_permission(experiment_id, username).can_read)


def fastapi_bridge() -> Any:
    """The function basic auth's FastAPI middleware calls to authenticate a request (it calls
    the configured ``authorization_function`` and reads the account again)."""
    from mlflow.server import auth as basic

    return basic._authenticate_custom_for_fastapi


def replace_fastapi_bridge(bridge: Any) -> None:
    """Put ``bridge`` where basic auth's FastAPI middleware looks for `fastapi_bridge`."""
    from mlflow.server import auth as basic

    basic._authenticate_custom_for_fastapi = bridge
