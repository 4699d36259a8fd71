"""Who may do what on the class server: one table, route × role, deny by default.

MLflow's server serves a few hundred routes (REST 2.0 and 3.0, their ``ajax-api`` twins, the
artifact proxy, logged models, the registry, traces, prompts, the AI gateway, jobs, the
assistant, MCP servers, and the basic-auth app's accounts, roles and permissions). Each one
is written below, by method and path, with the `Access` it needs; the path is MLflow's
without its API version prefix (``/api/2.0``, ``/ajax-api/3.0``, …: the same handler under
each), in one spelling for Flask's and FastAPI's parameters (``{name}``, ``{name:path}``).

A role gets a route when `verdict` says so:

================  =======  =======  ======================  ==========
access            admin    teacher  student                 no account
================  =======  =======  ======================  ==========
PUBLIC            yes      yes      yes                     yes
READ              yes      yes      yes (1)                 401
SELF              yes      yes      their own account only  401
CREATE_RUN        yes      yes      yes (1), owner recorded 401
OWN_RUN           yes      yes      their own runs only     401
CREATE_MODEL      yes      yes      from their own run      401
OWN_MODEL         yes      yes      their own models only   401
OWN_ARTIFACT      yes      yes      their own runs/models   401
REGISTRY          yes      yes      yes (2)                 401
TEACHER           yes      yes      403                     401
================  =======  =======  ======================  ==========

(1) MLflow's own per-experiment permissions still apply after this table: a student reads and
trains into the experiments the teacher granted them (``default_permission`` is
``NO_PERMISSIONS``; ``add-student`` grants EDIT on the class experiment), nothing else.
(2) A registered model's writes are decided by MLflow's per-model permission, which it gives
to the account that created the model (MANAGE) and to no one else.

A route that is not in the table is refused (403) to everyone, admin included, and
``tests/classroom`` walks MLflow's own route list: a route without a rule (an MLflow upgrade)
fails the tests before it can open a hole. The table is data; this module imports nothing
but the standard library (``attention_ref.classroom.auth`` consults it inside the server).

Homework (`attention_ref.classroom.assignment`) needs no row of its own: a submission is a
run a student owns in an experiment granted to them alone, so "read the class" and "read only
one's own submissions" are both MLflow's per-experiment grants, and grades are the teacher's
runs in an experiment no student is granted. What a student may do *inside* their homework
experiment is narrower than OWN_RUN (one ``answer.json``, then the run ends and is final; no
grade or homework field on any run): the gate's homework fence, item 4 of
`attention_ref.classroom.auth`, deny by default there too.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cache


class Role(StrEnum):
    """Who sends a request: MLflow's admin account, another admin account, a student, nobody."""

    ADMIN = "admin"
    TEACHER = "teacher"
    STUDENT = "student"
    ANONYMOUS = "no account"


class Access(StrEnum):
    """What a route needs of its sender (see the module's table)."""

    PUBLIC = "public"
    READ = "read"
    SELF = "own account"
    CREATE_RUN = "create run"
    OWN_RUN = "own run"
    CREATE_MODEL = "create model"
    OWN_MODEL = "own model"
    OWN_ARTIFACT = "own artifact"
    REGISTRY = "own registered model"
    TEACHER = "teacher"


class Verdict(StrEnum):
    """The table's answer for a role: let it through, check what it names, or refuse."""

    ALLOW = "allow"
    IF_OWNER = "if owner"  # the run, model, artifact or account the request names is the sender's
    UNAUTHENTICATED = "401"
    FORBIDDEN = "403"


#: the accesses a student passes only for what is their own
_OWNED = {Access.SELF, Access.OWN_RUN, Access.CREATE_MODEL, Access.OWN_MODEL, Access.OWN_ARTIFACT}


def verdict(role: Role, access: Access | None) -> Verdict:
    """The table: ``access`` of a route (``None``: a route with no rule) for ``role``.

    A route without a rule is refused to every role; anonymous requests get only PUBLIC
    routes (MLflow serves those without asking who is there).
    """
    if access is None:
        return Verdict.FORBIDDEN
    if access is Access.PUBLIC:
        return Verdict.ALLOW
    if role is Role.ANONYMOUS:
        return Verdict.UNAUTHENTICATED
    if role in (Role.ADMIN, Role.TEACHER):
        return Verdict.ALLOW
    if access is Access.TEACHER:
        return Verdict.FORBIDDEN
    return Verdict.IF_OWNER if access in _OWNED else Verdict.ALLOW


