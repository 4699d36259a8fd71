"""The class server: one MLflow tracking server that a whole course trains into at once.

The embedded sqlite store is right for one person. For a class the teacher runs what MLflow's
own users run at that scale, on one machine and in one directory (``root``):

* PostgreSQL (Debian's ``postgresql``): a cluster of its own in ``root/postgres``, created
  with ``initdb`` the first time, started and stopped with ``pg_ctl``. It listens on no TCP
  port, only on a Unix socket in ``root/postgres/socket`` (mode 0700): no port to pick, and no
  one but its owner (and root) can connect. PostgreSQL refuses to run as root; when the
  command runs as root, the cluster runs as the system user ``postgres`` (``runuser``).
* ``mlflow server`` on ``host:port`` (127.0.0.1 unless asked), its runs in the database
  ``mlflow``, its accounts and permissions in ``mlflow_auth``, artifacts proxied to
  ``root/artifacts`` on local disk (``--artifacts-destination``), with MLflow's basic-auth
  app (``--app-name basic-auth``) and the class's gate (`attention_ref.classroom.auth`: the
  access table of `attention_ref.classroom.access`, deny by default). On any host but
  loopback it serves HTTPS (`attention_ref.classroom.tls`) unless told ``insecure``.
* Accounts: ``admin`` (the teacher), whose password is read from ``$ATTNREF_ADMIN_PASSWORD``
  or a file: there is no default, and it is never printed, logged, written to disk by us or
  put on a command line (the server gets it in its environment). Other admin accounts are
  teachers. An account reads nothing by default (``default_permission = NO_PERMISSIONS``); a
  student gets EDIT on the class experiment: reads all of it, creates runs in it, changes
  their own runs only.
* One server per directory: ``root/server.lock`` is held (``flock``) while it runs and
  ``root/server.json`` says by whom (pid), where (URL) and which ``mlflow server``. A second
  start on the directory, or on a port already taken, is refused before anything is touched;
  a failed start stops only what it started itself.

Students point ``--tracking-uri`` / ``MLFLOW_TRACKING_URI`` at the server and give their
account in ``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD`` (MLflow's variables),
and, for HTTPS, the server's certificate in ``MLFLOW_TRACKING_SERVER_CERT_PATH``.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import errno
import fcntl
import http.client
import json
import os
import pwd
import secrets
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attention_ref.classroom.tls import (
    check_pair,
    client_context,
    is_loopback,
    is_wildcard,
    primary_address,
    self_signed,
)
from attention_ref.experiments.names import EXPERIMENT_KIND, Tag, ui_experiment_url

ADMIN_USERNAME = "admin"
ADMIN_PASSWORD_ENV = "ATTNREF_ADMIN_PASSWORD"
#: MLflow's variable for the CA bundle its clients verify a server with
CERT_PATH_ENV = "MLFLOW_TRACKING_SERVER_CERT_PATH"
MIN_PASSWORD_LENGTH = 12  # MLflow's basic auth refuses shorter passwords
DEFAULT_EXPERIMENT = "shakespeare"
DEFAULT_PORT = 5000
DEFAULT_WORKERS = 2
#: the cluster's superuser; it connects over the private Unix socket only (trust: the socket's
#: directory is 0700)
DB_USER = "attnref"
TRACKING_DB = "mlflow"
AUTH_DB = "mlflow_auth"
#: PostgreSQL refuses to run as root: as root, the cluster belongs to this system user
#: (Debian's postgresql package creates it)
POSTGRES_SYSTEM_USER = "postgres"
_SOCKET_PATH_MAX = 100  # a Unix socket path holds 107 bytes; "/.s.PGSQL.5432" is in the count
#: a password's hash is checked once a minute per account and worker, not on every request
#: (scrypt costs ~0.1 s of CPU: a class logs many requests a second); a changed password or a
#: removed account is refused by every worker within this time
AUTH_CACHE_TTL_S = 60
_AUTHORIZATION_FUNCTION = "attention_ref.classroom.auth:authenticate"
LOCK_NAME, PID_NAME = "server.lock", "server.json"
#: connections one ``mlflow server`` worker holds at once (uvicorn's ``--limit-concurrency``)
CONNECTIONS_PER_WORKER = 64
#: the variable that names the class experiment to the gate inside ``mlflow server``
CLASS_EXPERIMENT_ENV = "ATTNREF_CLASS_EXPERIMENT"


class ServerError(ValueError):
    """The class server cannot start or be used as asked; the message says why, in one line."""


class ServerTimeoutError(ServerError):
    """The class server took the request but did not answer in time (it may have acted on it:
    read back what it holds before saying anything)."""


def read_password(
    file: Path | None, env_var: str = ADMIN_PASSWORD_ENV, environ: dict[str, str] | None = None,
    *, existing: bool = False,
) -> str:  # fmt: skip
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


def class_exists(root: Path) -> bool:
    """Whether ``root`` holds a class already (its PostgreSQL cluster was made)."""
    return (root.expanduser().absolute() / "postgres" / "data" / "PG_VERSION").is_file()


# ------------------------------------------------------------------------------- PostgreSQL


def postgres_program(name: str) -> Path:
    """``initdb`` / ``pg_ctl`` of Debian's newest installed PostgreSQL (else on ``$PATH``)."""
    debian = sorted(
        Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
        key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0,
    )
    if debian:
        return debian[-1]
    found = shutil.which(name)
    if found:
        return Path(found)
    raise ServerError(
        f"PostgreSQL's {name} is not installed: install Debian's postgresql "
        "(make postgres, or apt-get install postgresql)"
    )


