"""What a request says, read once, bounded before it is parsed, and judged against its route.

The gate (`attention_ref.classroom.gate.auth`) decides on what a request names: runs, experiments,
models, accounts. MLflow's handlers read the same request again, each its own way (a query for
GET, a JSON body otherwise, a path, one field or its twin: ``run_id`` or ``run_uuid``). So a
student's request passes only if it says nothing the gate does not read the way MLflow reads it:

* **the route's parameters** (`route_parameters`): for a route MLflow serves from a protobuf
  request message, that message's fields, by their names (not their JSON twins: ``runId``), in
  the query of a GET and in the JSON body of any other method; for the few routes MLflow reads
  by hand, `HAND_READ`. A parameter the route does not know, a query on a route that reads its
  body, or a value of the wrong type (the body parsed into the message, strictly): 400;
* **one thing per kind** (`Said.one`): ``run_id`` and ``run_uuid`` name the same run, a path's
  id and the same name in the query are the same; two different values: 400;
* **bounded and typed**, anyone's request: a JSON body nested more than `MAX_DEPTH` deep is
  refused before it is parsed (`json_depth`, one pass, no recursion), and so is a NUL byte
  anywhere in the query, the path or a body's strings (PostgreSQL refuses a NUL in a string:
  MLflow then answered 500), and a body whose values are not of its message's types;
* **of MLflow's shapes and within a request's costs**
(`attention_ref.classroom.gate.request_bounds`):
  anyone's page token one MLflow makes on that route, a trace metric's percentile a percent;
  a student's filters, sort keys, ids, pages and GraphQL queries within the bounds there.

The edge bounds a body's size before any of this (`attention_ref.classroom.hosting.edge`). A route a
student may use that is in neither table has no parameters known: it is refused (deny by
default) until someone writes its entry; ``tests/classroom/test_parameters.py`` walks every
route open to students.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from attention_ref.classroom.gate.request_bounds import (
    MAX_GRAPHQL_TOKENS,
    aggregation_refusal,
    cost_refusal,
    graphql_cost_refusal,
    graphql_size_refusal,
    page_token_refusal,
)

#: how deep a JSON body may nest (MLflow's deepest request, a dataset's records, uses 6)
MAX_DEPTH = 32


@dataclass(frozen=True)
class Read:
    """Where a route reads its parameters: their names in the query, in a JSON body; whether
    its body is a file (never parsed here)."""

    query: tuple[str, ...] = ()
    body: tuple[str, ...] = ()
    file_body: bool = False
    several: tuple[str, ...] = ()  # names that take several values (several runs, not one)


#: the routes a student may use that MLflow reads without a request message, by their key in
#: the access table (`attention_ref.classroom.gate.access_table`); read off MLflow's handlers
HAND_READ: dict[str, Read] = {
    "GET /health": Read(),
    "GET /mlflow/server-info": Read(),
    "GET /static-files/{path:path}": Read(),
    "GET /": Read(query=("class",)),  # the landing page's mark (auth.LANDED)
    "GET /build/{filename:path}": Read(),
    "GET /version": Read(),
    "GET /get-artifact": Read(query=("run_id", "run_uuid", "path")),
    "GET /model-versions/get-artifact": Read(query=("name", "version", "path")),
    "GET /graphql": Read(),
    "POST /graphql": Read(body=("query", "variables", "operationName")),
    "GET /mlflow/ui-telemetry": Read(),
    "POST /mlflow/ui-telemetry": Read(body=("records",)),
    "GET /mlflow/users/current": Read(),
    "GET /mlflow/users/current/permissions": Read(),
    "GET /mlflow/users/get": Read(query=("username",)),
    "GET /mlflow/users/permissions/get": Read(query=("username", "resource_type", "resource_id")),
    "GET /mlflow/users/permissions/list": Read(query=("username",)),
    "PATCH /mlflow/users/update-password": Read(body=("username", "password")),
    "GET /mlflow/metrics/get-history-bulk": Read(
        query=("run_id", "metric_key", "max_results"), several=("run_id",)
    ),
    "GET /mlflow/get-trace-artifact": Read(query=("request_id", "path")),
    "GET /mlflow/logged-models/{model_id}/artifacts/files": Read(query=("artifact_file_path",)),
    "POST /mlflow/upload-artifact": Read(query=("run_uuid", "run_id", "path"), file_body=True),
    "GET /mlflow-artifacts/artifacts/{artifact_path:path}": Read(),
    "PUT /mlflow-artifacts/artifacts/{artifact_path:path}": Read(file_body=True),
    "GET /mlflow-artifacts/presigned/{artifact_path:path}": Read(),
}

#: names that name one thing of a kind: every value of a request in one group must be equal
SAME_THING: tuple[tuple[str, ...], ...] = (
    ("run_id", "run_uuid"),
    ("experiment_id",),
    ("model_id",),
    ("artifact_path",),
    ("username",),
    ("name",),
)


class RefusedError(ValueError):
    """A request the gate refuses for what it says (400), with a one-line reason."""


def json_depth(raw: bytes) -> int:
    """How deep the JSON text ``raw`` nests (arrays and objects), in one pass without
    recursion; brackets inside strings do not count."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def _has_nul(value: Any) -> bool:
    """Whether a parsed JSON value holds a NUL character in any string or key (iteratively)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


@cache
def request_messages() -> dict[str, type]:
    """``route key -> MLflow's request message class`` of every route MLflow serves from one
    (read from MLflow's own endpoint list, inside the server)."""
    from mlflow.protos.service_pb2 import SearchDatasets
    from mlflow.server.handlers import get_endpoints

    from attention_ref.classroom.gate.access import route_key

    found: dict[str, type] = {}
    for path, message, methods in get_endpoints(get_handler=lambda cls: cls):
        if isinstance(message, type) and hasattr(message, "DESCRIPTOR"):
            for method in methods:
                found[route_key(method, path)] = message
    # served by a route of its own (``/ajax-api/2.0/mlflow/experiments/search-datasets``)
    found["POST /mlflow/experiments/search-datasets"] = SearchDatasets
    return found


def route_parameters(key: str, method: str) -> tuple[Read, type | None] | None:
    """Where route ``key`` reads its parameters, and its request message (``None``: read by
    hand); ``None`` for a route whose parameters are not known (refused to students)."""
    if key in HAND_READ:
        return HAND_READ[key], None
    message = request_messages().get(key)
    if message is None:
        return None
    names = tuple(f.name for f in message.DESCRIPTOR.fields)  # type: ignore[attr-defined]
    if not names and method in ("GET", "PUT"):  # a message with no fields: the path only
        return Read(file_body=method == "PUT"), message
    return (Read(query=names), message) if method == "GET" else (Read(body=names), message)


@dataclass
class Said:
    """What a request says, by name: its path's parameters, its query, its JSON body."""

    key: str
    path: dict[str, str] = field(default_factory=dict)
    query: dict[str, list[str]] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)

    def values(self, name: str) -> list[str]:
        """Every value of ``name`` the request carries (path, query, body; a list's items)."""
        found = [self.path[name]] if name in self.path else []
        found += self.query.get(name, [])
        value = self.body.get(name)
        if isinstance(value, list):
            found += [str(v) for v in value if v is not None]
        elif value is not None and not isinstance(value, dict):
            found.append(str(value))
        return found

    several: tuple[str, ...] = ()

    def one(self, *names: str) -> str | None:
        """The one value the names carry (``None``: none of them); `RefusedError` for two."""
        found = {v for name in names for v in self.values(name)}
        if len(found) > 1:
            raise RefusedError(
                f"{' and '.join(names)} name {len(found)} different things; a request names one"
            )
        return next(iter(found), None)


