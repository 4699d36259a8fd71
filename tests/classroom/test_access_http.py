"""Every route MLflow serves, hit over real HTTP as each role: the route × role × status table.

The route list is MLflow's own (`attention_ref.classroom.gate.routes.served_routes`: Flask's
``url_map`` with the basic-auth app's routes, and the native FastAPI routes). Each route is
requested, with its parameters filled in, as the admin, a teacher, a student and no account;
a student is asked twice where the rule depends on whose thing it is: once naming their own
run / model / account / registered model, once naming another student's. Every answer is
checked against `attention_ref.classroom.gate.access.verdict`:

* the gate's refusals are exactly the table's: 401 for no account, 403 (with the gate's
  ``class server:`` message) for what a student may not do, and for another's things;
* everything else passes the gate (MLflow's handler then answers: 200, or 400/404 for the
  made-up parameters, a 404 or MLflow's own 403 to a student made the one "absent or not
  yours" answer; the admin and the teacher are asked about things that do not exist, so
  that walking the delete routes deletes nothing of the class).

``ATTNREF_CLASS_ACCESS_RECORD=FILE`` writes the table to FILE (the book's "Teaching with
attnref" page shows ``docs/results/class-access.json``, written that way).
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mlflow
import pytest

from attention_ref.classroom.connection.client import rest
from attention_ref.classroom.connection.errors import ServerError
from attention_ref.classroom.gate.access import Role, Verdict, rules, verdict
from attention_ref.classroom.gate.access_table import Access
from attention_ref.classroom.gate.parameters import route_parameters
from attention_ref.classroom.gate.refusals import HIDDEN, REFUSAL
from attention_ref.classroom.gate.routes import Route, served_routes
from attention_ref.classroom.hosting.server import ClassServer
from tests.classroom.conftest import EXPERIMENT

pytestmark = pytest.mark.slow

OWN, OTHERS = "own", "other's"
#: the accesses whose student cells depend on whose thing the request names
BY_OWNER = {
    Access.SELF,
    Access.OWN_RUN,
    Access.CREATE_MODEL,
    Access.OWN_MODEL,
    Access.OWN_ARTIFACT,
    Access.REGISTRY,
}
_PARAM = re.compile(r"<(?:\w+:)?(\w+)>|\{(\w+)(?::\w+)?\}")
NOWHERE_RUN, NOWHERE_MODEL, NOWHERE_EXP = "0" * 32, "m-" + "0" * 32, "999999999"


@dataclass(frozen=True)
class World:
    """What the probes name: the class experiment, alice's and bob's runs, logged models and
    registered models (bob is the student asking; alice is "another student")."""

    experiment: str
    runs: dict[str, str]
    models: dict[str, str]


@dataclass(frozen=True)
class Probe:
    """One request and its answer."""

    route: Route
    role: Role
    whose: str  # OWN, OTHERS, or "" where it does not matter
    status: int
    by_gate: bool  # refused by the class's gate (401, or 403 with its message)

    @property
    def cell(self) -> str:
        """How the table shows it: the status; ``403*`` for MLflow's own refusal."""
        if self.status == 403 and not self.by_gate:
            return "403*"
        return str(self.status) if self.status else "no answer"


