"""A student's costly requests refused in one line, over real HTTP through the edge; the class's
commands, MLflow's own page tokens and the UI's own GraphQL queries still answered.

Issue 57's finding 5 on c0e9f9b: ``runs/search`` with an 8 MiB filter took 4.9 s, 100k
experiment ids 3.8 s, an 8 MiB GraphQL query 3.7 s; four at once took a classmate's median
from 18 ms to 417 ms. A filter of 200 conditions (4 KiB) took 27.6 s on an empty experiment.
Each was answered (200) before; here each is a 400 that says which bound, from the gate,
before MLflow parses a filter or PostgreSQL plans a join. The bounds and where each number
comes from: `attention_ref.classroom.gate.request_bounds`.
"""

from __future__ import annotations

from typing import Any

import pytest

from attention_ref.classroom.connection.client import rest
from attention_ref.classroom.gate.refusals import REFUSAL
from attention_ref.classroom.gate.request_bounds import (
    MAX_FILTER_CHARS,
    MAX_FILTER_CONDITIONS,
    MAX_GRAPHQL_CHARS,
    MAX_GRAPHQL_DEPTH,
    MAX_IDS,
    MAX_ORDER_BY,
    MAX_SEARCH_RESULTS,
)
from tests.classroom.conftest import EXPERIMENT
from tests.classroom.test_request_bounds import _ui_queries

pytestmark = pytest.mark.slow

WHO = "dave"
SEARCH = "/api/2.0/mlflow/runs/search"


@pytest.fixture(scope="module")
def dave(server, students) -> dict[str, Any]:
    """Dave's account, the class experiment's id, and three runs of his own in it."""
    auth = (WHO, students[WHO])
    found = rest(
        server.url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=auth,
        query={"experiment_name": EXPERIMENT},
    )[1]
    exp = found["experiment"]["experiment_id"]
    runs = []
    for i in range(3):
        made = rest(
            server.url,
            "/api/2.0/mlflow/runs/create",
            {"experiment_id": exp, "run_name": f"costly-{i}", "tags": [{"key": "k", "value": "v"}]},
            auth=auth,
        )
        assert made[0] == 200, made
        runs.append(made[1]["run"]["info"]["run_id"])
    return {"auth": auth, "exp": exp, "runs": runs}


def _conditions(n: int) -> str:
    return " and ".join(f"params.p{i} = 'a'" for i in range(n))


def _nested(depth: int) -> str:
    return "query { " + "a { " * (depth - 1) + "b" + " }" * (depth - 1) + " }"


def _graphql_search(exp: str, filter_string: str) -> dict[str, Any]:
    query = (
        "query Q($d: MlflowSearchRunsInput) { mlflowSearchRuns(input: $d) "
        "{ runs { info { runUuid } } } }"
    )
    return {"query": query, "variables": {"d": {"experimentIds": [exp], "filter": filter_string}}}


MANY = MAX_FILTER_CONDITIONS + 1
COSTLY = [
    (
        "a filter past its length",
        SEARCH,
        lambda exp: {"filter": "attributes.run_id IN ('" + "a" * MAX_FILTER_CHARS + "')"},
        "characters",
    ),
    (
        "a filter of too many conditions",
        SEARCH,
        lambda exp: {"filter": _conditions(MANY)},
        "conditions",
    ),
    (
        "too many experiment ids",
        SEARCH,
        lambda exp: {"experiment_ids": [exp] + [str(i) for i in range(MAX_IDS)]},
        "experiment_ids",
    ),
    (
        "too many sort keys",
        SEARCH,
        lambda exp: {"order_by": ["attributes.start_time DESC"] * (MAX_ORDER_BY + 1)},
        "sorts by",
    ),
    (
        "too large a page",
        SEARCH,
        lambda exp: {"max_results": MAX_SEARCH_RESULTS + 1},
        "max_results",
    ),
    (
        "a GraphQL query past its length",
        "/graphql",
        lambda exp: {"query": "{ a }" + " " * MAX_GRAPHQL_CHARS},
        "characters",
    ),
    (
        "a GraphQL query nested too deep",
        "/graphql",
        lambda exp: {"query": _nested(MAX_GRAPHQL_DEPTH + 1)},
        "nest",
    ),
    (
        "a GraphQL filter of too many conditions",
        "/graphql",
        lambda exp: _graphql_search(exp, _conditions(MANY)),
        "conditions",
    ),
]


@pytest.mark.parametrize(("what", "endpoint", "body", "why"), COSTLY, ids=[c[0] for c in COSTLY])
def test_a_students_costly_request_is_refused_in_one_line(server, dave, what, endpoint, body, why):
    sent = body(dave["exp"])
    if endpoint == SEARCH:
        sent = {"experiment_ids": [dave["exp"]], **sent}
    status, answer = rest(server.url, endpoint, sent, auth=dave["auth"])
    assert status == 400, (status, str(answer)[:300])
    said = answer["message"] if endpoint == SEARCH else answer["errors"][0]
    assert said.startswith(REFUSAL) and why in said and "\n" not in said, answer


def test_the_classs_searches_and_mlflows_own_page_tokens_are_answered(server, dave):
    mine = f"attributes.run_id IN ('{dave['runs'][0]}', '{dave['runs'][1]}', '{dave['runs'][2]}')"
    at_bound = " and ".join([mine, *(["tags.k = 'v'"] * (MAX_FILTER_CONDITIONS - 1))])
    seen: list[str] = []
    token = None
    while True:  # one run a page: MLflow's own tokens, each passed back
        body = {"experiment_ids": [dave["exp"]], "filter": at_bound, "max_results": 1}
        if token:
            body["page_token"] = token
        status, page = rest(server.url, SEARCH, body, auth=dave["auth"])
        assert status == 200, page
        seen += [r["info"]["run_id"] for r in page.get("runs", [])]
        if not (token := page.get("next_page_token")):
            break
    assert sorted(seen) == sorted(dave["runs"])
    status, page = rest(
        server.url, "/api/2.0/mlflow/experiments/search", {"max_results": 1}, auth=dave["auth"]
    )
    assert status == 200 and page.get("next_page_token"), page
    again = {"max_results": 1, "page_token": page["next_page_token"]}
    experiments = "/api/2.0/mlflow/experiments/search"
    assert rest(server.url, experiments, again, auth=dave["auth"])[0] == 200


def test_the_uis_own_graphql_queries_are_answered(server, dave):
    search = next(q for q in _ui_queries() if "mlflowSearchRuns" in q)
    data = {"experimentIds": [dave["exp"]], "filter": "tags.k = 'v'", "maxResults": 10}
    status, answer = rest(
        server.url, "/graphql", {"query": search, "variables": {"data": data}}, auth=dave["auth"]
    )
    assert status == 200 and not answer.get("errors"), answer
    runs = answer["data"]["mlflowSearchRuns"]["runs"]
    assert {r["info"]["runUuid"] for r in runs} >= set(dave["runs"])