def read_request(
    key: str,
    method: str,
    path: dict[str, str],
    query: dict[str, list[str]],
    raw: bytes,
    *,
    judged: bool,
) -> Said:
    """Read a request once: `Said`, or `RefusedError` (400) for what it says.

    Every request is bounded (depth, NUL bytes, a body that must be a JSON object); a
    ``judged`` one (a student's) must also say only its route's parameters, of their types.
    """
    for name, values in (*query.items(), *((k, [v]) for k, v in path.items())):
        if "\x00" in name or any("\x00" in v for v in values):
            raise RefusedError(f"the request's {name!r} holds a NUL byte")
    known = route_parameters(key, method)
    file_body = known is not None and known[0].file_body
    body: dict[str, Any] = {}
    if not file_body and raw.strip():
        if json_depth(raw) > MAX_DEPTH:
            raise RefusedError(f"a JSON body nests at most {MAX_DEPTH} deep")
        try:
            parsed = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise RefusedError(f"{key} takes a JSON object; the body is not JSON") from None
        if not isinstance(parsed, dict):
            kind = {list: "array", str: "string", bool: "boolean", type(None): "null"}
            raise RefusedError(
                f"{key} takes a JSON object, not a JSON {kind.get(type(parsed), 'number')}"
            )
        if _has_nul(parsed):
            raise RefusedError("the request's body holds a NUL character")
        body = parsed
    several = known[0].several if known is not None else ()
    said = Said(key, dict(path), {k: list(v) for k, v in query.items()}, body, several)
    if judged:
        _judge(said, method, known)
        _refuse(cost_refusal(key, said.query, said.body, several))
    elif known is not None and known[1] is not None and method != "GET" and body:
        _typed(said, known[1], ignore_unknown=True)
    for group in SAME_THING:
        if not set(group) & set(several):
            said.one(*group)
    tokens = [*said.query.get("page_token", []), said.body.get("page_token")]
    _refuse(page_token_refusal(key, tokens) or aggregation_refusal(key, body.get("aggregations")))
    return said


