"""The class server's gate, who sent the request: one password check at most, failures throttled.

Step 1 of `attention_ref.classroom.gate.auth`. `identify` answers with the account, or with the
response that refuses the request:

1. credentials with a control character (a NUL in a name reaches PostgreSQL, which refuses it
   with an error): 400, before anything is read;
2. credentials MLflow's cache holds as right (``auth_cache_ttl_seconds``, keyed as MLflow keys
   it): the account, with no hash computed;
3. one read of the account: 503 when the accounts' database could not be read (PostgreSQL
   restarting: clients retry a 503; a 401 would end a training);
4. a password this worker checked right before, against the hash the account still has
   (`attention_ref.classroom.gate.logins`): the account, with no hash computed and no token spent;
5. a sender whose failures are spent (for an absent account: the address's; for an existing
   one: the (address, account) pair's and the account's): 429 with ``Retry-After``, with no
   hash computed;
6. one password check (an absent account is checked against a hash of nothing, so that it
   costs what a wrong password costs): the account (kept in MLflow's cache and remembered by
   the worker), or 401 (a failure counted).

MLflow's FastAPI routes (the artifact upload among them) call the gate through a bridge that
reads the account once more after it; the bridge is wrapped (`guard_the_fastapi_bridge`) so
that a failure of that read is a 503, never a second password check or a 401.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from functools import cache
from typing import Any

from attention_ref.classroom.gate.logins import LoginThrottle
from attention_ref.classroom.gate.mlflow_seam import (
    cache_user,
    cached_user,
    fastapi_bridge,
    legacy_admin_login_refused,
    replace_fastapi_bridge,
)
from attention_ref.classroom.gate.refusals import UNAVAILABLE, bad_request, throttled

#: set while MLflow's FastAPI bridge runs the gate (its copy of a request has no body)
BRIDGED: ContextVar[bool] = ContextVar("attnref_bridged", default=False)
#: the header the edge sets to the client's address (a client's own value is replaced)
CLIENT_ADDRESS_HEADER = "X-Real-IP"
_STUDENTS_PER_ADDRESS_ENV = "ATTNREF_STUDENTS_PER_ADDRESS"


@cache
def throttle() -> LoginThrottle:
    """This worker's throttle of failed logins (its students per address from the server)."""
    raw = os.environ.get(_STUDENTS_PER_ADDRESS_ENV, "")
    return LoginThrottle.for_class(int(raw) if raw.isdigit() else 1)


@cache
def _hash_of_nothing() -> str:
    """A hash made as the class's students' accounts are (`FAST_HASH`), of a random password:
    an absent account's check costs what a wrong password's costs."""
    from werkzeug.security import generate_password_hash

    from attention_ref.classroom.connection.accounts import generated_password

    return generate_password_hash(generated_password(), method=FAST_HASH)


def _has_control(text: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 for c in text)


def _cached(username: str, password: str) -> Any:
    """The account, when MLflow's cache holds these credentials as right; else ``None``."""
    return cached_user(username, password)


def _keep(username: str, password: str, user: Any) -> None:
    """Keep right credentials in MLflow's cache, as MLflow's own check does."""
    cache_user(username, password, user)


def read_account(username: str) -> Any:
    """One read of the account: the `User`, ``None`` (no such account) or ``"unavailable"``
    (the store is down: 503)."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST, ErrorCode
    from mlflow.server import auth as basic

    try:
        return basic.store.get_user(username)
    except MlflowException as e:
        return None if e.error_code == ErrorCode.Name(RESOURCE_DOES_NOT_EXIST) else "unavailable"
    except Exception:  # a driver error MLflow did not wrap: the store is down all the same
        return "unavailable"


def check_password(user: Any, username: str, password: str) -> bool:
    """One password check of the account read (``None``: none, checked against a hash of
    nothing, the same work as a wrong password): whether it is right."""
    from werkzeug.security import check_password_hash

    if user is None:
        check_password_hash(_hash_of_nothing(), password)
        return False
    if not check_password_hash(user.password_hash, password):
        return False
    return not legacy_admin_login_refused(username, password, user)


def identify(username: str, password: str, address: str) -> Any:
    """The sender's `User`, or the 400/401/429/503 response that refuses the request."""
    from flask import make_response
    from mlflow.server import auth as basic

    if _has_control(username) or _has_control(password):
        return bad_request("an account name or password holds a control character")
    user = _cached(username, password)
    if user is not None:
        return user
    user = read_account(username)
    if isinstance(user, str):  # "unavailable"
        return make_response(UNAVAILABLE, 503)
    if user is not None and throttle().recognises(username, password, user.password_hash):
        _keep(username, password, user)  # right, as checked before: no hash, no token
        return user
    wait = throttle().take(address, username, exists=user is not None)
    if wait:
        return throttled(wait)
    if not check_password(user, username, password):
        return basic.make_basic_auth_response()
    throttle().succeeded(address, username, password, user.password_hash)
    _keep(username, password, user)
    return user


#: how the class server hashes a password its commands drew (`accounts.generated_password`):
#: 128 random bits need no stretching; 1000 rounds of PBKDF2 cost under a millisecond
FAST_HASH = "pbkdf2:sha256:1000"


def keep_fast_hash(username: str, password: str) -> None:
    """Store ``password``'s hash for ``username`` with `FAST_HASH`, when it is one the class's
    commands drew (`attention_ref.classroom.connection.accounts.GENERATED`); any other is left as
    MLflow hashed it (scrypt). Called after MLflow made or changed the account, on the admin's
    request only."""
    from mlflow.server import auth as basic
    from mlflow.server.auth.db.models import SqlUser
    from werkzeug.security import generate_password_hash

    from attention_ref.classroom.connection.accounts import GENERATED

    if not GENERATED.fullmatch(password):
        return
    with basic.store.ManagedSessionMaker(read_only=False) as session:
        user = session.query(SqlUser).filter(SqlUser.username == username).one_or_none()
        if user is not None:
            user.password_hash = generate_password_hash(password, method=FAST_HASH)


def client_address(request: Any) -> str:
    """The client's address: the edge's ``X-Real-IP``, else the peer (a request that did not
    come through the edge: the tests' own app only)."""
    return str(request.headers.get(CLIENT_ADDRESS_HEADER) or request.remote_addr or "")


def guard_the_fastapi_bridge() -> None:
    """Make MLflow's FastAPI routes answer 503, not 401, when the account cannot be read again.

    MLflow serves some routes (the artifact upload among them: a training's sample at each
    evaluation) from its FastAPI app, whose middleware calls this gate and then reads the
    account once more, turning any error of that read into "not authenticated": 401, which
    ends a training, where a 503 is retried. The gate has decided by then (the credentials are
    right); so when that read finds nothing for a request with credentials, the store is down:
    503. Installed by the first request a worker's gate sees.
    """
    bridge = fastapi_bridge()
    if getattr(bridge, "attnref_guard", False):
        return

    def guarded(request: Any) -> Any:
        token = BRIDGED.set(True)
        try:
            found = bridge(request)
        finally:
            BRIDGED.reset(token)
        if found is not None or not request.headers.get("authorization"):
            return found
        from fastapi.responses import JSONResponse

        return JSONResponse(status_code=503, content=UNAVAILABLE)

    guarded.attnref_guard = True  # type: ignore[attr-defined]
    replace_fastapi_bridge(guarded)


__all__ = [
    "BRIDGED",
    "FAST_HASH",
    "check_password",
    "client_address",
    "guard_the_fastapi_bridge",
    "identify",
    "keep_fast_hash",
    "read_account",
    "throttle",
]