def values(world: World, role: Role, whose: str) -> dict[str, Any]:
    """The parameters a probe sends (path, query or body, by name)."""
    if role in (Role.ADMIN, Role.TEACHER):  # things that do not exist: nothing is changed
        run, model, exp, user, rm = NOWHERE_RUN, NOWHERE_MODEL, NOWHERE_EXP, "nobody", "nowhere"
    else:
        who = "alice" if whose == OTHERS else "bob"
        run, model, exp = world.runs[who], world.models[who], world.experiment
        user, rm = who, f"walk-{who}"
    return {
        "run_id": run,
        "run_uuid": run,
        "source_run_id": run,
        "experiment_id": exp,
        "model_id": model,
        "username": user,
        "name": rm,
        "new_name": rm + "-renamed",
        "password": "short",
        "key": "walk",
        "value": "walk",
        "version": "1",
        "alias": "walk",
        "artifact_path": f"{exp}/{run}/artifacts/walk.txt",
        "path": "walk.txt",
        "experiment_name": EXPERIMENT,
        "resource_type": "experiment",
        "resource_id": exp,
        "metric_key": "walk",
        "experiment_ids": [exp],
        "permission": "READ",
        "features": [],
        "tags": [],
        "metrics": [],
        "params": [],
        # path parameters only
        "dataset_id": "d-walk",
        "tag_key": "walk",
        "request_id": "tr-walk",
        "trace_id": "tr-walk",
        "assessment_id": "a-walk",
        "issue_id": "iss-walk",
        "job_id": "walk",
        "webhook_id": "walk",
        "workspace_name": "nowhere",
        "endpoint_id": "walk",
        "endpoint_name": "walk",
        "session_id": "walk",
        "provider": "walk",
        "filename": "walk.js",
    }


def fit(given: dict[str, Any], message: type | None) -> dict[str, Any]:
    """The values in the types of the route's request message (a number where it takes a
    number): a request of the wrong type is refused before whose it is (test_gate_ids.py)."""
    if message is None:
        return given
    from google.protobuf.descriptor import FieldDescriptor as F

    numbers = {
        F.TYPE_DOUBLE,
        F.TYPE_FLOAT,
        F.TYPE_INT32,
        F.TYPE_INT64,
        F.TYPE_UINT32,
        F.TYPE_UINT64,
        F.TYPE_SINT32,
        F.TYPE_SINT64,
    }
    out = dict(given)
    for field in message.DESCRIPTOR.fields:  # type: ignore[attr-defined]
        if field.name in out and field.type in numbers and isinstance(out[field.name], str):
            out[field.name] = 1
    return out


