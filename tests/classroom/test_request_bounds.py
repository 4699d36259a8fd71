"""What one request may ask (`attention_ref.classroom.gate.request_bounds`), pure: MLflow's page
tokens pass and no other shape does; a percentile is a percent; each cost bound refuses one
past it and passes the bound itself; the UI's own GraphQL queries fit with room."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import mlflow
import pytest

from attention_ref.classroom.gate.access import rules
from attention_ref.classroom.gate.access_table import Access
from attention_ref.classroom.gate.parameters import (
    RefusedError,
    Said,
    graphql_refusal,
    read_request,
    route_parameters,
)
from attention_ref.classroom.gate.request_bounds import (
    MAX_FILTER_CHARS,
    MAX_FILTER_CONDITIONS,
    MAX_GRAPHQL_CHARS,
    MAX_GRAPHQL_DEPTH,
    MAX_GRAPHQL_TOKENS,
    MAX_IDS,
    MAX_ORDER_BY,
    MAX_ORDER_BY_CHARS,
    MAX_RESULTS,
    MAX_SEARCH_RESULTS,
    PAGE_TOKENS,
    Token,
    conditions,
)
from attention_ref.classroom.gate.routes import served_routes

RUNS = "POST /mlflow/runs/search"
MODELS = "POST /mlflow/logged-models/search"
METRICS = "POST /mlflow/traces/metrics"


def _b64(value: object) -> str:
    raw = value if isinstance(value, bytes) else json.dumps(value).encode()
    return base64.b64encode(raw).decode()


#: the 24 shapes of token issue 57's finding 8 tried (13 of them were 500 on logged models)
BAD_TOKENS = {
    "base64 of null": _b64(None),
    "base64 of a list": _b64([1]),
    "offset -1": _b64({"offset": -1}),
    "offset a word": _b64({"offset": "x"}),
    "offset 0": _b64({"offset": 0}),
    "offset 1.5": _b64({"offset": 1.5}),
    "offset 10**30": _b64({"offset": 10**30}),
    "offset 2**63": _b64({"offset": 2**63}),
    "offset a numeral": _b64({"offset": "5"}),
    "offset a list": _b64({"offset": [1]}),
    "offset an object": _b64({"offset": {}}),
    "no offset": _b64({}),
    "offset true": _b64({"offset": True}),
    "not base64": "!!!",
    "an Arabic digit": "\u0663",
    "1": "1",
    "huge": "A" * 100_000,
    "base64 of no UTF-8": _b64(b"\xff\xfe"),
    "base64 of a number": _b64(7),
    "base64 of a string": _b64("x"),
    "base64 of broken JSON": _b64(b"{"),
    "bad padding": "abc",
    "a NUL inside": _b64(b'{"offset": 1}\x00'),
}


def said(key: str, body: dict, *, judged: bool = True) -> Said:
    return read_request(key, "POST", {}, {}, json.dumps(body).encode(), judged=judged)


def test_every_student_route_that_reads_a_page_token_has_its_shape_and_none_is_stale():
    table = rules()
    student = {
        r.key: r.method for r in served_routes() if table.get(r.key) not in (None, Access.TEACHER)
    }
    reading = set()
    for key, method in student.items():
        read, _ = route_parameters(key, method) or (None, None)
        if read is not None and "page_token" in (*read.query, *read.body):
            reading.add(key)
    assert sorted(reading - set(PAGE_TOKENS)) == [], "routes with page tokens of no known shape"
    assert sorted(set(PAGE_TOKENS) - reading) == [], "PAGE_TOKENS entries that read no token"


@pytest.mark.parametrize("key", [RUNS, MODELS])
@pytest.mark.parametrize("token", BAD_TOKENS.values(), ids=BAD_TOKENS.keys())
def test_a_page_token_mlflow_did_not_make_is_refused_in_one_line(key, token):
    with pytest.raises(RefusedError, match="page_token") as e:
        said(key, {"experiment_ids": ["1"], "page_token": token})
    assert "\n" not in str(e.value)
    # a teacher's request too: a malformed token is no cost, it is a 500
    with pytest.raises(RefusedError, match="page_token"):
        said(key, {"experiment_ids": ["1"], "page_token": token}, judged=False)


def test_the_tokens_mlflow_makes_pass():
    from mlflow.utils.search_utils import SearchLoggedModelsPaginationToken, SearchUtils

    offset = SearchUtils.create_page_token(1000).decode()
    for key in (RUNS, "POST /mlflow/experiments/search", "POST /mlflow/traces/search"):
        assert said(key, {"page_token": offset})
    models = SearchLoggedModelsPaginationToken(["1"], "name = 'm'", [{"field_name": "name"}], 100)
    assert said(MODELS, {"experiment_ids": ["1"], "page_token": models.encode()})
    records = _b64(b"1700000000000:dr-0123")
    got = read_request(
        "GET /mlflow/datasets/{dataset_id}/records",
        "GET",
        {"dataset_id": "d-1"},
        {"page_token": [records]},
        b"",
        judged=True,
    )
    assert got.query["page_token"] == [records]
    # the control: an empty token is no token; a route where MLflow makes none takes none
    assert said(RUNS, {"page_token": ""})
    with pytest.raises(RefusedError, match="one page"):
        said(METRICS, {"experiment_ids": ["1"], "page_token": offset})
    assert PAGE_TOKENS[METRICS] is Token.NONE


def _aggregation(**fields: object) -> dict:
    return {
        "experiment_ids": ["1"],
        "view_type": "TRACES",
        "metric_name": "latency",
        "aggregations": [fields],
    }


@pytest.mark.parametrize(
    "fields",
    [
        {"aggregation_type": "COUNT", "percentile_value": 1.5},
        {"percentile_value": 1.5},
        {"aggregation_type": "PERCENTILE"},
        {"aggregation_type": "PERCENTILE", "percentile_value": 150},
        {"aggregation_type": "PERCENTILE", "percentile_value": -1},
        {"aggregation_type": "PERCENTILE", "percentile_value": "Infinity"},
        {"aggregation_type": "PERCENTILE", "percentile_value": "NaN"},
    ],
)
def test_a_percentile_is_a_percent_of_a_percentile_aggregation(fields):
    with pytest.raises(RefusedError, match="percentile") as e:
        said(METRICS, _aggregation(**fields))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("value", [0, 1.5, 50, 100, "99.9"])
def test_the_percents_pass(value):
    assert said(METRICS, _aggregation(aggregation_type="PERCENTILE", percentile_value=value))
    assert said(METRICS, _aggregation(aggregation_type="COUNT"))


def test_a_filters_conditions_are_counted_outside_its_quotes():
    assert conditions("") == 0
    assert conditions("metrics.loss < 1") == 1
    assert conditions("tags.`a and b` = 'x and y' AND params.p = \"or\" or attributes.x = 1") == 3
    assert conditions("attributes.run_id IN ('a', 'b', 'c')") == 1


def _filter(n: int) -> str:
    return " and ".join(f"params.p{i} = 'a'" for i in range(n))


def _run_list(chars: int) -> str:
    head, tail = "attributes.run_id IN (", ")"
    return head + "'" + "a" * (chars - len(head) - len(tail) - 2) + "'" + tail


COSTS = [
    (
        "filter length",
        {"filter": _run_list(MAX_FILTER_CHARS)},
        {"filter": _run_list(MAX_FILTER_CHARS + 1)},
        "characters",
    ),
    (
        "filter conditions",
        {"filter": _filter(MAX_FILTER_CONDITIONS)},
        {"filter": _filter(MAX_FILTER_CONDITIONS + 1)},
        "conditions",
    ),
    (
        "sort keys",
        {"order_by": ["attributes.start_time DESC"] * MAX_ORDER_BY},
        {"order_by": ["attributes.start_time DESC"] * (MAX_ORDER_BY + 1)},
        "sorts by",
    ),
    (
        "a sort key's length",
        {"order_by": ["a" * MAX_ORDER_BY_CHARS]},
        {"order_by": ["a" * (MAX_ORDER_BY_CHARS + 1)]},
        "sort key",
    ),
    (
        "experiment ids",
        {"experiment_ids": [str(i) for i in range(MAX_IDS)]},
        {"experiment_ids": [str(i) for i in range(MAX_IDS + 1)]},
        "experiment_ids",
    ),
    (
        "a page",
        {"max_results": MAX_SEARCH_RESULTS},
        {"max_results": MAX_SEARCH_RESULTS + 1},
        "max_results",
    ),
]


@pytest.mark.parametrize(("what", "at", "past", "reason"), COSTS, ids=[c[0] for c in COSTS])
def test_each_cost_passes_at_its_bound_and_is_refused_past_it(what, at, past, reason):
    assert said(RUNS, {"experiment_ids": ["1"], **at})
    with pytest.raises(RefusedError, match=reason) as e:
        said(RUNS, {"experiment_ids": ["1"], **past})
    assert "\n" not in str(e.value)
    # a teacher's search is not bounded by a student's costs
    assert said(RUNS, {"experiment_ids": ["1"], **past}, judged=False)


def test_other_routes_filters_ids_and_pages_are_bounded_too():
    with pytest.raises(RefusedError, match="conditions"):
        said("POST /mlflow/datasets/search", {"filter_string": _filter(MAX_FILTER_CONDITIONS + 1)})
    with pytest.raises(RefusedError, match="trace_ids"):
        said("POST /mlflow/traces/batchGetInfos", {"trace_ids": ["t"] * (MAX_IDS + 1)})
    with pytest.raises(RefusedError, match="run_id"):
        read_request(
            "GET /mlflow/metrics/get-history-bulk",
            "GET",
            {},
            {"run_id": ["r"] * (MAX_IDS + 1), "metric_key": ["m"]},
            b"",
            judged=True,
        )
    history = {"run_id": ["a" * 32], "metric_key": ["m"], "max_results": [str(MAX_RESULTS)]}
    key = "GET /mlflow/metrics/get-history"
    assert read_request(key, "GET", {}, history, b"", judged=True)
    with pytest.raises(RefusedError, match="max_results"):
        past = {**history, "max_results": [str(MAX_RESULTS + 1)]}
        read_request(key, "GET", {}, past, b"", judged=True)


def _graphql(query: str, variables: dict | None = None) -> str | None:
    body = {"query": query, **({"variables": variables} if variables is not None else {})}
    return graphql_refusal(said("POST /graphql", body))


def _nested(depth: int) -> str:
    return "query { " + "a { " * (depth - 1) + "b" + " }" * (depth - 1) + " }"


def test_a_graphql_query_is_bounded_before_and_after_it_is_parsed():
    assert "characters" in (_graphql("{ a }" + " " * MAX_GRAPHQL_CHARS) or "")
    assert "tokens" in (_graphql("{ " + "a " * MAX_GRAPHQL_TOKENS + "}") or "")
    assert _graphql(_nested(MAX_GRAPHQL_DEPTH)) is None
    assert "nest" in (_graphql(_nested(MAX_GRAPHQL_DEPTH + 1)) or "")
    inline = 'query { mlflowSearchRuns(input: {filter: "%s"}) { runs { info { runUuid } } } }'
    assert _graphql(inline % _filter(MAX_FILTER_CONDITIONS)) is None
    assert "conditions" in (_graphql(inline % _filter(MAX_FILTER_CONDITIONS + 1)) or "")
    ids = "[" + ", ".join(f'"{i}"' for i in range(MAX_IDS + 1)) + "]"
    listed = "query { mlflowSearchRuns(input: {experimentIds: %s}) { runs { info { runUuid } } } }"
    assert "values" in (_graphql(listed % ids) or "")
    query = "query Q($data: MlflowSearchRunsInput) { mlflowSearchRuns(input: $data) { runs } }"
    many = {"data": {"experimentIds": ["1"], "filter": _filter(MAX_FILTER_CONDITIONS + 1)}}
    assert "conditions" in (_graphql(query, many) or "")
    assert "values" in (_graphql(query, {"data": {"experimentIds": ["1"] * (MAX_IDS + 1)}}) or "")
    assert _graphql(query, {"data": {"experimentIds": ["1"], "filter": _filter(3)}}) is None


def _ui_queries() -> list[str]:
    """The GraphQL queries MLflow's UI sends, read from its bundle (``gql`` templates)."""
    bundle = Path(mlflow.__file__).parent / "server" / "js" / "build" / "static" / "js"
    found = set()
    for script in bundle.glob("*.js"):
        text = script.read_text(encoding="utf-8", errors="replace")
        found |= {m.group(1) for m in re.finditer(r"`(\s*query\s[^`]*)`", text)}
    return sorted(found)


def test_the_uis_own_graphql_queries_pass_with_room():
    from graphql import parse
    from graphql.language import FieldNode

    queries = _ui_queries()
    assert len(queries) >= 4 and any("mlflowSearchRuns" in q for q in queries)
    for query in queries:
        assert _graphql(query) is None, query[:80]
        assert len(query) * 4 <= MAX_GRAPHQL_CHARS

        def depth(node: object, d: int = 0) -> int:
            chosen = getattr(node, "selection_set", None)
            if chosen is None:
                return d
            return max(depth(s, d + isinstance(s, FieldNode)) for s in chosen.selections)

        assert max(depth(d) for d in parse(query).definitions) + 2 <= MAX_GRAPHQL_DEPTH