def cluster_user() -> str | None:
    """The system user the cluster runs as: ``postgres`` when we are root, else ``None`` (us)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(POSTGRES_SYSTEM_USER)
    except KeyError:
        raise ServerError(
            "PostgreSQL refuses to run as root and there is no system user "
            f"{POSTGRES_SYSTEM_USER!r} to run it as: install Debian's postgresql (it creates "
            "the user), or run attnref server as an ordinary user"
        ) from None
    return POSTGRES_SYSTEM_USER


@dataclass
class Postgres:
    """A PostgreSQL cluster in ``directory`` (data, socket, log): created, started, stopped."""

    directory: Path

    def __post_init__(self) -> None:
        self.directory = self.directory.absolute()

    @property
    def data(self) -> Path:
        """The cluster's data directory (``initdb -D``)."""
        return self.directory / "data"

    @property
    def socket_dir(self) -> Path:
        """The directory of its Unix socket (mode 0700): its only way in."""
        return self.directory / "socket"

    @property
    def log(self) -> Path:
        """The server's log (``pg_ctl -l``)."""
        return self.directory / "postgres.log"

    def uri(self, database: str) -> str:
        """SQLAlchemy's URI of ``database`` over the cluster's Unix socket (psycopg2)."""
        host = urllib.parse.quote(str(self.socket_dir), safe="/")
        return f"postgresql+psycopg2://{DB_USER}@/{database}?host={host}"

    def _command(self, program: str, *args: str) -> list[str]:
        user = cluster_user()
        cmd = [str(postgres_program(program)), *args]
        return ["runuser", "-u", user, "--", *cmd] if user else cmd

    def _run(self, program: str, *args: str) -> None:
        out = subprocess.run(
            self._command(program, *args), capture_output=True, text=True, timeout=120
        )
        if out.returncode != 0:
            detail = (out.stderr or out.stdout).strip().splitlines() or ["no output"]
            raise ServerError(f"PostgreSQL's {program} failed: {detail[-1]} (see {self.log})")

    def init(self) -> None:
        """Create the cluster the first time (``initdb``); later calls find it and do nothing."""
        if (self.data / "PG_VERSION").is_file():
            return
        sock = len(str(self.socket_dir / ".s.PGSQL.5432").encode())
        if sock > _SOCKET_PATH_MAX:
            raise ServerError(
                f"the directory {self.directory} is too deep for PostgreSQL's socket path "
                f"({sock} bytes, at most {_SOCKET_PATH_MAX}); choose a shorter one"
            )
        for d in (self.directory, self.socket_dir):
            d.mkdir(parents=True, exist_ok=True)
            d.chmod(0o700)
        user = cluster_user()
        if user is not None:
            entry = pwd.getpwnam(user)
            for d in (self.directory, self.socket_dir):
                os.chown(d, entry.pw_uid, entry.pw_gid)
            probe = subprocess.run(["runuser", "-u", user, "--", "test", "-w", str(self.directory)])
            if probe.returncode != 0:
                raise ServerError(
                    f"PostgreSQL runs as the system user {user} (it refuses root), which cannot "
                    f"reach {self.directory}: choose a directory whose parents it may enter "
                    "(e.g. under /srv or /var/lib)"
                )
        self._run(
            "initdb", "-D", str(self.data), "-U", DB_USER, "--auth-local=trust",
            "--auth-host=reject", "-E", "UTF8", "--locale=C", "--no-instructions",
        )  # fmt: skip

    def copied_from(self) -> str | None:
        """The data directory a running postmaster's ``postmaster.pid`` names, when it is not
        this one (this folder is a copy taken while that cluster ran); else ``None``."""
        try:
            lines = (self.data / "postmaster.pid").read_text(errors="replace").splitlines()
        except OSError:
            return None
        named = lines[1].strip() if len(lines) > 1 else ""
        return named if named and Path(named) != self.data else None

    def is_running(self) -> bool:
        """``pg_ctl status``: whether the cluster's server is up, serving *this* data directory
        (a copy of the folder names the original's postmaster, which is not this cluster)."""
        if not (self.data / "PG_VERSION").is_file() or self.copied_from() is not None:
            return False
        out = subprocess.run(
            self._command("pg_ctl", "status", "-D", str(self.data)), capture_output=True
        )
        return out.returncode == 0

    def start(self) -> bool:
        """Start the cluster (no TCP, only the private Unix socket); wait until it accepts.

        Returns whether it was started here (``False``: it was running already).
        """
        if self.is_running():
            return False
        options = f"-h '' -k {shlex.quote(str(self.socket_dir))}"
        self._run(
            "pg_ctl", "start", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
            "-o", options,
        )  # fmt: skip
        return True

    def stop(self) -> None:
        """Stop the cluster (``-m fast``: sessions are ended, committed data is on disk)."""
        if self.is_running():
            self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "fast", "-w")

    def ensure_database(self, name: str) -> None:
        """Create database ``name`` unless it exists."""
        import psycopg2

        conn = psycopg2.connect(host=str(self.socket_dir), user=DB_USER, dbname="postgres")
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
                if cur.fetchone() is None:
                    cur.execute(f'CREATE DATABASE "{name}"')
        finally:
            conn.close()