def concrete(template: str, given: dict[str, Any]) -> str:
    """The route's path with its parameters filled in."""

    def fill(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return urllib.parse.quote(str(given[name]), safe="/")

    return _PARAM.sub(fill, template)


def ask(
    server: ClassServer,
    route: Route,
    role: Role,
    whose: str,
    world: World,
    credentials: dict[Role, tuple[str, str] | None],
) -> Probe:
    given = values(world, role, whose)
    path = concrete(route.template, given)
    # a route's own parameters only: a student's request naming one the route does not read
    # is refused (`attention_ref.classroom.gate.parameters`; test_gate_ids.py tries that)
    known = route_parameters(route.key, route.method)
    if known is not None:
        names = set(known[0].query) | set(known[0].body)
        given = fit({k: v for k, v in given.items() if k in names}, known[1])
    query = {k: v for k, v in given.items() if isinstance(v, str)}
    body, data = None, None
    uploads = route.method == "PUT" and "artifacts/" in route.template
    if uploads or route.key.endswith("/mlflow/upload-artifact"):
        data = b"walk"
    elif route.method != "GET":
        body, query = given, {}
        if "mlflow-artifacts/artifacts/" in route.template and not given:
            body = None  # the edge refuses a body there but the upload's (test_bodies.py)
    try:
        status, answer = rest(
            server.url,
            path,
            body,
            auth=credentials[role],
            method=route.method,
            query=query,
            data=data,
            timeout=20,
        )
    except ServerError:
        return Probe(route, role, whose, 0, False)
    # a student's "absent or not yours" (`HIDDEN`) is MLflow's own 404 or 403 made one answer
    # after MLflow's handler ran: MLflow's answer, not the table's refusal
    message = str(answer.get("message", ""))
    refused = status == 401 or (
        status == 403 and message.startswith(REFUSAL) and message != REFUSAL + HIDDEN
    )
    return Probe(route, role, whose, status, refused)


def intended(access: Access, role: Role, whose: str) -> str:
    """``pass`` (the gate lets it through), ``401`` or ``403`` (the gate refuses)."""
    v = verdict(role, access)
    if v is Verdict.UNAUTHENTICATED:
        return "401"
    if v is Verdict.FORBIDDEN:
        return "403"
    if v is Verdict.IF_OWNER and whose == OTHERS:
        return "403"
    if access is Access.REGISTRY and role is Role.STUDENT and whose == OTHERS:
        return "403"  # MLflow's: only the creator manages a registered model
    return "pass"


#: a registered model created under another's name: MLflow refuses it as a duplicate
_REGISTER = "POST /mlflow/registered-models/create"


def outcome(probe: Probe, access: Access) -> str:
    """What the answer says, in `intended`'s words."""
    if probe.by_gate:
        return str(probe.status)
    refused = probe.status == 403 or (probe.route.key == _REGISTER and probe.status == 400)
    if access is Access.REGISTRY and probe.whose == OTHERS and refused:
        return "403"  # MLflow's own refusal: only the creator manages a registered model
    return "pass"


# ------------------------------------------------------------------------------ the world


def create(server: ClassServer, auth: tuple[str, str], endpoint: str, body: dict) -> dict:
    status, answer = rest(server.url, endpoint, body, auth=auth)
    assert status == 200, (endpoint, status, answer)
    return answer


def ensure_registered(server: ClassServer, auth: tuple[str, str], name: str) -> None:
    """The student's registered model exists (a probe may have renamed or deleted it)."""
    status, answer = rest(
        server.url, "/api/2.0/mlflow/registered-models/create", {"name": name}, auth=auth
    )
    assert status == 200 or "already exists" in str(answer.get("message")), answer


@pytest.fixture(scope="module")
def world(server, students) -> World:
    _, exp = rest(
        server.url,
        "/api/2.0/mlflow/experiments/get-by-name",
        auth=server.admin,
        query={"experiment_name": EXPERIMENT},
    )
    exp_id = exp["experiment"]["experiment_id"]
    runs, models = {}, {}
    for who in ("alice", "bob"):
        auth = (who, students[who])
        made = create(
            server,
            auth,
            "/api/2.0/mlflow/runs/create",
            {"experiment_id": exp_id, "run_name": f"walk-{who}"},
        )
        runs[who] = made["run"]["info"]["run_id"]
        model = create(
            server,
            auth,
            "/api/2.0/mlflow/logged-models",
            {"experiment_id": exp_id, "name": f"walk-{who}", "source_run_id": runs[who]},
        )
        models[who] = model["model"]["info"]["model_id"]
        ensure_registered(server, auth, f"walk-{who}")
    return World(exp_id, runs, models)


# -------------------------------------------------------------------------------- the walk


@pytest.fixture(scope="module")
def walk(server, students, teacher, world) -> list[Probe]:
    credentials: dict[Role, tuple[str, str] | None] = {
        Role.ADMIN: server.admin,
        Role.TEACHER: teacher,
        Role.STUDENT: ("bob", students["bob"]),
        Role.ANONYMOUS: None,
    }
    table = rules()
    probes = []
    for route in served_routes():
        access = table[route.key]
        for role in (Role.ANONYMOUS, Role.STUDENT, Role.TEACHER, Role.ADMIN):
            owners = [OWN, OTHERS] if role is Role.STUDENT and access in BY_OWNER else [""]
            for whose in owners:
                if access is Access.REGISTRY and role is Role.STUDENT:
                    who = "alice" if whose == OTHERS else "bob"
                    ensure_registered(server, (who, students[who]), f"walk-{who}")
                probes.append(ask(server, route, role, whose, world, credentials))
    return probes


def test_every_cell_is_the_intended_status(walk):
    table = rules()
    wrong = [
        (
            p.route.method,
            p.route.template,
            p.role.value,
            p.whose,
            p.status,
            intended(table[p.route.key], p.role, p.whose),
        )
        for p in walk
        if outcome(p, table[p.route.key]) != intended(table[p.route.key], p.role, p.whose)
    ]
    assert wrong == []
    routes = {p.route for p in walk}
    assert len(routes) > 400 and {p.role for p in walk} == set(Role)


def test_the_gate_can_fail_the_walk(walk):
    """The check is not vacuous: a student's refusal read as a pass, or a pass read as a
    refusal, is caught."""
    table = rules()
    refused = next(p for p in walk if p.role is Role.STUDENT and p.by_gate)
    passed = next(p for p in walk if p.role is Role.STUDENT and not p.by_gate)
    flipped = [
        Probe(refused.route, refused.role, refused.whose, 200, False),
        Probe(passed.route, passed.role, passed.whose, 403, True),
    ]
    for p in flipped:
        assert outcome(p, table[p.route.key]) != intended(table[p.route.key], p.role, p.whose)


def test_what_the_class_needs_passes_mlflow_too(walk):
    """Passing the gate is not enough for the routes a class lives on: MLflow answers 200 to
    the student reading the class and writing their own run (no 403 of its own)."""
    needed = {
        ("GET", "/mlflow/runs/get"),
        ("POST", "/mlflow/runs/search"),
        ("GET", "/mlflow/metrics/get-history"),
        ("GET", "/mlflow/artifacts/list"),
        ("GET", "/mlflow/experiments/get-by-name"),
        ("POST", "/mlflow/logged-models/search"),
        ("GET", "/mlflow/logged-models/{model_id}"),
        ("POST", "/mlflow/runs/create"),
        ("POST", "/mlflow/runs/log-batch"),
        ("POST", "/mlflow/runs/set-tag"),
        ("PUT", "/mlflow-artifacts/artifacts/{artifact_path:path}"),
        ("GET", "/mlflow/users/current"),
        ("GET", "/"),
    }
    seen = {}
    for p in walk:
        method, path = p.route.key.split(" ", 1)
        if p.role is Role.STUDENT and p.whose in ("", OWN) and (method, path) in needed:
            seen.setdefault((method, path), set()).add(p.status)
    assert set(seen) == needed
    assert {k: v for k, v in seen.items() if v != {200}} == {}


def test_record_the_table(walk):
    """The table, one row per route key (its paths under each API prefix merged), written to
    ``$ATTNREF_CLASS_ACCESS_RECORD`` when set (the book shows it)."""
    table = rules()
    rows: dict[str, dict[str, Any]] = {}
    cells: dict[tuple[str, str], set[str]] = defaultdict(set)
    paths: dict[str, set[str]] = defaultdict(set)
    for p in walk:
        paths[p.route.key].add(f"{p.route.method} {p.route.template}")
        column = p.role.value if not p.whose else f"{p.role.value} ({p.whose})"
        cells[(p.route.key, column)].add(p.cell)
    for (key, column), found in cells.items():
        row = rows.setdefault(key, {"route": key, "access": str(table[key]), "cells": {}})
        row["cells"][column] = "/".join(sorted(found))
    for key, row in rows.items():
        row["paths"] = len(paths[key])
    refused = sum(1 for p in walk if p.by_gate)
    summary = {
        "routes": len({p.route for p in walk}),
        "route_keys": len(rows),
        "roles": len(Role),
        "requests": len(walk),
        "refused_by_gate": refused,
        "refused_401": sum(1 for p in walk if p.by_gate and p.status == 401),
        "refused_403": sum(1 for p in walk if p.by_gate and p.status == 403),
        "refused_by_mlflow": sum(1 for p in walk if p.status == 403 and not p.by_gate),
        "student_refused_keys": sum(
            1 for k in rows if verdict(Role.STUDENT, table[k]) is Verdict.FORBIDDEN
        ),
        "mlflow_version": mlflow.__version__,
    }
    assert summary["routes"] == len(served_routes())
    record = os.environ.get("ATTNREF_CLASS_ACCESS_RECORD")
    if record:
        Path(record).write_text(
            json.dumps(
                {"summary": summary, "rows": sorted(rows.values(), key=lambda r: r["route"])},
                indent=1,
                ensure_ascii=False,
            )
            + "\n",
            encoding="utf-8",
        )
