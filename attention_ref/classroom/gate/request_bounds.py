"""What one request may ask of the class server: its costs bounded, its page tokens and trace
aggregations of the shapes MLflow makes, each refusal one line (400).

The gate (`attention_ref.classroom.gate.parameters.read_request`) asks these after it has read a
request. Each function returns why a request is refused, or ``None``; the gate raises.

**Shapes, anyone's request** (issue 57, finding 8: MLflow 3.17 answered 500 to them):

* a **page token** (`page_token_refusal`) must be one MLflow makes on that route
  (`PAGE_TOKENS`): base64 of ``{"offset": n}`` (``SearchUtils.create_page_token``; MLflow
  read ``bnVsbA==``, base64 of ``null``, as an object, and ``"٣"`` as ASCII: 500), base64 of a
  logged-models search (``SearchLoggedModelsPaginationToken``: ``"1"`` was 500), base64 of a
  dataset's ``created_time:record_id``; on the routes where MLflow makes none, none;
* a **trace metric's aggregation** (`aggregation_refusal`): ``percentile_value`` with
  ``PERCENTILE`` and only there, a finite number in [0, 100] (MLflow's
  ``MetricAggregation``: a percent, 50 the median; ``1.5`` on a ``COUNT``, 150, -1, infinity
  or no value raised a ``ValueError``: 500).

**Costs, a student's request** (finding 5: an 8 MiB filter took 4.9 s, 100k experiment ids
3.8 s, an 8 MiB GraphQL query 3.7 s; four at once took a classmate's median from 18 ms to
417 ms). Each bound is what the class's commands and MLflow's UI send, with a margin; the
numbers measured on MLflow 3.17 and PostgreSQL 15 (a shared 2-core machine):

* `MAX_FILTER_CHARS`, `MAX_FILTER_CONDITIONS`: a search's filter. Its conditions cost most:
  each becomes a join, and PostgreSQL's planner grows worse than linearly in them (200
  ``metrics.loss < 1`` joined by ``and``, 4 KiB, took 27.6 s on an empty experiment; 49 took
  0.5 s; 10, about 0.05 s). Its length costs MLflow's parser (sqlparse) up to 0.19 s per 16 KiB
  (nested parentheses), and 0.03 s for the UI's longest filters;
* `MAX_ORDER_BY`, `MAX_ORDER_BY_CHARS`: a search's sort keys (each a join as well);
* `MAX_IDS`: the ids one request names (experiments, runs, traces);
* `MAX_RESULTS`, `MAX_SEARCH_RESULTS`: one page;
* `MAX_GRAPHQL_CHARS`, `MAX_GRAPHQL_TOKENS`, `MAX_GRAPHQL_DEPTH`: a GraphQL query, bounded
  before it is parsed (the gate parses it, MLflow again), and the filters and id lists it
  carries (`graphql_cost_refusal`), which MLflow's GraphQL hands to the same searches.

A teacher's requests are bounded in shape only: the teacher's commands (``server grade``)
search every student's experiment, and the teacher owns the server.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from enum import Enum
from typing import Any

#: a search filter's characters. The class's commands send at most about 100 (``attnref
#: results``: ``tags.`mlflow.parentRunId` = '<run id>' and attributes.status = 'FINISHED'``);
#: MLflow's UI sends what a student types, and builds ``attributes.run_id IN ('<id>', ...)``
#: for pinned runs and for a chart's group of runs: 36 characters a run, so 16 KiB is a group
#: of 455 runs (a class of 30 with 15 runs each). MLflow parses one of 16 KiB in 0.03 s (that
#: list) to 0.19 s (its costliest shape)
MAX_FILTER_CHARS = 16 * 1024

#: a filter's conditions (``and`` between them): the class's commands use 2, a UI's group
#: filter one per grouping key and the run list; 10 cost about 0.05 s on PostgreSQL, 49 about
#: 0.5 s, 200 27.6 s (each a join)
MAX_FILTER_CONDITIONS = 10

#: a search's sort keys: the class's commands and MLflow's UI send one
#: (``attributes.start_time DESC``, or the column a student sorts by); each is a join too
MAX_ORDER_BY = 4

#: one sort key's characters: MLflow's longest key (250, ``MAX_ENTITY_KEY_LENGTH``) in
#: backticks, its prefix (``metrics.``) and direction, with room
MAX_ORDER_BY_CHARS = 512

#: the ids one request names (``experiment_ids``, ``run_ids``, ``trace_ids``, several
#: ``run_id``): MLflow's own bound on the runs of one metric-history request
#: (``MAX_RUNS_GET_METRIC_HISTORY_BULK``); a student reads the class's experiment and one
#: of their own per assignment (``attnref runs`` names them all in one search)
MAX_IDS = 100

#: one page of anything: the largest page MLflow's own client asks for (a metric's history,
#: ``GET_METRIC_HISTORY_MAX_RESULTS``)
MAX_RESULTS = 25_000

#: one page of a search (runs, experiments, models, datasets, traces): the largest MLflow's
#: own client asks for (``mlflow.search_runs``: ``NUM_RUNS_PER_PAGE_PANDAS``); the class's
#: commands ask 1,000, the UI 100 to 1,000. MLflow itself allows 50,000 runs, 200,000
#: model versions
MAX_SEARCH_RESULTS = 10_000

#: a GraphQL query's characters: the UI's largest (``GetRun``, ``SearchRuns``) is 1,457, some
#: 1,700 once Apollo adds ``__typename`` to each selection; graphql-core parses 16 KiB of the
#: costliest shape in about 0.24 s without `MAX_GRAPHQL_TOKENS`
MAX_GRAPHQL_CHARS = 16 * 1024

#: a GraphQL query's tokens, counted by the parser as it goes (``max_tokens``): the UI's
#: largest has 120 (about 140 with Apollo's ``__typename``)
MAX_GRAPHQL_TOKENS = 1000

#: how deep a GraphQL query's fields nest: the UI's deepest is 6 (MLflow refuses past 10)
MAX_GRAPHQL_DEPTH = 8

#: the longest page token (a logged-models search's carries its filter and ids)
MAX_PAGE_TOKEN_CHARS = 64 * 1024

#: the largest offset a page token names (PostgreSQL's ``OFFSET`` is a ``bigint``)
MAX_PAGE_OFFSET = 2**63 - 1

#: the names of a request that carry a search filter
FILTERS = ("filter", "filter_string", "filters", "filter_string1", "filter_string2", "base_filter")


class Token(Enum):
    """The page tokens MLflow makes, by the store code that reads them."""

    OFFSET = 'base64 of {"offset": n}'  # SearchUtils (and SearchTraceUtils)
    LOGGED_MODELS = "base64 of a logged-models search"  # SearchLoggedModelsPaginationToken
    RECORDS = "base64 of created_time:record_id"  # SqlAlchemyStore._load_dataset_records
    NONE = "none: MLflow answers this route in one page"


#: every route open to students that reads a ``page_token``, and the tokens MLflow makes there
#: (``tests/classroom/test_request_bounds.py`` checks the list against MLflow's messages)
PAGE_TOKENS: dict[str, Token] = {
    "POST /mlflow/runs/search": Token.OFFSET,
    "GET /mlflow/experiments/search": Token.OFFSET,
    "POST /mlflow/experiments/search": Token.OFFSET,
    "GET /mlflow/metrics/get-history": Token.OFFSET,
    "GET /mlflow/registered-models/search": Token.OFFSET,
    "GET /mlflow/model-versions/search": Token.OFFSET,
    "GET /mlflow/traces": Token.OFFSET,
    "POST /mlflow/traces/search": Token.OFFSET,
    "GET /mlflow/datasets/search": Token.OFFSET,
    "POST /mlflow/datasets/search": Token.OFFSET,
    "POST /mlflow/logged-models/search": Token.LOGGED_MODELS,
    "GET /mlflow/datasets/{dataset_id}/records": Token.RECORDS,
    "GET /mlflow/artifacts/list": Token.NONE,
    "GET /mlflow/logged-models/{model_id}/artifacts/directories": Token.NONE,
    "GET /mlflow/datasets/{dataset_id}": Token.NONE,
    "POST /mlflow/traces/metrics": Token.NONE,  # "TODO: Implement pagination" (MLflow 3.17)
    "GET /mlflow/unified-traces": Token.NONE,  # not implemented outside Databricks
}

_BAD = object()
_RECORD_CURSOR = re.compile(r"\d{1,19}:[^\x00]+", re.ASCII)
_LOGGED_MODEL_KEYS = {"experiment_ids", "filter_string", "order_by", "offset"}


def _decoded(token: str, *, as_json: bool = True) -> Any:
    """``token`` decoded as MLflow encodes it (strict base64 of UTF-8; then JSON), or `_BAD`."""
    try:
        text = base64.b64decode(token, validate=True).decode("utf-8")
        return json.loads(text) if as_json else text
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError):
        return _BAD


def _offset(value: Any, least: int) -> bool:
    return type(value) is int and least <= value <= MAX_PAGE_OFFSET


def _token_ok(kind: Token, token: str) -> bool:
    """Whether ``token`` is of the shape MLflow makes for ``kind``."""
    if kind is Token.NONE or len(token) > MAX_PAGE_TOKEN_CHARS:
        return False
    if kind is Token.RECORDS:
        cursor = _decoded(token, as_json=False)
        return isinstance(cursor, str) and _RECORD_CURSOR.fullmatch(cursor) is not None
    found = _decoded(token)
    if not isinstance(found, dict):
        return False
    if kind is Token.OFFSET:  # MLflow makes an offset of 1 or more (it refuses 0)
        return set(found) == {"offset"} and _offset(found["offset"], 1)
    ids, words, order = (found.get(k) for k in ("experiment_ids", "filter_string", "order_by"))
    return (
        set(found) <= _LOGGED_MODEL_KEYS
        and isinstance(ids, list)
        and all(isinstance(i, str) for i in ids)
        and isinstance(words, str | None)
        and (order is None or (isinstance(order, list) and all(isinstance(o, dict) for o in order)))
        and _offset(found.get("offset", 0), 0)
    )


def page_token_refusal(key: str, tokens: list[Any]) -> str | None:
    """Why route ``key``'s page token (every value a request gives it) is not one MLflow made
    there; ``None`` for none, an empty one, or one of its shape (`PAGE_TOKENS`)."""
    kind = PAGE_TOKENS.get(key)
    for token in tokens:
        if kind is None or token in ("", None):
            continue
        if not isinstance(token, str) or not _token_ok(kind, token):
            shown = str(token)[:40]
            return (
                f"{key}'s page_token {shown!r} is not one the server made (its tokens are "
                f"{kind.value}): ask for the first page without one"
            )
    return None


def aggregation_refusal(key: str, aggregations: Any) -> str | None:
    """Why a trace-metrics request's aggregations cannot be computed: ``percentile_value``
    goes with ``PERCENTILE`` and only there, a percent (a finite number in [0, 100], 50 the
    median), as MLflow's ``MetricAggregation`` says."""
    if key != "POST /mlflow/traces/metrics" or not isinstance(aggregations, list):
        return None
    from mlflow.protos.service_pb2 import AggregationType

    percentile = ("PERCENTILE", AggregationType.Value("PERCENTILE"))
    for one in aggregations:
        if not isinstance(one, dict):
            continue
        kind, value = one.get("aggregation_type"), one.get("percentile_value")
        if kind not in percentile:
            if value is not None:
                return f"percentile_value goes with aggregation_type PERCENTILE, not {kind!r}"
            continue
        try:
            number = float(value)  # proto3's JSON also writes a double as a string
        except (TypeError, ValueError):
            return "a PERCENTILE aggregation takes a percentile_value (a percent, 0 to 100)"
        if not (math.isfinite(number) and 0 <= number <= 100):
            return f"percentile_value is a percent, from 0 to 100, not {str(value)[:40]}"
    return None