def _refuse(why: str | None) -> None:
    """`RefusedError` for a reason `attention_ref.classroom.gate.request_bounds` gave."""
    if why is not None:
        raise RefusedError(why)


def graphql_refusal(said: Said) -> str | None:
    """Why a GraphQL request cannot be run, in one line (answered as a GraphQL error); ``None``
    when MLflow's GraphQL may run it: a POST whose body holds a ``query`` string that parses,
    ``variables`` an object (or none), ``operationName`` a string (or none)."""
    if said.key != "POST /graphql":
        return 'GraphQL is asked over POST, with a body {"query": "..."}'
    query = said.body.get("query")
    if not isinstance(query, str):
        return 'GraphQL is asked with a body {"query": "..."} whose query is a string'
    if not isinstance(said.body.get("variables"), dict | None):
        return "GraphQL's variables are a JSON object"
    if not isinstance(said.body.get("operationName"), str | None):
        return "GraphQL's operationName is a string"
    if why := graphql_size_refusal(query):
        return why
    from graphql import GraphQLError, parse

    try:
        document = parse(query, max_tokens=MAX_GRAPHQL_TOKENS)
    except GraphQLError as e:
        return " ".join(str(e.message).split())[:200]
    except RecursionError:
        return "the GraphQL query nests too deep"
    return graphql_cost_refusal(document, said.body.get("variables"))


def _judge(said: Said, method: str, known: tuple[Read, type | None] | None) -> None:
    """A student's request says only what its route reads, of the types its message says."""
    if known is None:
        raise RefusedError(
            f"{said.key} has no parameters the class server knows; refused until it "
            "has them (attention_ref.classroom.gate.parameters)"
        )
    read, message = known
    if unknown := sorted(set(said.query) - set(read.query)):
        where = "query" if read.query else "query (it reads none)"
        raise RefusedError(f"{said.key} does not read {unknown[0]!r} in its {where}")
    if unknown := sorted(set(said.body) - set(read.body)):
        raise RefusedError(f"{said.key} does not read {unknown[0]!r} in its body")
    if message is not None and method != "GET" and said.body:
        _typed(said, message, ignore_unknown=False)
    if message is not None and method == "GET":
        _judge_query(said, message)


def _typed(said: Said, message: type, *, ignore_unknown: bool) -> None:
    """The body parsed into the route's message, strictly: a value of the wrong type, at any
    depth, is `RefusedError` (MLflow's handlers go on with a half-parsed message, and some
    answered 500)."""
    from google.protobuf.json_format import ParseDict, ParseError

    try:
        ParseDict(said.body, message(), ignore_unknown_fields=ignore_unknown)
    except (ParseError, TypeError, ValueError, AttributeError, RecursionError) as e:
        reason = " ".join(str(e).split())[:200]
        raise RefusedError(f"{said.key}: {reason}") from None


def _judge_query(said: Said, message: type) -> None:
    """A GET's query against its message's fields: one value for a field that is not repeated,
    each value of its field's type (as MLflow converts it)."""
    from google.protobuf.descriptor import FieldDescriptor as F

    fields = {f.name: f for f in message.DESCRIPTOR.fields}  # type: ignore[attr-defined]
    ints = (F.TYPE_INT32, F.TYPE_INT64, F.TYPE_UINT32, F.TYPE_UINT64, F.TYPE_SINT32, F.TYPE_SINT64)
    for name, values in said.query.items():
        f = fields[name]
        repeated = f.is_repeated if hasattr(f, "is_repeated") else f.label == F.LABEL_REPEATED
        if not repeated and len(values) > 1:
            raise RefusedError(f"{said.key} takes one {name!r}, not {len(values)}")
        for value in values:
            if f.type in ints and not value.lstrip("-").isdigit():
                raise RefusedError(f"{said.key}'s {name!r} is a whole number, not {value[:40]!r}")
            if f.type == F.TYPE_BOOL and value.lower() not in ("true", "false"):
                raise RefusedError(f"{said.key}'s {name!r} is true or false, not {value[:40]!r}")
            if f.type == F.TYPE_MESSAGE:
                raise RefusedError(f"{said.key}'s {name!r} is not read from a query")
