"""The class server's access table against MLflow's own list of routes (no server needed).

`attention_ref.classroom.gate.routes.served_routes` reads every route from MLflow (the app
``mlflow server --app-name basic-auth`` serves, built in a child process); every one must have
exactly one rule, and every rule a route. An MLflow upgrade that adds a route fails here.
The route × role × status table over real HTTP is `tests/classroom/test_access_http.py`.
"""

from __future__ import annotations

import pytest

from attention_ref.classroom.gate import access
from attention_ref.classroom.gate.access import Role, Verdict, access_of, route_key, verdict
from attention_ref.classroom.gate.access_table import Access
from attention_ref.classroom.gate.routes import Route, served_routes


@pytest.fixture(scope="module")
def routes() -> list[Route]:
    return served_routes()


def unruled(routes: list[Route]) -> list[str]:
    """Routes MLflow serves that the table has no rule for."""
    table = access.rules()
    return sorted({r.key for r in routes} - set(table))


def test_every_route_mlflow_serves_has_a_rule(routes):
    assert len(routes) > 400  # REST 2.0/3.0, ajax-api, gateway, MCP, auth: hundreds
    assert {r.app for r in routes} == {"flask", "fastapi"}
    assert unruled(routes) == []
    # the check fails for a route MLflow might add (the negative control)
    new = Route("POST", "/api/2.0/mlflow/experiments/hand-over", "flask")
    assert unruled([*routes, new]) == ["POST /mlflow/experiments/hand-over"]


def test_every_rule_is_a_route_mlflow_serves(routes):
    """No stale rule: a route MLflow dropped leaves the table too."""
    assert sorted(set(access.rules()) - {r.key for r in routes}) == []


def test_the_auth_apps_own_routes_are_in_the_list(routes):
    """The list is MLflow's whole server: its basic-auth app's accounts, the native FastAPI
    routers (gateway, artifacts, MCP) and the Flask REST API alike."""
    keys = {r.key for r in routes}
    for key in (
        "POST /mlflow/users/create",
        "PATCH /mlflow/users/update-password",
        "POST /mlflow/users/permissions/grant",
        "POST /mlflow/roles/create",
        "PUT /mlflow-artifacts/artifacts/{artifact_path:path}",
        "POST /v1/traces",
        "POST /gateway/{endpoint_name}/mlflow/invocations",
        "GET /mlflow/mcp-servers",
        "POST /mlflow/experiments/update",
        "POST /mlflow/logged-models",
    ):
        assert key in keys, key


def test_a_route_has_one_rule(monkeypatch):
    access.rules.cache_clear()
    twice = {**access.TABLE, Access.READ: (*access.TABLE[Access.READ], "POST /mlflow/runs/create")}
    monkeypatch.setattr(access, "TABLE", twice)
    try:
        with pytest.raises(ValueError, match="POST /mlflow/runs/create has two rules"):
            access.rules()
    finally:
        access.rules.cache_clear()


def test_what_a_student_may_not_do_is_the_teachers():
    """The issue's holes: rename, tag, create, delete the class experiment; user management."""
    table = access.rules()
    for key in (
        "POST /mlflow/experiments/update",
        "POST /mlflow/experiments/set-experiment-tag",
        "POST /mlflow/experiments/delete-experiment-tag",
        "POST /mlflow/experiments/create",
        "POST /mlflow/experiments/delete",
        "POST /mlflow/experiments/restore",
        "POST /mlflow/runs/delete",
        "POST /mlflow/users/create",
        "DELETE /mlflow/users/delete",
        "PATCH /mlflow/users/update-admin",
        "POST /mlflow/users/permissions/grant",
        "DELETE /mlflow-artifacts/artifacts/{artifact_path:path}",
    ):
        assert table[key] is Access.TEACHER, key
        assert verdict(Role.STUDENT, table[key]) is Verdict.FORBIDDEN
        assert verdict(Role.TEACHER, table[key]) is Verdict.ALLOW


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        (Role.ADMIN, {a: Verdict.ALLOW for a in Access}),
        (Role.TEACHER, {a: Verdict.ALLOW for a in Access}),
        (
            Role.STUDENT,
            {
                Access.PUBLIC: Verdict.ALLOW,
                Access.READ: Verdict.ALLOW,
                Access.SELF: Verdict.IF_OWNER,
                Access.CREATE_RUN: Verdict.ALLOW,
                Access.OWN_RUN: Verdict.IF_OWNER,
                Access.CREATE_MODEL: Verdict.IF_OWNER,
                Access.OWN_MODEL: Verdict.IF_OWNER,
                Access.OWN_ARTIFACT: Verdict.IF_OWNER,
                Access.REGISTRY: Verdict.ALLOW,
                Access.TEACHER: Verdict.FORBIDDEN,
            },
        ),
        (
            Role.ANONYMOUS,
            {a: Verdict.ALLOW if a is Access.PUBLIC else Verdict.UNAUTHENTICATED for a in Access},
        ),
    ],
)
def test_the_verdicts(role, expected):
    assert {a: verdict(role, a) for a in Access} == expected
    assert verdict(role, None) is Verdict.FORBIDDEN  # no rule: refused to everyone