# ------------------------------------------------------------------------------ over REST


def _context(url: str, cafile: Path | None) -> ssl.SSLContext | None:
    """How an ``https`` URL is verified: ``cafile``, else ``$MLFLOW_TRACKING_SERVER_CERT_PATH``
    (MLflow's own variable), else the system's authorities."""
    if not url.startswith("https://"):
        return None
    if cafile is None and os.environ.get(CERT_PATH_ENV):
        cafile = Path(os.environ[CERT_PATH_ENV])
    return client_context(cafile)


def request_bytes(
    url: str, endpoint: str, body: dict[str, Any] | None = None, *,
    auth: tuple[str, str] | None = None, method: str | None = None,
    query: dict[str, str] | None = None, data: bytes | None = None, timeout: float = 30,
    cafile: Path | None = None,
) -> tuple[int, bytes]:  # fmt: skip
    """One HTTP call: ``(HTTP status, the body's bytes)``; an HTTP error comes back as its
    status. ``body`` is sent as JSON; ``data`` as raw bytes (an artifact upload, with
    ``method="PUT"``). An ``https`` server is verified with ``cafile`` (else
    ``$MLFLOW_TRACKING_SERVER_CERT_PATH``). No server there, or one whose certificate does not
    verify: `ServerError` (one line)."""
    target = url.rstrip("/") + endpoint
    if query:
        target += "?" + urllib.parse.urlencode(query)
    payload = json.dumps(body).encode() if body is not None else data
    req = urllib.request.Request(target, data=payload, method=method)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=_context(url, cafile)) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except http.client.HTTPException as e:  # the connection closed mid-answer: a lost reply
        raise ServerTimeoutError(f"the class server at {url} did not answer whole "
                                 f"({type(e).__name__})") from None  # fmt: skip
    except (urllib.error.URLError, OSError) as e:  # no server there: one line, no traceback
        reason = getattr(e, "reason", e)
        if isinstance(reason, TimeoutError | ConnectionResetError):
            raise ServerTimeoutError(f"the class server at {url} did not answer in time "
                                     f"({reason or 'timed out'})") from None  # fmt: skip
        raise ServerError(f"cannot reach the class server at {url}: {reason}") from None


