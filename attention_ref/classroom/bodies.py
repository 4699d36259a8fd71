"""Request bodies MLflow's handlers do not expect, refused by the gate in one line (400).

MLflow's REST handlers read a JSON *object*; given a JSON list, string or number they fail
inside (a 500 and a traceback in the server's log), and so does its GraphQL endpoint given a
query over GET or a body that is not ``{"query": "..."}``. The gate refuses such a request
before any handler runs: a client's mistake is a 400 that says what was expected, never a 500.
A body that is not JSON at all is left to MLflow, which answers it with its own 400.
"""

from __future__ import annotations

import json
from typing import Any

#: the routes whose body is a file, not JSON (the artifact proxy's uploads)
_RAW_BODIES = ("/mlflow-artifacts/artifacts/", "/upload-artifact")
_GRAPHQL = ("GET /graphql", "POST /graphql")


def _parsed(raw: bytes) -> tuple[bool, Any]:
    """``(is JSON, value)`` of a body."""
    try:
        return True, json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return False, None


def malformed(request: Any, key: str) -> str | None:
    """Why the request's body (or GraphQL query) cannot be what route ``key`` expects, in one
    line; ``None`` when it may be (MLflow's handler then checks its fields)."""
    if key == "GET /graphql":
        return 'GraphQL is asked over POST, with a body {"query": "..."}'
    if request.method not in ("POST", "PUT", "PATCH", "DELETE") or any(
        part in key for part in _RAW_BODIES
    ):
        return None
    raw = request.get_data(cache=True)
    if not raw.strip():
        return 'GraphQL is asked with a body {"query": "..."}' if key in _GRAPHQL else None
    is_json, body = _parsed(raw)
    if not is_json:
        return None  # MLflow's own 400
    if not isinstance(body, dict):
        kind = {list: "array", str: "string", bool: "boolean", type(None): "null"}
        return f"{key} takes a JSON object, not a JSON {kind.get(type(body), 'number')}"
    if key in _GRAPHQL and not isinstance(body.get("query"), str):
        return 'GraphQL is asked with a body {"query": "..."} whose query is a string'
    return None
