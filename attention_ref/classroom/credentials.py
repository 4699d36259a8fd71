"""The class server's gate, who sent the request: a second look when MLflow's check says no.

MLflow's password check answers "no" both for a wrong password and for an accounts' database
that could not be read (PostgreSQL restarting). These tell the two apart, so that the first
gets 401 and the second 503 (which clients retry; a 401 would end a training): after
MLflow's check (`_second_look`), and on MLflow's FastAPI routes, whose bridge to the gate is
wrapped (`_guard_the_fastapi_bridge`). Step 1 of `attention_ref.classroom.auth`.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from attention_ref.classroom.refusals import _UNAVAILABLE

_BRIDGED: ContextVar[bool] = ContextVar("attnref_bridged", default=False)


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