def rest(
    url: str, endpoint: str, body: dict[str, Any] | None = None, *,
    auth: tuple[str, str] | None = None, method: str | None = None,
    query: dict[str, str] | None = None, data: bytes | None = None, timeout: float = 30,
    cafile: Path | None = None,
) -> tuple[int, dict[str, Any]]:  # fmt: skip
    """One REST call: ``(HTTP status, JSON body)``; an HTTP error comes back as its status.

    ``body`` is sent as JSON; ``data`` as raw bytes (an artifact upload, with ``method="PUT"``).
    An ``https`` server is verified with ``cafile`` (else ``$MLFLOW_TRACKING_SERVER_CERT_PATH``).
    No server there, or one whose certificate does not verify: `ServerError` (one line).
    """
    status, raw = request_bytes(
        url, endpoint, body, auth=auth, method=method, query=query, data=data, timeout=timeout,
        cafile=cafile,
    )  # fmt: skip
    try:
        answer = json.loads(raw) if raw.strip() else {}
    except ValueError:
        answer = {"message": raw.decode(errors="replace")[:200]}
    return status, answer if isinstance(answer, dict) else {"value": answer}


def healthy(url: str, timeout: float = 2, cafile: Path | None = None) -> bool:
    """Whether the server answers ``/health`` (a route without authentication) with OK."""
    try:
        context = _context(url, cafile)
        target = url.rstrip("/") + "/health"
        with urllib.request.urlopen(target, timeout=timeout, context=context) as r:
            return r.read().strip() == b"OK"
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _checked(status: int, answer: dict[str, Any], what: str) -> dict[str, Any]:
    if status == 401:
        raise ServerError(f"{what}: the server refused the admin credentials (HTTP 401)")
    if status >= 400:
        message = str(answer.get("message", answer)).splitlines()[0][:200]
        raise ServerError(f"{what}: HTTP {status}: {message}")
    return answer


def class_experiment_id(
    url: str, admin: tuple[str, str], name: str, cafile: Path | None = None
) -> str:
    """The class experiment's id, created (by the admin) if it does not exist yet.

    Made with MLflow's tag that opens the UI on its runs (``mlflow.experimentKind``), so no
    student ever needs to tag it. Idempotent under a race: ``attnref server start`` and an
    ``add-student`` run right after the server answers may both find no experiment and both
    create it; the one whose create is refused with "already exists" reads the other's.
    """

    def look_up() -> dict[str, Any] | None:
        status, found = rest(
            url, "/api/2.0/mlflow/experiments/get-by-name", auth=admin,
            query={"experiment_name": name}, cafile=cafile,
        )  # fmt: skip
        if status == 200:
            return dict(found["experiment"])
        if status != 404:
            _checked(status, found, f"cannot look up the experiment {name!r}")
        return None

    kind = {"key": str(Tag.EXPERIMENT_KIND), "value": EXPERIMENT_KIND}
    found = look_up()
    if found is None:
        status, made = rest(
            url, "/api/2.0/mlflow/experiments/create", {"name": name, "tags": [kind]},
            auth=admin, cafile=cafile,
        )  # fmt: skip
        if status == 200:
            return str(made["experiment_id"])
        found = look_up() if "already exists" in str(made.get("message", "")) else None
        if found is None:
            _checked(status, made, f"cannot create the experiment {name!r}")
            raise ServerError(f"cannot create the experiment {name!r}")  # pragma: no cover
    exp_id = str(found["experiment_id"])
    tags = {t["key"]: t["value"] for t in found.get("tags", [])}
    if tags.get(kind["key"]) != kind["value"]:
        status, answer = rest(
            url, "/api/2.0/mlflow/experiments/set-experiment-tag",
            {"experiment_id": exp_id, **kind}, auth=admin, cafile=cafile,
        )  # fmt: skip
        _checked(status, answer, f"cannot tag the experiment {name!r}")
    return exp_id


# ------------------------------------------------------------------------------- accounts


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
    _checked(status, found, f"cannot look up the account {username!r}")
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
        url, "/api/2.0/mlflow/users/create", {"username": username, "password": password},
        auth=admin, cafile=cafile,
    )  # fmt: skip
    if status != 200 and "already exists" in str(made.get("message", "")):
        return False  # made at the same moment by another add-student
    _checked(status, made, f"cannot create the account {username!r}")
    return True


def grant_experiment(
    url: str, admin: tuple[str, str], username: str, experiment_id: str,
    permission: str = "EDIT", cafile: Path | None = None,
) -> bool:  # fmt: skip
    """Give ``username`` ``permission`` on an experiment; whether anything changed.

    Idempotent: an account that already has it (or more, MANAGE) is left as it is; a lesser
    grant (READ) is replaced.
    """
    where = {"username": username, "resource_type": "experiment", "resource_id": experiment_id}
    status, has = rest(
        url, "/api/3.0/mlflow/users/permissions/get", auth=admin, query=where, cafile=cafile
    )
    _checked(status, has, f"cannot read the permissions of {username!r}")
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
    _checked(status, answer, f"cannot let {username!r} edit experiment {experiment_id}")
    return True


