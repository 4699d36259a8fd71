"""The class's accounts, over REST as the admin: students, teachers, passwords, permissions.

MLflow's basic-auth app keeps the accounts; these functions ask it, as the class's admin
(``admin``, `ADMIN_USERNAME`), over the REST calls of `attention_ref.classroom.connection.client`. A
student is an account with EDIT on the class experiment (`add_student`, `grant_experiment`);
a teacher is another admin account (`add_teacher`). Each is idempotent: what it changed is in
the returned `AccountChange`. A password has at least `MIN_PASSWORD_LENGTH` characters
(MLflow's rule).
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from attention_ref.classroom.connection.client import checked, class_experiment_id, rest
from attention_ref.classroom.connection.errors import ServerError

ADMIN_USERNAME = "admin"
MIN_PASSWORD_LENGTH = 12  # MLflow's basic auth refuses shorter passwords
#: the variable that holds the class's admin password (there is no default)
ADMIN_PASSWORD_ENV = "ATTNREF_ADMIN_PASSWORD"
#: a password the class's commands drew (`generated_password`): 128 random bits
GENERATED = re.compile(r"ar1_[A-Za-z0-9_-]{22}")


def generated_password() -> str:
    r"""A new account's password, drawn here: ``ar1_`` and 128 random bits (22 URL-safe
    characters). A password of 128 random bits needs no slow hash: guessing it takes
    :math:`2^{127}` tries on average, however fast each is; a slow hash (MLflow's scrypt,
    about 0.16 s of a core here) only protects passwords people choose. The class server keeps
    the hash of such a password cheap (`attention_ref.classroom.gate.credentials`), so that a class
    logging in at once costs the server milliseconds, not a core-second per student."""
    return "ar1_" + secrets.token_urlsafe(16)


@dataclass(frozen=True)
class AccountChange:
    """What `add_student` / `add_teacher` did: a new account or not, a new grant or not."""

    username: str
    created: bool  # False: the account existed, its password unchanged
    granted: bool  # False: it could already edit the experiment (or is a teacher)
    experiment_id: str | None = None

    def describe(self, experiment: str | None, url: str) -> str:
        """One line for the teacher: what changed."""
        made = "created account" if self.created else "account"
        kept = "" if self.created else " exists (password unchanged)"
        if experiment is None:
            return f"{made} {self.username!r}{kept}; a teacher on {url}"
        grant = "may now train into" if self.granted else "already may train into"
        return (
            f"{made} {self.username!r}{kept}; {grant} {experiment!r} "
            f"(experiment {self.experiment_id}) on {url}"
        )


def _user(url: str, admin: tuple[str, str], username: str, cafile: Path | None) -> dict | None:
    status, found = rest(
        url, "/api/2.0/mlflow/users/get", auth=admin, query={"username": username}, cafile=cafile
    )
    if status == 200:
        return dict(found["user"])
    if status == 404 or "not found" in str(found.get("message", "")).lower():
        return None
    checked(status, found, f"cannot look up the account {username!r}")
    return None  # pragma: no cover


def _create_user(
    url: str, admin: tuple[str, str], username: str, password: str, cafile: Path | None
) -> bool:
    """Create ``username`` unless it exists; whether it was created."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ServerError(
            f"the password of {username!r} is too short: at least {MIN_PASSWORD_LENGTH} characters"
        )
    if _user(url, admin, username, cafile) is not None:
        return False
    status, made = rest(
        url,
        "/api/2.0/mlflow/users/create",
        {"username": username, "password": password},
        auth=admin,
        cafile=cafile,
    )
    if status != 200 and "already exists" in str(made.get("message", "")):
        return False  # made at the same moment by another add-student
    checked(status, made, f"cannot create the account {username!r}")
    return True


def grant_experiment(
    url: str,
    admin: tuple[str, str],
    username: str,
    experiment_id: str,
    permission: str = "EDIT",
    cafile: Path | None = None,
) -> bool:
    """Give ``username`` ``permission`` on an experiment; whether anything changed.

    Idempotent: an account that already has it (or more, MANAGE) is left as it is; a lesser
    grant (READ) is replaced.
    """
    where = {"username": username, "resource_type": "experiment", "resource_id": experiment_id}
    status, has = rest(
        url, "/api/3.0/mlflow/users/permissions/get", auth=admin, query=where, cafile=cafile
    )
    checked(status, has, f"cannot read the permissions of {username!r}")
    order = ["NO_PERMISSIONS", "READ", "USE", "EDIT", "MANAGE"]
    current = str(has.get("permission", "NO_PERMISSIONS"))
    if current in order and order.index(current) >= order.index(permission):
        return False
    grant = {**where, "permission": permission}
    status, answer = rest(
        url, "/api/3.0/mlflow/users/permissions/grant", grant, auth=admin, cafile=cafile
    )
    if status != 200 and "already exists" in str(answer.get("message", "")):
        rest(url, "/api/3.0/mlflow/users/permissions/revoke", where, auth=admin, cafile=cafile)
        status, answer = rest(
            url, "/api/3.0/mlflow/users/permissions/grant", grant, auth=admin, cafile=cafile
        )
    checked(status, answer, f"cannot let {username!r} edit experiment {experiment_id}")
    return True


