"""What a request says (`attention_ref.classroom.gate.parameters`): refused first, then the
controls."""

from __future__ import annotations

import json

import pytest

from attention_ref.classroom.gate.access import rules
from attention_ref.classroom.gate.access_table import Access
from attention_ref.classroom.gate.parameters import (
    HAND_READ,
    MAX_DEPTH,
    RefusedError,
    json_depth,
    read_request,
    route_parameters,
)
from attention_ref.classroom.gate.routes import served_routes

RUN, OTHER = "a" * 32, "b" * 32


def said(
    key: str,
    method: str = "POST",
    body: object = None,
    query: dict | None = None,
    path: dict | None = None,
    judged: bool = True,
):
    raw = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    return read_request(key, method, path or {}, query or {}, raw, judged=judged)


REFUSED = [
    ("a name the route does not read", "POST /mlflow/runs/create", "POST",
     {"experiment_id": "1", "owner": "x"}, None, "'owner'"),
    ("a JSON twin of a field", "POST /mlflow/runs/create", "POST",
     {"experiment_id": "1", "experimentId": "2"}, None, "'experimentId'"),
    ("a query on a route that reads its body", "POST /mlflow/runs/create", "POST",
     {"experiment_id": "1"}, {"experiment_id": ["2"]}, "query"),
    ("run_id and run_uuid, two runs", "POST /mlflow/runs/update", "POST",
     {"run_id": RUN, "run_uuid": OTHER, "status": "FINISHED"}, None, "run_id and run_uuid"),
    ("upload-artifact naming two runs", "POST /mlflow/upload-artifact", "POST", b"file",
     {"run_id": [RUN], "run_uuid": [OTHER], "path": ["answer.json"]}, "run_id and run_uuid"),
    ("a wrong type deep in the body", "POST /mlflow/runs/log-batch", "POST",
     {"run_id": RUN, "tags": [1]}, None, "log-batch"),
    ("an object for a string", "POST /mlflow/runs/create", "POST", {"experiment_id": {"a": 1}},
     None, "runs/create"),
    ("a NUL in a query", "GET /mlflow/runs/get", "GET", None, {"run_id": ["\x00"]}, "NUL"),
    ("a NUL in a body's string", "POST /mlflow/runs/set-tag", "POST",
     {"run_id": RUN, "key": "a\x00", "value": "v"}, None, "NUL"),
    ("a body nested too deep", "POST /mlflow/runs/search", "POST",
     b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), None, "nests"),
    ("a body that is not JSON", "POST /mlflow/runs/search", "POST", b"{not json", None,
     "not JSON"),
    ("a JSON array", "POST /mlflow/runs/search", "POST", [1], None, "array"),
    ("two values of a field that takes one", "GET /mlflow/runs/get", "GET", None,
     {"run_id": [RUN, RUN]}, "one 'run_id'"),
    ("a word for a whole number", "GET /mlflow/metrics/get-history", "GET", None,
     {"run_id": [RUN], "metric_key": ["m"], "max_results": ["ten"]}, "whole number"),
    ("a route with no parameters known", "POST /mlflow/new-route", "POST", {}, None,
     "no parameters"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "key", "method", "body", "query", "reason"), REFUSED, ids=[r[0] for r in REFUSED]
)
def test_a_students_request_is_refused_for_what_it_says(what, key, method, body, query, reason):
    with pytest.raises(RefusedError, match=reason) as e:
        said(key, method, body, query)
    assert "\n" not in str(e.value)


CONTROLS = [
    ("POST /mlflow/runs/create", "POST", {"experiment_id": "1", "run_name": "r", "tags": []},
     None),
    ("POST /mlflow/runs/update", "POST", {"run_id": RUN, "run_uuid": RUN, "status": "KILLED"},
     None),
    ("POST /mlflow/upload-artifact", "POST", b"\x00 a file's bytes, never parsed",
     {"run_id": [RUN], "run_uuid": [RUN], "path": ["x.bin"]}),
    ("POST /mlflow/runs/log-batch", "POST",
     {"run_id": RUN, "tags": [{"key": "k", "value": "v"}],
      "metrics": [{"key": "m", "value": 1.5, "timestamp": 1, "step": 0}]}, None),
    ("GET /mlflow/runs/get", "GET", None, {"run_id": [RUN]}),
    ("GET /mlflow/metrics/get-history-bulk", "GET", None,
     {"run_id": [RUN, OTHER], "metric_key": ["m"]}),
    ("POST /mlflow/runs/search", "POST",
     b"[" * 0 + json.dumps({"experiment_ids": ["1"], "filter": "a" * 10}).encode(), None),
]  # fmt: skip


@pytest.mark.parametrize(("key", "method", "body", "query"), CONTROLS, ids=[c[0] for c in CONTROLS])
def test_the_controls_what_the_routes_read_passes(key, method, body, query):
    got = said(key, method, body, query)
    assert got.key == key


def test_a_teachers_request_is_bounded_but_not_judged_by_name():
    got = said(
        "POST /mlflow/experiments/create", "POST", {"name": "x", "whatever": 1}, judged=False
    )
    assert got.body["whatever"] == 1
    with pytest.raises(RefusedError, match="NUL"):
        said("GET /mlflow/runs/get", "GET", None, {"run_id": ["\x00"]}, judged=False)
    with pytest.raises(RefusedError, match="run_id and run_uuid"):
        said("POST /mlflow/runs/update", "POST", {"run_id": RUN, "run_uuid": OTHER}, judged=False)


def test_json_depth_counts_brackets_outside_strings_without_recursion():
    assert json_depth(b"{}") == 1 and json_depth(b'{"a": [1, {"b": []}]}') == 4
    assert json_depth(b'{"a": "[[[[{{{{\\"]]"}') == 1  # brackets in a string, an escaped quote
    assert json_depth(b"[" * 100_000 + b"]" * 100_000) == 100_000  # no RecursionError
    assert json_depth(b"7") == 0


def test_every_route_open_to_students_has_its_parameters_and_no_entry_is_stale():
    table = rules()
    student = {
        r.key: r.method for r in served_routes() if table.get(r.key) not in (None, Access.TEACHER)
    }
    unknown = sorted(k for k, m in student.items() if route_parameters(k, m) is None)
    assert unknown == [], "routes open to students with no parameters known"
    stale = sorted(set(HAND_READ) - set(student))
    assert stale == [], "HAND_READ entries that are no route open to students"
    # the control: a teacher's route is not in the student's tables
    assert route_parameters("POST /mlflow/users/create", "POST") is None