def add_student(
    url: str, admin: tuple[str, str], username: str, password: str, experiment: str,
    cafile: Path | None = None,
) -> AccountChange:  # fmt: skip
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
            url, "/api/2.0/mlflow/users/update-admin", {"username": username, "is_admin": True},
            auth=admin, method="PATCH", cafile=cafile,
        )  # fmt: skip
        _checked(status, answer, f"cannot make {username!r} a teacher")
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
        url, "/api/2.0/mlflow/users/delete", {"username": username}, auth=admin,
        method="DELETE", cafile=cafile,
    )  # fmt: skip
    _checked(status, answer, f"cannot remove the account {username!r}")


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
        url, "/api/2.0/mlflow/users/update-password",
        {"username": username, "password": password}, auth=admin, method="PATCH", cafile=cafile,
    )  # fmt: skip
    _checked(status, answer, f"cannot change the password of {username!r}")


@dataclass(frozen=True)
class ClassRun:
    """One run of the class, as the teacher lists them: who owns it, and how it stands."""

    run_id: str
    name: str
    owner: str
    status: str
    started: str
    best_val_loss: float | None


def class_runs(
    url: str, auth: tuple[str, str], experiment: str, cafile: Path | None = None
) -> list[ClassRun]:
    """Every run of the class experiment with its owner (the account that created it), newest
    first, read over REST."""
    status, found = rest(
        url, "/api/2.0/mlflow/experiments/get-by-name", auth=auth,
        query={"experiment_name": experiment}, cafile=cafile,
    )  # fmt: skip
    _checked(status, found, f"cannot read the experiment {experiment!r}")
    exp_id = found["experiment"]["experiment_id"]
    runs: list[ClassRun] = []
    token: str | None = None
    while True:
        body: dict[str, Any] = {"experiment_ids": [exp_id], "max_results": 1000,
                                "order_by": ["attributes.start_time DESC"]}  # fmt: skip
        if token:
            body["page_token"] = token
        status, page = rest(url, "/api/2.0/mlflow/runs/search", body, auth=auth, cafile=cafile)
        _checked(status, page, f"cannot list the runs of {experiment!r}")
        for r in page.get("runs", []):
            info, data = r["info"], r.get("data", {})
            metrics = {m["key"]: m["value"] for m in data.get("metrics", [])}
            ms = int(info.get("start_time") or 0)
            start = dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M") if ms else ""
            runs.append(
                ClassRun(
                    info["run_id"], info.get("run_name", ""), info.get("user_id", ""),
                    info.get("status", ""), start,
                    metrics.get("best_val_loss"),
                )
            )  # fmt: skip
        token = page.get("next_page_token")
        if not token:
            return runs


# ------------------------------------------------------------------- one server per folder


def port_in_use(host: str, port: int) -> bool:
    """Whether something already listens on ``host:port`` (a trial bind, closed at once)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            if e.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise ServerError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    return False


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_mlflow(pid: int | None, root: Path | None = None) -> bool:
    """Whether ``pid`` is still an ``mlflow server`` (not a pid the system gave to another),
    and, given ``root``, the one serving that class folder's artifacts."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if not (any(part.endswith(b"mlflow") for part in cmdline[:2]) and b"server" in cmdline):
        return False
    return root is None or os.fsencode(root / "artifacts") in cmdline


def folder_id(root: Path) -> list[int]:
    """What a copy of the folder does not carry: its device and inode numbers."""
    st = root.stat()
    return [st.st_dev, st.st_ino]


def copied_from(root: Path, info: dict[str, Any]) -> str | None:
    """The folder a pid file was written for, when it is not ``root`` (``root`` is a copy of a
    class folder, taken while its server ran); ``None`` for ``root``'s own or an old pid file."""
    written = info.get("root")
    if written is None:
        return None
    try:
        same = Path(str(written)) == root and info.get("root_id") in (None, folder_id(root))
    except OSError:
        same = False
    return None if same else str(written)


