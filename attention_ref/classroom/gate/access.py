"""Who may do what on the class server: one table, route × role, deny by default.

MLflow's server serves a few hundred routes (REST 2.0 and 3.0, their ``ajax-api`` twins, the
artifact proxy, logged models, the registry, traces, prompts, the AI gateway, jobs, the
assistant, MCP servers, and the basic-auth app's accounts, roles and permissions). Each one
is written in `TABLE` (`attention_ref.classroom.gate.access_table`), by method and path, with the
`Access` it needs; the path is MLflow's without its API version prefix (``/api/2.0``,
``/ajax-api/3.0``, …: the same handler under each), in one spelling for Flask's and FastAPI's
parameters (``{name}``, ``{name:path}``).

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
fails the tests before it can open a hole. The table is data; neither it nor this module
imports anything but the standard library (``attention_ref.classroom.gate.auth`` consults it
inside the server).

Homework (`attention_ref.classroom.coursework.assignment`) needs no row of its own: a submission is
a run a student owns in an experiment granted to them alone, so "read the class" and "read only
one's own submissions" are both MLflow's per-experiment grants, and grades are the teacher's
runs in an experiment no student is granted. What a student may do *inside* their homework
experiment is narrower than OWN_RUN (one ``answer.json``, then the run ends and is final; no
grade or homework field on any run): the gate's homework fence, item 4 of
`attention_ref.classroom.gate.auth`, deny by default there too.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cache

from attention_ref.classroom.gate.access_table import TABLE, Access


class Role(StrEnum):
    """Who sends a request: MLflow's admin account, another admin account, a student, nobody."""

    ADMIN = "admin"
    TEACHER = "teacher"
    STUDENT = "student"
    ANONYMOUS = "no account"


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