_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`[^`]*`")
_JOINER = re.compile(r"\b(?:and|or)\b", re.IGNORECASE)


def conditions(filter_string: str) -> int:
    """How many conditions a search filter holds: its ``and`` (and ``or``) outside quoted
    strings and backquoted names, plus one (none for an empty filter)."""
    if not filter_string.strip():
        return 0
    return len(_JOINER.findall(_QUOTED.sub(" ", filter_string))) + 1


def filter_refusal(name: str, value: str) -> str | None:
    """Why one search filter is too costly to run, in one line."""
    if len(value) > MAX_FILTER_CHARS:
        return f"a search's {name} has at most {MAX_FILTER_CHARS} characters, not {len(value)}"
    if (n := conditions(value)) > MAX_FILTER_CONDITIONS:
        return f"a search's {name} has at most {MAX_FILTER_CONDITIONS} conditions, not {n}"
    return None


def _items(query: dict[str, list[str]], body: dict[str, Any], name: str) -> list[Any]:
    """Every value of ``name`` in the query and the body, a list's items one by one."""
    found: list[Any] = list(query.get(name, []))
    value = body.get(name)
    if isinstance(value, list):
        found += value
    elif value is not None:
        found.append(value)
    return found


def cost_refusal(
    key: str, query: dict[str, list[str]], body: dict[str, Any], several: tuple[str, ...] = ()
) -> str | None:
    """Why a student's request asks more than one request may (the module's bounds)."""
    for name in FILTERS:
        for value in _items(query, body, name):
            if isinstance(value, str) and (why := filter_refusal(name, value)):
                return why
    orders = _items(query, body, "order_by")
    if len(orders) > MAX_ORDER_BY:
        return f"a search sorts by at most {MAX_ORDER_BY} keys, not {len(orders)}"
    for order in orders:
        if len(order if isinstance(order, str) else json.dumps(order)) > MAX_ORDER_BY_CHARS:
            return f"a sort key has at most {MAX_ORDER_BY_CHARS} characters"
    for name in sorted({*query, *body}):
        ids = name.endswith("_ids") or name in several
        if ids and (n := len(_items(query, body, name))) > MAX_IDS:
            return f"one request names at most {MAX_IDS} {name}, not {n}"
    most = MAX_SEARCH_RESULTS if "/search" in key else MAX_RESULTS
    for value in _items(query, body, "max_results"):
        try:
            if int(value) > most:
                return f"{key} gives at most {most} results a page (max_results), not {value}"
        except (TypeError, ValueError):
            continue  # its type is judged with the route's message
    return None


def graphql_size_refusal(query: str) -> str | None:
    """Why a GraphQL query is too large to parse."""
    if len(query) > MAX_GRAPHQL_CHARS:
        return f"a GraphQL query has at most {MAX_GRAPHQL_CHARS} characters, not {len(query)}"
    return None


def graphql_cost_refusal(document: Any, variables: Any) -> str | None:
    """Why a parsed GraphQL query (``document``, graphql-core's) asks too much: fields nested
    deeper than `MAX_GRAPHQL_DEPTH`, or a filter or a list of ids, in the query's text or its
    ``variables``, past the bounds of a REST request."""
    from graphql.language import (
        ArgumentNode,
        FieldNode,
        ListValueNode,
        Node,
        ObjectFieldNode,
        StringValueNode,
    )

    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, FieldNode):
            depth += 1
            if depth > MAX_GRAPHQL_DEPTH:
                return f"a GraphQL query's fields nest at most {MAX_GRAPHQL_DEPTH} deep"
        if isinstance(node, ListValueNode) and len(node.values) > MAX_IDS:
            return f"a GraphQL list holds at most {MAX_IDS} values, not {len(node.values)}"
        named = isinstance(node, ObjectFieldNode | ArgumentNode) and _is_filter(node.name.value)
        words = node.value.value if named and isinstance(node.value, StringValueNode) else ""
        if why := filter_refusal("filter", words):
            return why
        for attribute in node.keys:
            child = getattr(node, attribute, None)
            for item in child if isinstance(child, tuple | list) else (child,):
                if isinstance(item, Node):
                    stack.append((item, depth))
    return _variables_refusal(variables)


def _is_filter(name: str) -> bool:
    return name in FILTERS or name in ("filterString", "baseFilter")


def _variables_refusal(variables: Any) -> str | None:
    """GraphQL's variables: each filter within `filter_refusal`'s bounds, each list within
    `MAX_IDS`, each other string within `MAX_FILTER_CHARS`."""
    stack = [("variables", variables)]
    while stack:
        name, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.items())
        elif isinstance(value, list):
            if len(value) > MAX_IDS:
                return f"GraphQL's {name} holds at most {MAX_IDS} values, not {len(value)}"
            stack.extend((name, item) for item in value)
        elif isinstance(value, str):
            if _is_filter(name) and (why := filter_refusal("filter", value)):
                return why
            if len(value) > MAX_FILTER_CHARS:
                return f"GraphQL's {name} has at most {MAX_FILTER_CHARS} characters"
    return None