# ------------------------------------------------------------------------------- the table

#: every route MLflow serves, by the access it needs; "METHOD /path" (see the module docstring)
TABLE: dict[Access, tuple[str, ...]] = {
    # MLflow serves these without login: its health check, the UI's static files, what the
    # server is (a client reads it before logging in)
    Access.PUBLIC: (
        "GET /health",
        "GET /static-files/{path:path}",
        "GET /mlflow/server-info",
    ),
    # reading the class: the UI, runs, metrics, artifacts, models, the registry, traces.
    # MLflow's per-experiment and per-model permissions filter what each account sees.
    Access.READ: (
        "GET /",
        "GET /build/{filename:path}",
        "GET /version",
        "GET /graphql",  # MLflow's GraphQL has queries only (its "mutations" are searches)
        "POST /graphql",
        "GET /get-artifact",
        "GET /model-versions/get-artifact",
        "GET /mlflow/ui-telemetry",
        "POST /mlflow/ui-telemetry",  # the UI's own usage events: changes no data
        "GET /mlflow/users/current",
        "GET /mlflow/users/current/permissions",
        "GET /mlflow/experiments/get",
        "GET /mlflow/experiments/get-by-name",
        "GET /mlflow/experiments/search",
        "POST /mlflow/experiments/search",
        "POST /mlflow/experiments/search-datasets",
        "GET /mlflow/runs/get",
        "POST /mlflow/runs/search",
        "GET /mlflow/metrics/get-history",
        "GET /mlflow/metrics/get-history-bulk",
        "GET /mlflow/metrics/get-history-bulk-interval",
        "GET /mlflow/artifacts/list",
        "POST /mlflow/artifacts/presigned-download-url",
        "GET /mlflow-artifacts/artifacts",
        "GET /mlflow-artifacts/artifacts/{artifact_path:path}",
        "GET /mlflow-artifacts/presigned/{artifact_path:path}",
        "GET /mlflow/logged-models/{model_id}",
        "POST /mlflow/logged-models/search",
        "GET /mlflow/logged-models/{model_id}/artifacts/directories",
        "GET /mlflow/logged-models/{model_id}/artifacts/files",
        "GET /mlflow/registered-models/get",
        "GET /mlflow/registered-models/search",
        "GET /mlflow/registered-models/get-latest-versions",
        "POST /mlflow/registered-models/get-latest-versions",
        "GET /mlflow/registered-models/alias",
        "GET /mlflow/model-versions/get",
        "GET /mlflow/model-versions/search",
        "GET /mlflow/model-versions/get-download-uri",
        "GET /mlflow/datasets/search",
        "POST /mlflow/datasets/search",
        "GET /mlflow/datasets/{dataset_id}",
        "GET /mlflow/datasets/{dataset_id}/experiment-ids",
        "GET /mlflow/datasets/{dataset_id}/records",
        "GET /mlflow/traces",
        "GET /mlflow/traces/batchGet",
        "POST /mlflow/traces/batchGetInfos",
        "POST /mlflow/traces/calculate-filter-correlation",
        "GET /mlflow/traces/get",
        "POST /mlflow/traces/metrics",
        "POST /mlflow/traces/search",
        "GET /mlflow/traces/{request_id}/info",
        "GET /mlflow/traces/{trace_id}",
        "GET /mlflow/traces/{trace_id}/assessments/{assessment_id}",
        "GET /mlflow/unified-traces",
        "GET /mlflow/get-trace-artifact",
        "GET /mlflow/get-online-trace-details",
    ),
    # the sender's own account: who they are, their password, their permissions
    Access.SELF: (
        "GET /mlflow/users/get",
        "PATCH /mlflow/users/update-password",
        "GET /mlflow/users/permissions/get",
        "GET /mlflow/users/permissions/list",
    ),
    # a run in an experiment the student may edit; the server records the sender as its owner
    Access.CREATE_RUN: ("POST /mlflow/runs/create",),
    # writes to one run: its owner only (and never its owner tag, mlflow.user)
    Access.OWN_RUN: (
        "POST /mlflow/runs/update",
        "POST /mlflow/runs/log-metric",
        "POST /mlflow/runs/log-parameter",
        "POST /mlflow/runs/log-batch",
        "POST /mlflow/runs/log-inputs",
        "POST /mlflow/runs/outputs",
        "POST /mlflow/runs/log-model",
        "POST /mlflow/runs/set-tag",
        "POST /mlflow/runs/delete-tag",
        "POST /mlflow/upload-artifact",
    ),
    # a logged model made from the sender's own run
    Access.CREATE_MODEL: ("POST /mlflow/logged-models",),
    # writes to one logged model: the owner of its source run only
    Access.OWN_MODEL: (
        "PATCH /mlflow/logged-models/{model_id}",
        "POST /mlflow/logged-models/{model_id}/params",
        "PATCH /mlflow/logged-models/{model_id}/tags",
        "DELETE /mlflow/logged-models/{model_id}/tags/{tag_key}",
    ),
    # uploads through the artifact proxy, into the sender's own run's or model's folder
    Access.OWN_ARTIFACT: (
        "PUT /mlflow-artifacts/artifacts/{artifact_path:path}",
        "POST /mlflow-artifacts/mpu/create/{artifact_path:path}",
        "POST /mlflow-artifacts/mpu/complete/{artifact_path:path}",
        "POST /mlflow-artifacts/mpu/abort/{artifact_path:path}",
    ),
    # the Model Registry (attnref train --register): MLflow lets the creator manage a model
    Access.REGISTRY: (
        "POST /mlflow/registered-models/create",
        "POST /mlflow/registered-models/rename",
        "PATCH /mlflow/registered-models/update",
        "DELETE /mlflow/registered-models/delete",
        "POST /mlflow/registered-models/set-tag",
        "DELETE /mlflow/registered-models/delete-tag",
        "POST /mlflow/registered-models/alias",
        "DELETE /mlflow/registered-models/alias",
        "POST /mlflow/model-versions/create",
        "PATCH /mlflow/model-versions/update",
        "DELETE /mlflow/model-versions/delete",
        "POST /mlflow/model-versions/set-tag",
        "DELETE /mlflow/model-versions/delete-tag",
        "POST /mlflow/model-versions/transition-stage",
    ),
    # everything else is the teacher's: the experiments themselves, deleting anything,
    # accounts and permissions, and MLflow's GenAI services (gateway, scorers, jobs, …)
    Access.TEACHER: (
        # experiments: create, rename, tag, delete, restore
        "POST /mlflow/experiments/create",
        "POST /mlflow/experiments/update",
        "POST /mlflow/experiments/set-experiment-tag",
        "POST /mlflow/experiments/delete-experiment-tag",
        "POST /mlflow/experiments/delete",
        "POST /mlflow/experiments/restore",
        "POST mlflow/experiments/search-datasets",  # MLflow's own typo of a route: not served
        # deleting runs, logged models and files
        "POST /mlflow/runs/delete",
        "POST /mlflow/runs/restore",
        "DELETE /mlflow/logged-models/{model_id}",
        "DELETE /mlflow-artifacts/artifacts/{artifact_path:path}",
        "POST /mlflow/artifacts/presigned-upload-url",
        "POST /mlflow/runs/create-promptlab-run",
        # accounts, roles, permissions, workspaces, webhooks
        "POST /mlflow/users/create",
        "POST /mlflow/users/create-ui",
        "GET /signup",
        "GET /mlflow/users/list",
        "PATCH /mlflow/users/update-admin",
        "DELETE /mlflow/users/delete",
        "POST /mlflow/users/permissions/grant",
        "POST /mlflow/users/permissions/revoke",
        "GET /mlflow/users/roles/list",
        "POST /mlflow/roles/create",
        "GET /mlflow/roles/get",
        "GET /mlflow/roles/list",
        "PATCH /mlflow/roles/update",
        "DELETE /mlflow/roles/delete",
        "POST /mlflow/roles/permissions/add",
        "DELETE /mlflow/roles/permissions/remove",
        "GET /mlflow/roles/permissions/list",
        "PATCH /mlflow/roles/permissions/update",
        "POST /mlflow/roles/assign",
        "DELETE /mlflow/roles/unassign",
        "GET /mlflow/roles/users/list",
        "GET /mlflow/workspaces",
        "POST /mlflow/workspaces",
        "GET /mlflow/workspaces/{workspace_name}",
        "PATCH /mlflow/workspaces/{workspace_name}",
        "DELETE /mlflow/workspaces/{workspace_name}",
        "GET /mlflow/webhooks",
        "POST /mlflow/webhooks",
        "GET /mlflow/webhooks/{webhook_id}",
        "PATCH /mlflow/webhooks/{webhook_id}",
        "DELETE /mlflow/webhooks/{webhook_id}",
        "POST /mlflow/webhooks/{webhook_id}/test",
        # traces, assessments and evaluation datasets: written by GenAI apps, not by a class
        "POST /v1/traces",
        "POST /mlflow/traces",
        "PATCH /mlflow/traces/{request_id}",
        "PATCH /mlflow/traces/{request_id}/tags",
        "DELETE /mlflow/traces/{request_id}/tags",
        "PATCH /mlflow/traces/{trace_id}/tags",
        "DELETE /mlflow/traces/{trace_id}/tags",
        "POST /mlflow/traces/{trace_id}/assessments",
        "PATCH /mlflow/traces/{trace_id}/assessments/{assessment_id}",
        "DELETE /mlflow/traces/{trace_id}/assessments/{assessment_id}",
        "POST /mlflow/traces/delete-traces",
        "POST /mlflow/traces/link-prompts",
        "POST /mlflow/traces/link-to-run",
        "POST /mlflow/datasets/create",
        "DELETE /mlflow/datasets/{dataset_id}",
        "POST /mlflow/datasets/{dataset_id}/add-experiments",
        "POST /mlflow/datasets/{dataset_id}/remove-experiments",
        "POST /mlflow/datasets/{dataset_id}/records",
        "DELETE /mlflow/datasets/{dataset_id}/records",
        "PATCH /mlflow/datasets/{dataset_id}/tags",
        "DELETE /mlflow/datasets/{dataset_id}/tags/{key}",
        # GenAI evaluation: scorers, judges, issues, review queues, label schemas
        "POST /mlflow/genai/evaluate/invoke",
        "POST /mlflow/scorer/invoke",
        "POST /mlflow/scorers/register",
        "GET /mlflow/scorers/get",
        "GET /mlflow/scorers/list",
        "GET /mlflow/scorers/versions",
        "DELETE /mlflow/scorers/delete",
        "PUT /mlflow/scorers/online-config",
        "GET /mlflow/scorers/online-configs",
        "POST /mlflow/issues",
        "POST /mlflow/issues/invoke",
        "POST /mlflow/issues/search",
        "GET /mlflow/issues/{issue_id}",
        "PATCH /mlflow/issues/{issue_id}",
        "POST /mlflow/review-queues/create",
        "POST /mlflow/review-queues/update",
        "POST /mlflow/review-queues/delete",
        "GET /mlflow/review-queues/get",
        "GET /mlflow/review-queues/get-by-name",
        "GET /mlflow/review-queues/list",
        "POST /mlflow/review-queues/get-or-create-user",
        "POST /mlflow/review-queues/items/add",
        "GET /mlflow/review-queues/items/list",
        "POST /mlflow/review-queues/items/remove",
        "POST /mlflow/review-queues/items/set-status",
        "POST /mlflow/label-schemas/create",
        "GET /mlflow/label-schemas/get",
        "GET /mlflow/label-schemas/get-by-name",
        "GET /mlflow/label-schemas/list",
        "PATCH /mlflow/label-schemas/update",
        "DELETE /mlflow/label-schemas/delete",
        # prompt optimization and the server's job runner
        "POST /mlflow/prompt-optimization/jobs",
        "GET /mlflow/prompt-optimization/jobs/search",
        "POST /mlflow/prompt-optimization/jobs/search",
        "GET /mlflow/prompt-optimization/jobs/{job_id}",
        "DELETE /mlflow/prompt-optimization/jobs/{job_id}",
        "POST /mlflow/prompt-optimization/jobs/{job_id}/cancel",
        "GET /mlflow/jobs/{job_id}",
        "PATCH /mlflow/jobs/cancel/{job_id}",
        "POST /jobs/",
        "POST /jobs/search",
        "GET /jobs/{job_id}",
        "PATCH /jobs/cancel/{job_id}",
        # MLflow's demo data
        "POST /mlflow/demo/generate",
        "POST /mlflow/demo/delete",
        # the AI gateway: its secrets (API keys), endpoints, budgets, guardrails and calls
        "GET /mlflow/gateway-proxy",
        "POST /mlflow/gateway-proxy",
        "GET /mlflow/gateway/provider-config",
        "GET /mlflow/gateway/supported-models",
        "GET /mlflow/gateway/supported-providers",
        "GET /mlflow/gateway/secrets/config",
        "POST /mlflow/gateway/secrets/create",
        "GET /mlflow/gateway/secrets/get",
        "GET /mlflow/gateway/secrets/list",
        "POST /mlflow/gateway/secrets/update",
        "DELETE /mlflow/gateway/secrets/delete",
        "POST /mlflow/gateway/endpoints/create",
        "GET /mlflow/gateway/endpoints/get",
        "GET /mlflow/gateway/endpoints/list",
        "POST /mlflow/gateway/endpoints/update",
        "DELETE /mlflow/gateway/endpoints/delete",
        "POST /mlflow/gateway/endpoints/set-tag",
        "DELETE /mlflow/gateway/endpoints/delete-tag",
        "POST /mlflow/gateway/endpoints/models/attach",
        "POST /mlflow/gateway/endpoints/models/detach",
        "POST /mlflow/gateway/endpoints/bindings/create",
        "GET /mlflow/gateway/endpoints/bindings/list",
        "DELETE /mlflow/gateway/endpoints/bindings/delete",
        "POST /mlflow/gateway/model-definitions/create",
        "GET /mlflow/gateway/model-definitions/get",
        "GET /mlflow/gateway/model-definitions/list",
        "POST /mlflow/gateway/model-definitions/update",
        "DELETE /mlflow/gateway/model-definitions/delete",
        "POST /mlflow/gateway/budgets/create",
        "GET /mlflow/gateway/budgets/get",
        "GET /mlflow/gateway/budgets/list",
        "GET /mlflow/gateway/budgets/windows",
        "POST /mlflow/gateway/budgets/update",
        "DELETE /mlflow/gateway/budgets/delete",
        "POST /mlflow/gateway/guardrails/create",
        "GET /mlflow/gateway/guardrails/get",
        "GET /mlflow/gateway/guardrails/list",
        "GET /mlflow/gateway/guardrails/list-for-endpoint",
        "POST /mlflow/gateway/guardrails/add-to-endpoint",
        "DELETE /mlflow/gateway/guardrails/remove-from-endpoint",
        "PATCH /mlflow/gateway/guardrails/update-config",
        "DELETE /mlflow/gateway/guardrails/delete",
        "GET /gateway/mlflow/v1/models",
        "POST /gateway/mlflow/v1/chat/completions",
        "POST /gateway/openai/v1/chat/completions",
        "POST /gateway/openai/v1/embeddings",
        "POST /gateway/openai/v1/responses",
        "POST /gateway/openai/v1/responses/compact",
        "POST /gateway/anthropic/v1/messages",
        "POST /gateway/typesafe/v1/systemone",
        "POST /gateway/gemini/v1beta/models/{endpoint_name}:generateContent",
        "POST /gateway/gemini/v1beta/models/{endpoint_name}:streamGenerateContent",
        "POST /gateway/proxy/{endpoint_name}/{path:path}",
        "POST /gateway/{endpoint_name}/mlflow/invocations",
        # the UI's assistant (it runs a coding agent on the server)
        "POST /mlflow/assistant/message",
        "GET /mlflow/assistant/config",
        "PUT /mlflow/assistant/config",
        "GET /mlflow/assistant/providers",
        "GET /mlflow/assistant/providers/{provider}/health",
        "GET /mlflow/assistant/providers/{provider}/models",
        "PATCH /mlflow/assistant/sessions/{session_id}",
        "POST /mlflow/assistant/sessions/{session_id}/permission",
        "GET /mlflow/assistant/sessions/{session_id}/stream",
        "POST /mlflow/assistant/sessions/{session_id}/tool-result",
        "POST /mlflow/assistant/skills/install",
        # MCP servers
        "GET /mlflow/mcp-servers",
        "POST /mlflow/mcp-servers",
        "GET /mlflow/mcp-servers/endpoints",
        "GET /mlflow/mcp-servers/{name:path}",
        "PATCH /mlflow/mcp-servers/{name:path}",
        "DELETE /mlflow/mcp-servers/{name:path}",
        "POST /mlflow/mcp-servers/{name:path}/aliases",
        "GET /mlflow/mcp-servers/{name:path}/aliases/{alias:path}",
        "DELETE /mlflow/mcp-servers/{name:path}/aliases/{alias:path}",
        "GET /mlflow/mcp-servers/{name:path}/endpoints",
        "POST /mlflow/mcp-servers/{name:path}/endpoints",
        "GET /mlflow/mcp-servers/{name:path}/endpoints/{endpoint_id}",
        "PATCH /mlflow/mcp-servers/{name:path}/endpoints/{endpoint_id}",
        "DELETE /mlflow/mcp-servers/{name:path}/endpoints/{endpoint_id}",
        "POST /mlflow/mcp-servers/{name:path}/tags",
        "DELETE /mlflow/mcp-servers/{name:path}/tags/{key:path}",
        "GET /mlflow/mcp-servers/{name:path}/versions",
        "POST /mlflow/mcp-servers/{name:path}/versions",
        "GET /mlflow/mcp-servers/{name:path}/versions/{version:path}",
        "PATCH /mlflow/mcp-servers/{name:path}/versions/{version:path}",
        "DELETE /mlflow/mcp-servers/{name:path}/versions/{version:path}",
        "POST /mlflow/mcp-servers/{name:path}/versions/{version:path}/tags",
        "DELETE /mlflow/mcp-servers/{name:path}/versions/{version:path}/tags/{key:path}",
    ),
}