def add_student(
    url: str,
    admin: tuple[str, str],
    username: str,
    password: str,
    experiment: str,
    cafile: Path | None = None,
) -> AccountChange:
    """Account ``username`` with EDIT on the class experiment: made, or completed.

    Idempotent: an existing account keeps its password and gets the permission if it lacks
    it; what was done is in the returned `AccountChange`. A teacher's account is refused.
    """
    exp_id = class_experiment_id(url, admin, experiment, cafile)
    created = _create_user(url, admin, username, password, cafile)
    if not created and (_user(url, admin, username, cafile) or {}).get("is_admin"):
        raise ServerError(f"{username!r} is a teacher's account, not a student's")
    granted = grant_experiment(url, admin, username, exp_id, cafile=cafile)
    return AccountChange(username, created, granted, exp_id)


def add_teacher(
    url: str, admin: tuple[str, str], username: str, password: str, cafile: Path | None = None
) -> AccountChange:
    """Account ``username`` as a teacher (an MLflow admin: every route, every experiment)."""
    created = _create_user(url, admin, username, password, cafile)
    user = _user(url, admin, username, cafile) or {}
    granted = not user.get("is_admin")
    if granted:
        status, answer = rest(
            url,
            "/api/2.0/mlflow/users/update-admin",
            {"username": username, "is_admin": True},
            auth=admin,
            method="PATCH",
            cafile=cafile,
        )
        checked(status, answer, f"cannot make {username!r} a teacher")
    return AccountChange(username, created, granted)


def remove_student(
    url: str, admin: tuple[str, str], username: str, cafile: Path | None = None
) -> None:
    """Delete a student's account (their runs stay, under their name); not a teacher's."""
    user = _user(url, admin, username, cafile)
    if user is None:
        raise ServerError(f"no account {username!r} on {url}")
    if user.get("is_admin") or username == ADMIN_USERNAME:
        raise ServerError(f"{username!r} is a teacher's account; remove-student leaves it")
    status, answer = rest(
        url,
        "/api/2.0/mlflow/users/delete",
        {"username": username},
        auth=admin,
        method="DELETE",
        cafile=cafile,
    )
    checked(status, answer, f"cannot remove the account {username!r}")


def reset_password(
    url: str, admin: tuple[str, str], username: str, password: str, cafile: Path | None = None
) -> None:
    """Give ``username`` a new password (the old one is refused within `AUTH_CACHE_TTL_S`)."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ServerError(
            f"the new password is too short: at least {MIN_PASSWORD_LENGTH} characters"
        )
    if _user(url, admin, username, cafile) is None:
        raise ServerError(f"no account {username!r} on {url}")
    status, answer = rest(
        url,
        "/api/2.0/mlflow/users/update-password",
        {"username": username, "password": password},
        auth=admin,
        method="PATCH",
        cafile=cafile,
    )
    checked(status, answer, f"cannot change the password of {username!r}")


def read_password(
    file: Path | None,
    env_var: str = ADMIN_PASSWORD_ENV,
    environ: dict[str, str] | None = None,
    *,
    existing: bool = False,
) -> str:
    """A password from ``file`` (its first line), else from ``$env_var``; never a default.

    Raises `ServerError` when neither gives one or it is shorter than MLflow accepts (12
    characters): for a new class, that is the rule of the password being made; for an
    ``existing`` one (its password was made at its first start), a short one is not it. The
    message never contains the password.
    """
    env = os.environ if environ is None else environ
    if file is not None:
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise ServerError(f"cannot read the password file {file}: {e.strerror}") from None
        password, where = (lines[0] if lines else ""), f"the file {file}"
    else:
        password, where = env.get(env_var, ""), f"${env_var}"
        if not password:
            raise ServerError(
                f"no admin password: set {env_var} or pass --admin-password-file FILE "
                "(the class server has no default password)"
            )
    if len(password) < MIN_PASSWORD_LENGTH and existing:
        raise ServerError(
            f"the password in {where} is not the class's admin password: that one was made at "
            f"the class's first start, with at least {MIN_PASSWORD_LENGTH} characters"
        )
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ServerError(
            f"the password in {where} is too short: MLflow's basic auth needs at least "
            f"{MIN_PASSWORD_LENGTH} characters"
        )
    return password