@pytest.mark.parametrize(
    ("method", "path", "template", "expected"),
    [
        ("POST", "/api/2.0/mlflow/runs/create", "/api/2.0/mlflow/runs/create", Access.CREATE_RUN),
        ("POST", "/ajax-api/2.0/mlflow/runs/create", None, Access.CREATE_RUN),
        ("HEAD", "/api/2.0/mlflow/runs/get", "/api/2.0/mlflow/runs/get", Access.READ),
        (
            "PUT",
            "/api/2.0/mlflow-artifacts/artifacts/1/abc/artifacts/x.txt",
            None,
            Access.OWN_ARTIFACT,
        ),
        (
            "PUT",
            "/api/2.0/mlflow-artifacts/artifacts/1/abc/x",
            "/api/2.0/mlflow-artifacts/artifacts/<path:artifact_path>",
            Access.OWN_ARTIFACT,
        ),
        ("DELETE", "/api/2.0/mlflow-artifacts/artifacts/1/abc/x", None, Access.TEACHER),
        ("PATCH", "/api/2.0/mlflow/logged-models/m-0123", None, Access.OWN_MODEL),
        ("DELETE", "/api/2.0/mlflow/logged-models/m-0123", None, Access.TEACHER),
        ("GET", "/api/2.0/mlflow/logged-models/m-0123/artifacts/files", None, Access.READ),
        ("POST", "/gateway/proxy/endpoint/v1/chat", None, Access.TEACHER),
        ("GET", "/ajax-api/3.0/mlflow/mcp-servers/a/b/versions/3", None, Access.TEACHER),
        ("GET", "/health", None, Access.PUBLIC),
        ("GET", "/api/2.0/mlflow/hand-over", None, None),  # no rule
        ("POST", "/api/2.0/mlflow/runs/get", None, None),  # the right path, another method
        ("GET", "/api/2.0/mlflow/runs/create", "/api/2.0/mlflow/runs/create", None),
    ],
)
def test_a_request_finds_its_rule(method, path, template, expected):
    key, found = access_of(method, path, template)
    assert found is expected
    assert (key is None) == (expected is None)


def test_route_keys_drop_the_version_prefix_and_unify_parameters():
    assert route_key("post", "/ajax-api/3.0/mlflow/runs/create") == "POST /mlflow/runs/create"
    assert route_key("GET", "/api/2.0/mlflow/logged-models/<model_id>") == (
        "GET /mlflow/logged-models/{model_id}"
    )
    assert route_key("PUT", "/api/2.0/mlflow-artifacts/artifacts/<path:artifact_path>") == (
        route_key("PUT", "/api/2.0/mlflow-artifacts/artifacts/{artifact_path:path}")
    )


def test_the_books_recorded_table_is_this_table(routes):
    """docs/results/class-access.json (written by test_access_http.py) has every route MLflow
    serves, each with the rule the code gives it: re-record it when either changes."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "docs" / "results" / "class-access.json"
    recorded = json.loads(path.read_text(encoding="utf-8"))
    rows = {row["route"]: row["access"] for row in recorded["rows"]}
    assert rows == {key: str(access) for key, access in access.rules().items()}
    assert recorded["summary"]["routes"] == len(routes)
    for row in recorded["rows"]:
        assert set(row["cells"]) >= {"admin", "teacher", "no account"}, row["route"]