@dataclass(frozen=True)
class Status:
    """What ``attnref server status DIR`` reports."""

    root: Path
    running: bool
    pid: int | None = None  # the process that owns the class server (``attnref server start``)
    url: str | None = None
    mlflow_pid: int | None = None
    healthy: bool = False
    stale: bool = False  # a pid file left by a server that is gone
    copy_of: str | None = None  # the folder whose pid file this is (``root`` is a copy of it)

    def describe(self) -> str:
        """One line."""
        if self.copy_of:
            return (
                f"no class server runs in {self.root}: it is a copy of {self.copy_of}, taken "
                f"while that class ran (attnref server status {self.copy_of})"
            )
        if self.running:
            state = "answering" if self.healthy else "not answering yet (starting?)"
            return (
                f"class server in {self.root} is running: pid {self.pid}, {self.url}, {state}; "
                f"its mlflow server is pid {self.mlflow_pid}"
            )
        if self.stale:
            return f"no class server running in {self.root} (pid {self.pid} is gone)"
        return f"no class server running in {self.root}"


def _read_pid_file(root: Path) -> dict[str, Any]:
    try:
        found = json.loads((root / PID_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _lock_is_held(root: Path) -> bool:
    """Whether a process holds the folder's lock (a class server runs there)."""
    path = root / LOCK_NAME
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def server_status(root: Path) -> Status:
    """Whether the class server of ``root`` runs (its lock is held), and where."""
    root = root.expanduser().absolute()
    info = _read_pid_file(root)
    if copy_of := copied_from(root, info):
        return Status(root, False, copy_of=copy_of)
    pid, url, mlflow_pid = info.get("pid"), info.get("url"), info.get("mlflow_pid")
    if _lock_is_held(root):
        cafile = Path(info["cert"]) if info.get("cert") else None
        up = bool(url) and healthy(str(url), cafile=cafile)
        return Status(root, True, pid, url, mlflow_pid, up)
    return Status(root, False, pid, url, mlflow_pid, stale=bool(info))


def stop_server(root: Path, timeout: float = 120) -> str:
    """Stop the class server of ``root`` by its pid file; one line saying what happened.

    A running server gets SIGTERM (it stops ``mlflow server`` and PostgreSQL itself); a stale
    pid file (its process gone) is removed, with the ``mlflow server`` and PostgreSQL that
    process left behind, if any.
    """
    status = server_status(root)
    if status.copy_of:
        raise ServerError(
            f"{status.root} is a copy of the class folder {status.copy_of}, taken while that "
            f"class ran: nothing here to stop (to stop that class: attnref server stop "
            f"{status.copy_of})"
        )
    if status.running:
        if not status.pid or not _alive(status.pid):
            raise ServerError(f"the class server in {status.root} has no pid to stop")
        os.kill(status.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _lock_is_held(status.root):
            if time.monotonic() > deadline:
                raise ServerError(
                    f"the class server (pid {status.pid}) did not stop within {timeout:.0f} s"
                )
            time.sleep(0.2)
        return f"stopped the class server in {status.root} (pid {status.pid}, {status.url})"
    if not status.stale:
        return f"no class server running in {status.root}; nothing to stop"
    left = []
    if _alive(status.mlflow_pid) and _is_mlflow(status.mlflow_pid, status.root):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(int(status.mlflow_pid), signal.SIGTERM)  # type: ignore[arg-type]
        left.append(f"its mlflow server (pid {status.mlflow_pid})")
    cluster = Postgres(status.root / "postgres")
    if cluster.is_running():
        cluster.stop()
        left.append("its PostgreSQL")
    (status.root / PID_NAME).unlink(missing_ok=True)
    stopped = f"; stopped what it left running: {' and '.join(left)}" if left else ""
    return f"removed a stale pid file in {status.root} (pid {status.pid} is gone){stopped}"


# ---------------------------------------------------------------------------- the server


def _secret_key(path: Path) -> str:
    """The Flask secret key of basic auth's CSRF protection: made once, kept in ``path`` (0600)."""
    if not path.is_file():
        path.touch(mode=0o600)
        path.write_text(secrets.token_hex(32), encoding="utf-8")
    return path.read_text(encoding="utf-8").strip()


@dataclass
class ClassServer:
    """PostgreSQL + ``mlflow server`` with basic auth and the class's gate, all under ``root``.

    `start` takes the folder's lock, checks the port, brings both up and creates the class
    experiment; `stop` takes down what it started (also as a context manager).
    `start_mlflow` / `stop_mlflow` and ``postgres`` act on one part (the tests restart each
    under a running class). TLS: ``tls_cert``/``tls_key`` (the teacher's), or ``tls=True``
    for a self-signed certificate made in ``root/tls``; a host other than loopback requires
    one of them unless ``insecure``.
    """

    root: Path
    admin_password: str
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    workers: int = DEFAULT_WORKERS
    experiment: str = DEFAULT_EXPERIMENT
    tls: bool = False
    tls_cert: Path | None = None
    tls_key: Path | None = None
    insecure: bool = False
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.root = self.root.expanduser().absolute()
        self.postgres = Postgres(self.root / "postgres")
        self._lock_fd: int | None = None
        self._own_postgres = False
        self._wrote_pid_file = False
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ServerError("give both --tls-cert and --tls-key, or neither")
        if self.tls_cert is not None:
            self.tls = True
            self.tls_cert, self.tls_key = self.tls_cert.absolute(), self.tls_key.absolute()  # type: ignore[union-attr]
            check_pair(self.tls_cert, self.tls_key)
        if not self.tls and not is_loopback(self.host) and not self.insecure:
            raise ServerError(
                f"--host {self.host} puts the class on the network, where basic auth over plain "
                "HTTP shows every password: serve HTTPS (--tls for a self-signed certificate, "
                "or --tls-cert/--tls-key), or say --insecure"
            )

    @property
    def scheme(self) -> str:
        """``https`` with TLS, else ``http``."""
        return "https" if self.tls else "http"

    @property
    def url(self) -> str:
        """Where this machine reaches it (loopback for a wildcard host)."""
        host = "127.0.0.1" if is_wildcard(self.host) else self.host
        host = f"[{host}]" if ":" in host else host
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def public_url(self) -> str:
        """Where students reach it: the machine's network address for a wildcard host."""
        if not is_wildcard(self.host):
            return self.url
        return f"{self.scheme}://{primary_address() or socket.gethostname()}:{self.port}"

    @property
    def cert(self) -> Path | None:
        """The certificate students verify the server with (``None``: plain HTTP)."""
        if not self.tls:
            return None
        return self.tls_cert or self.root / "tls" / "cert.pem"

    @property
    def admin(self) -> tuple[str, str]:
        """The teacher's credentials."""
        return ADMIN_USERNAME, self.admin_password

    @property
    def log(self) -> Path:
        """The MLflow server's log."""
        return self.root / "logs" / "mlflow-server.log"

    @property
    def artifacts(self) -> Path:
        """Where the artifacts of every run are kept (``--artifacts-destination``)."""
        return self.root / "artifacts"

    def runs_page(self, experiment_id: str) -> str:
        """The UI's page of the class experiment's runs."""
        return ui_experiment_url(self.public_url, experiment_id)

    def _auth_config(self) -> Path:
        path = self.root / "basic_auth.ini"
        path.write_text(
            "[mlflow]\n"
            "default_permission = NO_PERMISSIONS\n"
            f"database_uri = {self.postgres.uri(AUTH_DB)}\n"
            f"admin_username = {ADMIN_USERNAME}\n"
            f"authorization_function = {_AUTHORIZATION_FUNCTION}\n"
            f"auth_cache_ttl_seconds = {AUTH_CACHE_TTL_S}\n",
            encoding="utf-8",
        )
        return path

    # --- the folder's lock and pid file

    def _take_lock(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            info = _read_pid_file(self.root)
            raise ServerError(
                f"the class server in {self.root} is already running (pid {info.get('pid', '?')}, "
                f"{info.get('url', 'starting')}); stop it first: attnref server stop {self.root}"
            ) from None
        self._lock_fd = fd

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            if self._wrote_pid_file:  # a stale one of another is left for `stop_server`
                (self.root / PID_NAME).unlink(missing_ok=True)
                self._wrote_pid_file = False
            # held: the file is this server's to remove (a start that failed leaves none)
            (self.root / LOCK_NAME).unlink(missing_ok=True)
            os.close(self._lock_fd)  # drops the lock
            self._lock_fd = None

    def _write_pid_file(self) -> None:
        info = {
            "pid": os.getpid(), "url": self.url, "public_url": self.public_url,
            "mlflow_pid": self.process.pid if self.process else None,
            "cert": str(self.cert) if self.cert else None, "experiment": self.experiment,
            "started": dt.datetime.now().isoformat(timespec="seconds"),
            "root": str(self.root), "root_id": folder_id(self.root),
        }  # fmt: skip
        tmp = self.root / (PID_NAME + ".tmp")
        tmp.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.root / PID_NAME)
        self._wrote_pid_file = True

    # --- start and stop

    def start(self, timeout: float = 300) -> None:
        """Refuse if the folder's server runs or the port is taken (before touching anything
        else); then PostgreSQL, the MLflow server, the class experiment. A failure stops only
        what this call started."""
        existed = class_exists(self.root)
        self._take_lock()
        try:
            self._check_leftovers()
            if port_in_use("0.0.0.0" if is_wildcard(self.host) else self.host, self.port):
                raise ServerError(
                    f"port {self.port} is in use on {self.host}: another server listens there "
                    "(choose another with --port)"
                )
            self._write_pid_file()
            if self.tls and self.tls_cert is None:
                self_signed(self.root / "tls", self.host)
            self.postgres.init()
            self._own_postgres = self.postgres.start() or self._own_postgres
            for db in (TRACKING_DB, AUTH_DB):
                self.postgres.ensure_database(db)
            self.start_mlflow(timeout)
            try:
                class_experiment_id(self.url, self.admin, self.experiment, self.cert)
            except ServerError as e:
                if existed and "HTTP 401" in str(e):
                    raise ServerError(
                        f"the class in {self.root} was made with another admin password (its "
                        "accounts' database keeps the one of its first start): start it with "
                        "that one"
                    ) from None
                raise
        except BaseException:
            self.stop()
            raise

    def _check_leftovers(self) -> None:
        """A pid file of a server that died without stopping: its mlflow server may still run."""
        info = _read_pid_file(self.root)
        left = info.get("mlflow_pid")
        if info and _alive(left) and _is_mlflow(left, self.root):
            raise ServerError(
                f"the mlflow server (pid {left}) of a class server that did not stop is still "
                f"running; stop it first: attnref server stop {self.root}"
            )

    def start_mlflow(self, timeout: float = 300) -> int:
        """Start ``mlflow server`` in a process group of its own; wait for ``/health``; its pid."""
        self.artifacts.mkdir(parents=True, exist_ok=True)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_TRACKING_")}
        env |= {
            "MLFLOW_AUTH_CONFIG_PATH": str(self._auth_config()),
            "MLFLOW_AUTH_ADMIN_PASSWORD": self.admin_password,  # the environment, never argv
            "MLFLOW_FLASK_SERVER_SECRET_KEY": _secret_key(self.root / "secret_key"),
            # MLflow's job runner (GenAI scorers, online scoring): nothing a class uses
            "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
            # the class experiment: the UI's root opens on its runs (the gate's `landing`)
            CLASS_EXPERIMENT_ENV: self.experiment,
            # a route no validator of MLflow's covers is refused (behind the class's own table)
            "MLFLOW_BASIC_AUTH_FAIL_CLOSED": "true",
        }
        mlflow = str(Path(sys.executable).with_name("mlflow"))
        cmd = [
            mlflow, "server", "--backend-store-uri", self.postgres.uri(TRACKING_DB),
            "--artifacts-destination", str(self.artifacts), "--host", self.host,
            "--port", str(self.port), "--workers", str(self.workers), "--app-name", "basic-auth",
        ]  # fmt: skip
        # a worker holds at most this many connections at once and answers the next with a
        # 503 at once (clients retry it): queued, they would time out while the server works
        opts = f"--limit-concurrency {CONNECTIONS_PER_WORKER}"
        if self.tls:
            cert = self.cert
            key = self.tls_key or self.root / "tls" / "key.pem"
            opts += (f" --ssl-certfile {shlex.quote(str(cert))} "
                     f"--ssl-keyfile {shlex.quote(str(key))}")  # fmt: skip
        cmd += ["--uvicorn-opts", opts]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        while not healthy(self.url, cafile=self.cert):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop_mlflow()
                text = self.log.read_text(encoding="utf-8", errors="replace").strip()
                last = text.splitlines()[-1] if text else "no output"
                raise ServerError(f"mlflow server did not start: {last} (see {self.log})")
            time.sleep(0.5)
        if self.process.poll() is not None:  # another server answered /health: not ours
            self.stop_mlflow()
            raise ServerError(f"mlflow server exited; port {self.port} answers for another server")
        if self._lock_fd is not None:
            self._write_pid_file()
        return self.process.pid

    def stop_mlflow(self) -> None:
        """Stop the server and its workers: SIGTERM to its process group, SIGKILL what is left."""
        proc, self.process = self.process, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # workers that outlived their parent
        proc.wait()

    def stop(self) -> None:
        """What this server started: the MLflow server, then PostgreSQL; then the lock."""
        try:
            self.stop_mlflow()
        finally:
            try:
                if self._own_postgres:
                    self.postgres.stop()
                    self._own_postgres = False
            finally:
                self._release_lock()

    def __enter__(self) -> ClassServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