_VERSION_PREFIX = re.compile(r"^/(?:ajax-)?api/\d+\.\d+")
_FLASK_PATH_PARAM = re.compile(r"<path:(\w+)>")
_FLASK_PARAM = re.compile(r"<(?:\w+:)?(\w+)>")


def route_key(method: str, template: str) -> str:
    """``"METHOD /path"`` of a route as the table writes it.

    ``template`` is Flask's (``<path:x>``, ``<x>``) or FastAPI's (``{x:path}``, ``{x}``) rule;
    the API version prefix goes (``/api/2.0/mlflow/runs/create`` -> ``/mlflow/runs/create``).
    """
    path = _FLASK_PATH_PARAM.sub(r"{\1:path}", template)
    path = _FLASK_PARAM.sub(r"{\1}", path)
    return f"{method.upper()} {_VERSION_PREFIX.sub('', path)}"


@cache
def rules() -> dict[str, Access]:
    """``route key -> Access``; raises ``ValueError`` if the table gives a route two rules."""
    out: dict[str, Access] = {}
    for access, keys in TABLE.items():
        for key in keys:
            if key in out:
                raise ValueError(f"{key} has two rules: {out[key]} and {access}")
            out[key] = access
    return out


def _pattern(key: str) -> re.Pattern[str]:
    """The regex of a key's path: ``{x}`` one segment, ``{x:path}`` any rest."""
    method, path = key.split(" ", 1)
    parts = re.split(r"(\{\w+(?::path)?\})", path)
    regex = "".join(
        (".+" if p.endswith(":path}") else "[^/]+") if p.startswith("{") else re.escape(p)
        for p in parts
    )
    return re.compile(f"{re.escape(method)} {regex}")


@cache
def _patterns() -> list[tuple[re.Pattern[str], str]]:
    # literal paths first, then fewer parameters: the most specific rule wins
    keys = sorted(rules(), key=lambda k: (k.count("{"), -len(k)))
    return [(_pattern(k), k) for k in keys]


def access_of(
    method: str, path: str, template: str | None = None
) -> tuple[str | None, Access | None]:
    """The rule of a request: ``(route key, Access)``, or ``(None, None)`` for no rule.

    ``template`` is the route the server matched (Flask's ``url_rule``), when it did; else the
    concrete ``path`` is matched against the table's routes. HEAD is GET's.
    """
    method = "GET" if method.upper() == "HEAD" else method.upper()
    table = rules()
    if template is not None:
        key = route_key(method, template)
        return (key, table[key]) if key in table else (None, None)
    request = f"{method} {_VERSION_PREFIX.sub('', path)}"
    for pattern, key in _patterns():
        if pattern.fullmatch(request):
            return key, table[key]
    return None, None
