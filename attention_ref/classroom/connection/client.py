"""The class server over REST: one call, its ``/health``, the class experiment and its runs.

What the teacher's commands, the accounts (`attention_ref.classroom.connection.accounts`) and the
class server itself (`attention_ref.classroom.hosting.server`) send to ``mlflow server``:
`request_bytes` and `rest` (one HTTP call, verified against the server's certificate for HTTPS),
`healthy` (``/health``), `checked` (an answer, or one line saying what failed) and
`class_experiment_id` (the class experiment, made if missing). No server there, or an answer
lost on the way: `ServerError` / `ServerTimeoutError`, in one line.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from attention_ref.classroom.connection.errors import ServerError, ServerTimeoutError
from attention_ref.classroom.connection.tls import client_context
from attention_ref.classroom.coursework.class_time import CLASS_ZONE_TAG
from attention_ref.experiments.names import EXPERIMENT_KIND, Tag

#: MLflow's variable for the CA bundle its clients verify a server with
CERT_PATH_ENV = "MLFLOW_TRACKING_SERVER_CERT_PATH"


def _context(url: str, cafile: Path | None) -> ssl.SSLContext | None:
    """How an ``https`` URL is verified: ``cafile``, else ``$MLFLOW_TRACKING_SERVER_CERT_PATH``
    (MLflow's own variable), else the system's authorities."""
    if not url.startswith("https://"):
        return None
    if cafile is None and os.environ.get(CERT_PATH_ENV):
        cafile = Path(os.environ[CERT_PATH_ENV])
    return client_context(cafile)


def request_bytes(
    url: str,
    endpoint: str,
    body: dict[str, Any] | None = None,
    *,
    auth: tuple[str, str] | None = None,
    method: str | None = None,
    query: dict[str, str] | None = None,
    data: bytes | None = None,
    timeout: float = 30,
    cafile: Path | None = None,
) -> tuple[int, bytes]:
    """One HTTP call: ``(HTTP status, the body's bytes)``; an HTTP error comes back as its
    status. ``body`` is sent as JSON; ``data`` as raw bytes (an artifact upload, with
    ``method="PUT"``). An ``https`` server is verified with ``cafile`` (else
    ``$MLFLOW_TRACKING_SERVER_CERT_PATH``). No server there, or one whose certificate does not
    verify: `ServerError` (one line)."""
    target = url.rstrip("/") + endpoint
    if query:
        target += "?" + urllib.parse.urlencode(query)
    payload = json.dumps(body).encode() if body is not None else data
    req = urllib.request.Request(target, data=payload, method=method)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=_context(url, cafile)) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except http.client.HTTPException as e:  # the connection closed mid-answer: a lost reply
        raise ServerTimeoutError(
            f"the class server at {url} did not answer whole ({type(e).__name__})"
        ) from None
    except (urllib.error.URLError, OSError) as e:  # no server there: one line, no traceback
        reason = getattr(e, "reason", e)
        if isinstance(reason, TimeoutError | ConnectionResetError):
            raise ServerTimeoutError(
                f"the class server at {url} did not answer in time ({reason or 'timed out'})"
            ) from None
        raise ServerError(f"cannot reach the class server at {url}: {reason}") from None


def rest(
    url: str,
    endpoint: str,
    body: dict[str, Any] | None = None,
    *,
    auth: tuple[str, str] | None = None,
    method: str | None = None,
    query: dict[str, str] | None = None,
    data: bytes | None = None,
    timeout: float = 30,
    cafile: Path | None = None,
) -> tuple[int, dict[str, Any]]:
    """One REST call: ``(HTTP status, JSON body)``; an HTTP error comes back as its status.

    ``body`` is sent as JSON; ``data`` as raw bytes (an artifact upload, with ``method="PUT"``).
    An ``https`` server is verified with ``cafile`` (else ``$MLFLOW_TRACKING_SERVER_CERT_PATH``).
    No server there, or one whose certificate does not verify: `ServerError` (one line).
    """
    status, raw = request_bytes(
        url,
        endpoint,
        body,
        auth=auth,
        method=method,
        query=query,
        data=data,
        timeout=timeout,
        cafile=cafile,
    )
    try:
        answer = json.loads(raw) if raw.strip() else {}
    except ValueError:
        answer = {"message": raw.decode(errors="replace")[:200]}
    return status, answer if isinstance(answer, dict) else {"value": answer}


def healthy(url: str, timeout: float = 2, cafile: Path | None = None) -> bool:
    """Whether the server answers ``/health`` (a route without authentication) with OK."""
    try:
        context = _context(url, cafile)
        target = url.rstrip("/") + "/health"
        with urllib.request.urlopen(target, timeout=timeout, context=context) as r:
            return r.read().strip() == b"OK"
    except (urllib.error.URLError, OSError, ValueError):
        return False


def checked(status: int, answer: dict[str, Any], what: str) -> dict[str, Any]:
    """``answer`` of a call that succeeded; else `ServerError` saying ``what`` failed, and why,
    in one line."""
    if status == 401:
        raise ServerError(f"{what}: the server refused the admin credentials (HTTP 401)")
    if status >= 400:
        message = str(answer.get("message", answer)).splitlines()[0][:200]
        raise ServerError(f"{what}: HTTP {status}: {message}")
    return answer


def class_experiment_id(
    url: str,
    admin: tuple[str, str],
    name: str,
    cafile: Path | None = None,
    zone: str | None = None,
) -> str:
    """The class experiment's id, created (by the admin) if it does not exist yet; with
    ``zone``, the class's time zone is its tag `CLASS_ZONE_TAG` (``server start``).

    Made with MLflow's tag that opens the UI on its runs (``mlflow.experimentKind``), so no
    student ever needs to tag it. Idempotent under a race: ``attnref server start`` and an
    ``add-student`` run right after the server answers may both find no experiment and both
    create it; the one whose create is refused with "already exists" reads the other's.
    """

    def look_up() -> dict[str, Any] | None:
        status, found = rest(
            url,
            "/api/2.0/mlflow/experiments/get-by-name",
            auth=admin,
            query={"experiment_name": name},
            cafile=cafile,
        )
        if status == 200:
            return dict(found["experiment"])
        if status != 404:
            checked(status, found, f"cannot look up the experiment {name!r}")
        return None

    kind = {"key": str(Tag.EXPERIMENT_KIND), "value": EXPERIMENT_KIND}
    found = look_up()
    if found is None:
        status, made = rest(
            url,
            "/api/2.0/mlflow/experiments/create",
            {
                "name": name,
                "tags": [kind] + ([{"key": CLASS_ZONE_TAG, "value": zone}] if zone else []),
            },
            auth=admin,
            cafile=cafile,
        )
        if status == 200:
            return str(made["experiment_id"])
        found = look_up() if "already exists" in str(made.get("message", "")) else None
        if found is None:
            checked(status, made, f"cannot create the experiment {name!r}")
            raise ServerError(f"cannot create the experiment {name!r}")  # pragma: no cover
    exp_id = str(found["experiment_id"])
    tags = {t["key"]: t["value"] for t in found.get("tags", [])}
    wanted = {kind["key"]: kind["value"]} | ({CLASS_ZONE_TAG: zone} if zone else {})
    for key, value in wanted.items():
        if tags.get(key) != value:
            status, answer = rest(
                url,
                "/api/2.0/mlflow/experiments/set-experiment-tag",
                {"experiment_id": exp_id, "key": key, "value": value},
                auth=admin,
                cafile=cafile,
            )
            checked(status, answer, f"cannot tag the experiment {name!r}")
    return exp_id
