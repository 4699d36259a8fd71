"""The class server's gate: basic auth, then the access table, inside ``mlflow server``.

MLflow's basic-auth app asks one function who sent a request (``authorization_function`` in
its configuration file; ``attnref server`` points it at `authenticate`). It gets the answer
on every request it protects, Flask's and the native FastAPI routes' alike, before its own
per-resource checks. Here that answer is:

1. **Who**: MLflow's password check (its cache included). A request without an account, or
   with a wrong password, gets 401. When the accounts' database cannot answer (PostgreSQL
   restarting), 503 instead: clients retry a 503; a 401 would end a training.
2. **May they**: the route's rule in `attention_ref.classroom.gate.access` and the sender's role
   give a `Verdict`. A route without a rule is refused to everyone (403).
3. **Is it theirs**: for the rules a student passes only for their own things, the run,
   logged model, artifact folder or account the request names must be the sender's. A run's
   owner is its ``user_id``, which the server sets itself when the run is created (the
   request's ``user_id`` and ``mlflow.user`` tag are replaced by the account's name, so no
   one can create a run in another's name, and only an admin changes ``mlflow.user``), with
   its ``start_time`` on the server's clock.
4. **Homework** (`attention_ref.classroom.coursework.assignment`): no student writes a tag,
parameter
   or metric of the ``attnref.homework.`` or ``attnref.grade.`` namespaces, on any run. In a
   student's submissions experiment, a run holds one thing, its ``answer.json``: a student
   creates a run there (only in their own), uploads ``answer.json`` once while the run is
   RUNNING, and ends the run; nothing else (no tag, metric, parameter, model or other file).
   Ending it FINISHED needs the answer: the gate then records the answer's SHA-256 and the
   time received (the server's clock) in the run's tags and stamps ``end_time`` with the
   same clock. A finished run is final (no upload, no status change): a new attempt is a new
   run. So the time that decides lateness is the server's, and the answer graded is the one
   that was there when the student finished (the grader compares the hash).

MLflow's own checks run after this one (a student's EDIT grant on the class experiment, a
registered model's creator): the table is a ceiling, never a widening. MLflow imports this
module in the server's workers; nothing here runs in a training process.

The steps live in modules of their own: who (`attention_ref.classroom.gate.credentials`), is it
theirs (`attention_ref.classroom.gate.ownership`), the homework fence
(`attention_ref.classroom.gate.homework_fence`), and the refusals they answer with
(`attention_ref.classroom.gate.refusals`); this module is the gate that runs them in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attention_ref.classroom.gate import uploads
from attention_ref.classroom.gate.access import Role, Verdict, access_of, verdict
from attention_ref.classroom.gate.access_table import Access
from attention_ref.classroom.gate.credentials import (
    client_address,
    guard_the_fastapi_bridge,
    identify,
    keep_fast_hash,
)
from attention_ref.classroom.gate.homework_fence import (
    experiment_tags,
    homework_fence,
    run_status,
    written_keys,
)
from attention_ref.classroom.gate.ownership import (
    OWNERSHIP,
    judged_key,
    keep_said,
    stamp_owner,
    unseen,
)
from attention_ref.classroom.gate.parameters import (
    RefusedError,
    graphql_refusal,
    read_request,
    route_parameters,
)
from attention_ref.classroom.gate.quotas import over_quota
from attention_ref.classroom.gate.refusals import (
    absent_as_forbidden,
    bad_request,
    forbidden,
    graphql_error,
)

if TYPE_CHECKING:
    from flask import Response
    from werkzeug.datastructures import Authorization

_ANSWER = "attnref_class_auth"
_USER = "attnref_class_user"
_LIGHT: list[bool] = []


def _lighten_mlflow() -> None:
    """Two reads MLflow makes at every request, made once (the first request of a worker):

    * whether the sender is an admin: MLflow reads the account again after the gate read it
      (or found it in MLflow's own cache of right credentials); the gate's reading is used;
    * a ping before each use of a database connection (SQLAlchemy's ``pool_pre_ping``): about
      a sixth of a class's burst. Without it, after PostgreSQL restarted, the first use of each
      kept connection fails once, MLflow answers 503 and the pool makes new connections;
      clients ask again (MLflow's, and `attention_ref.classroom.connection.patience`).
    """
    if _LIGHT:
        return
    from mlflow.server import auth as basic

    from attention_ref.classroom.gate.mlflow_seam import tracking_store

    def sender_is_admin() -> bool:
        from flask import g

        user = g.get(_USER)
        if user is not None:
            return bool(user.is_admin)
        return bool(basic.store.get_user(basic.authenticate_request().username).is_admin)

    basic.sender_is_admin = sender_is_admin
    for store in (tracking_store(), basic.store):
        engine = getattr(store, "engine", None)
        if engine is not None:
            engine.pool._pre_ping = False
    _LIGHT.append(True)


_GRAPHQL = ("POST /graphql", "GET /graphql")


def authenticate() -> Authorization | Response:
    """The sender's credentials, or the response that refuses the request.

    MLflow asks several times per request; the answer is computed once (kept in ``flask.g``).
    """
    from flask import g

    guard_the_fastapi_bridge()
    uploads.install(experiment_tags, run_status)
    _lighten_mlflow()
    answer = g.get(_ANSWER)
    if answer is None:
        answer = _answer()
        setattr(g, _ANSWER, answer)
    return answer


def _answer() -> Any:
    from flask import g, request
    from mlflow.server import auth as basic
    from mlflow.server.auth.entities import User

    sent = request.authorization
    if sent is None or not sent.username:
        return basic.make_basic_auth_response()
    user = identify(sent.username, sent.password or "", client_address(request))
    if not isinstance(user, User):
        return user
    setattr(g, _USER, user)
    role = role_of(user.username, user.is_admin, basic.auth_config.admin_username)
    rule = request.url_rule.rule if request.url_rule is not None else None
    key, access = access_of(request.method, request.path, rule)
    if role is Role.STUDENT:
        from flask import after_this_request

        after_this_request(absent_as_forbidden)
    decided = verdict(role, access)
    if decided is Verdict.FORBIDDEN:
        what = f"{request.method} {request.path}"
        if access is None:
            return forbidden(f"{what} has no rule in the access table; refused to everyone")
        return forbidden(f"{what} ({key}) is the teacher's; {user.username!r} is a student")
    method = "GET" if request.method == "HEAD" else request.method
    try:
        said = read_request(
            key or "",
            method,
            dict(request.view_args or {}),
            request.args.to_dict(flat=False),
            _json_body(key or "", method),
            judged=role is Role.STUDENT,
        )
    except RefusedError as e:
        return graphql_error(str(e)) if key in _GRAPHQL else bad_request(str(e))
    keep_said(said)
    if key in _GRAPHQL and (why := graphql_refusal(said)):
        return graphql_error(why)
    if role is Role.STUDENT and (refused := unseen(user.username)):
        return refused
    if access is Access.CREATE_RUN:
        refused = stamp_owner(user.username)
        if refused is not None:
            return refused
    if decided is Verdict.IF_OWNER:
        refused = OWNERSHIP[access](user.username)  # type: ignore[index]
        if refused is not None:
            return refused
    if role is Role.STUDENT and access is not None:
        refused = (
            homework_fence(user.username, access, key or "")
            or _no_prompts(access)
            or over_quota(user.username, access, key or "")
        )
        if refused is not None:
            return refused
    if role in (Role.ADMIN, Role.TEACHER) and key in _ACCOUNT_WRITES:
        _fast_hash_after(said.body)
    if key == "GET /" and not request.query_string and (landing := _landing()) is not None:
        return landing
    return sent


def _json_body(key: str, method: str) -> bytes:
    """The body the gate reads: a route's JSON (at most the edge's
    `attention_ref.classroom.hosting.edge_config.EdgeLimits.max_json_bytes`), never a file.

    An upload (``upload-artifact``, the artifact proxy's ``PUT``) is judged from its head and
    parameters alone (whose run, which path, the run's state): the gate neither reads nor
    keeps a copy of its body, whose bytes are counted where they are written
    (`attention_ref.classroom.gate.uploads`). A refused upload costs the application only what
    MLflow's bridge from FastAPI to Flask held before the gate ran: ``upload-artifact``'s whole
    body, at most the edge's ``max_upload_artifact_bytes``; the proxy's ``PUT`` is judged
    before any of its body is read."""
    from flask import request

    known = route_parameters(key, method)
    if known is not None and known[0].file_body:
        return b""
    return request.get_data(cache=True)


#: the admin's requests that make or change an account's password
_ACCOUNT_WRITES = ("POST /mlflow/users/create", "PATCH /mlflow/users/update-password")


def _fast_hash_after(body: dict[str, Any]) -> None:
    """Once MLflow has made or changed the account (2xx), a password the class's commands drew
    gets its cheap hash (`attention_ref.classroom.gate.credentials.keep_fast_hash`)."""
    from flask import after_this_request

    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not isinstance(password, str):
        return

    @after_this_request
    def rehash(response: Response) -> Response:
        if response.status_code < 300:
            keep_fast_hash(username, password)
        return response


#: the query that marks the UI's root as already sent to the class's runs (no second redirect)
LANDED = "class"

#: what the landing page keeps in the browser for MLflow's UI, unless the reader chose
#: otherwise (``localStorage``, as the UI stores it: ``key_v1`` = JSON): the "Model training"
#: side (without it every run page of the class opens as a GenAI evaluation, whatever its
#: link), and the assistant panel not opened by itself (a class server has no assistant)
UI_PREFERENCES: dict[str, str] = {
    "mlflow.workflowType_v1": '"machine_learning"',
    "mlflow.assistant.fab.autoOpenedOnFirstLoad_v1": "true",
}


def _landing() -> Response | None:
    """The UI's root, for anyone who may enter: a page that sends the browser on to the class
    experiment's runs (MLflow 3 opens its GenAI home otherwise), or to the page its link names
    after the ``#`` (which a server never sees: a link to any other experiment keeps working),
    having kept `UI_PREFERENCES` where the browser holds none; ``None`` when no class
    experiment is known."""
    import json
    import os

    from flask import make_response

    from attention_ref.classroom.gate.mlflow_seam import tracking_store
    from attention_ref.experiments.names import UI_RUNS_QUERY

    name = os.environ.get("ATTNREF_CLASS_EXPERIMENT")
    if not name:
        return None
    try:
        found = tracking_store().get_experiment_by_name(name)
    except Exception:  # the store is down: the UI's own root, as MLflow serves it
        return None
    if found is None:
        return None
    runs = f"#/experiments/{found.experiment_id}?{UI_RUNS_QUERY}"
    keep = (
        f"try{{for(const [k,v] of Object.entries({json.dumps(UI_PREFERENCES)}))"
        "if(localStorage.getItem(k)===null)localStorage.setItem(k,v);}catch(e){}"
    )
    page = (
        '<!doctype html><html><head><meta charset="utf-8"><title>class server</title>'
        f"<script>{keep}location.replace({json.dumps('/?' + LANDED)} + (location.hash || "
        f"{json.dumps(runs)}));</script></head><body>"
        f'<a href="/?{LANDED}{runs}">the class\'s runs</a></body></html>'
    )
    response = make_response(page, 200)
    response.headers["Content-Type"] = "text/html; charset=utf-8"
    response.headers["Cache-Control"] = "no-store"
    return response


def role_of(username: str, is_admin: bool, admin_username: str) -> Role:
    """MLflow's admin account is the admin; any other admin account a teacher; the rest students."""
    if username == admin_username:
        return Role.ADMIN
    return Role.TEACHER if is_admin else Role.STUDENT


#: the tags that make a registered model a prompt (MLflow's prompt registry)
_PROMPT_TAGS = ("mlflow.prompt.",)


def _no_prompts(access: Access) -> Response | None:
    """A student registers models (``attnref train --register``), never prompts: a class has
    no prompt registry, and a prompt's tags on a registered model are refused."""
    if access is not Access.REGISTRY:
        return None
    names = [str(k) for k in written_keys()]
    if bad := [k for k in names if judged_key(k).startswith(_PROMPT_TAGS)]:
        return forbidden(f"{bad[0]!r} makes a prompt; the class server keeps no prompts")
    return None
