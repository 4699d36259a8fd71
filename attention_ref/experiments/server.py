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
  app (``--app-name basic-auth``) and the run-ownership rule of
  `attention_ref.experiments.class_auth`.
* Accounts: ``admin`` (the teacher), whose password is read from ``$ATTNREF_ADMIN_PASSWORD``
  or a file: there is no default, and it is never printed, logged, written to disk by us or
  put on a command line (the server gets it in its environment). Every account reads every
  run (``default_permission = READ``); a student account may also create runs in the class
  experiment (EDIT on it) and change its own runs only.

Students point ``--tracking-uri`` / ``MLFLOW_TRACKING_URI`` at the server and give their
account in ``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD`` (MLflow's variables).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import pwd
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ADMIN_USERNAME = "admin"
ADMIN_PASSWORD_ENV = "ATTNREF_ADMIN_PASSWORD"
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
AUTH_CACHE_TTL_S = 60
_AUTHORIZATION_FUNCTION = "attention_ref.experiments.class_auth:authenticate"


class ServerError(ValueError):
    """The class server cannot start or be used as asked; the message says why, in one line."""


def read_password(
    file: Path | None, env_var: str = ADMIN_PASSWORD_ENV, environ: dict[str, str] | None = None
) -> str:
    """A password from ``file`` (its first line), else from ``$env_var``; never a default.

    Raises `ServerError` when neither gives one or it is shorter than MLflow accepts (12
    characters). The message never contains the password.
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
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ServerError(
            f"the password in {where} is too short: MLflow's basic auth needs at least "
            f"{MIN_PASSWORD_LENGTH} characters"
        )
    return password


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

    def is_running(self) -> bool:
        """``pg_ctl status``: whether the cluster's server is up."""
        if not (self.data / "PG_VERSION").is_file():
            return False
        out = subprocess.run(
            self._command("pg_ctl", "status", "-D", str(self.data)), capture_output=True
        )
        return out.returncode == 0

    def start(self) -> None:
        """Start the cluster (no TCP, only the private Unix socket); wait until it accepts."""
        if self.is_running():
            return
        options = f"-h '' -k {shlex.quote(str(self.socket_dir))}"
        self._run(
            "pg_ctl", "start", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
            "-o", options,
        )  # fmt: skip

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


def rest(
    url: str, endpoint: str, body: dict[str, Any] | None = None, *,
    auth: tuple[str, str] | None = None, method: str | None = None,
    query: dict[str, str] | None = None, data: bytes | None = None, timeout: float = 30,
) -> tuple[int, dict[str, Any]]:  # fmt: skip
    """One REST call: ``(HTTP status, JSON body)``; an HTTP error comes back as its status.

    ``body`` is sent as JSON; ``data`` as raw bytes (an artifact upload, with ``method="PUT"``).
    """
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
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    except (urllib.error.URLError, OSError) as e:  # no server there: one line, no traceback
        reason = getattr(e, "reason", e)
        raise ServerError(f"cannot reach the class server at {url}: {reason}") from None
    try:
        answer = json.loads(raw) if raw.strip() else {}
    except ValueError:
        answer = {"message": raw.decode(errors="replace")[:200]}
    return status, answer if isinstance(answer, dict) else {"value": answer}


def healthy(url: str, timeout: float = 2) -> bool:
    """Whether the server answers ``/health`` (a route without authentication) with OK."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/health", timeout=timeout) as r:
            return r.read().strip() == b"OK"
    except (urllib.error.URLError, OSError):
        return False


def _checked(status: int, answer: dict[str, Any], what: str) -> dict[str, Any]:
    if status == 401:
        raise ServerError(f"{what}: the server refused the admin credentials (HTTP 401)")
    if status >= 400:
        message = str(answer.get("message", answer)).splitlines()[0][:200]
        raise ServerError(f"{what}: HTTP {status}: {message}")
    return answer


def class_experiment_id(url: str, admin: tuple[str, str], name: str) -> str:
    """The class experiment's id, created (by the admin) if it does not exist yet.

    Idempotent under a race: ``attnref server start`` and an ``add-student`` run right after
    the server answers may both find no experiment and both create it; the one whose create
    is refused with "already exists" reads the other's.
    """

    def look_up() -> str | None:
        status, found = rest(
            url, "/api/2.0/mlflow/experiments/get-by-name", auth=admin,
            query={"experiment_name": name},
        )  # fmt: skip
        if status == 200:
            return str(found["experiment"]["experiment_id"])
        if status != 404:
            _checked(status, found, f"cannot look up the experiment {name!r}")
        return None

    found = look_up()
    if found is not None:
        return found
    status, made = rest(url, "/api/2.0/mlflow/experiments/create", {"name": name}, auth=admin)
    if status != 200 and "already exists" in str(made.get("message", "")):
        found = look_up()
        if found is not None:
            return found
    return str(_checked(status, made, f"cannot create the experiment {name!r}")["experiment_id"])


def add_student(
    url: str, admin: tuple[str, str], username: str, password: str, experiment: str
) -> str:
    """Create account ``username`` with EDIT on the class experiment; the experiment's id.

    An existing account keeps its password and gets the permission.
    """
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ServerError(
            f"the password of {username!r} is too short: at least {MIN_PASSWORD_LENGTH} characters"
        )
    exp_id = class_experiment_id(url, admin, experiment)
    status, made = rest(
        url, "/api/2.0/mlflow/users/create", {"username": username, "password": password},
        auth=admin,
    )  # fmt: skip
    if status != 200 and "already exists" not in str(made.get("message", "")):
        _checked(status, made, f"cannot create the account {username!r}")
    grant = {
        "username": username, "resource_type": "experiment", "resource_id": exp_id,
        "permission": "EDIT",
    }  # fmt: skip
    status, granted = rest(url, "/api/3.0/mlflow/users/permissions/grant", grant, auth=admin)
    _checked(status, granted, f"cannot let {username!r} edit the experiment {experiment!r}")
    return exp_id


# ---------------------------------------------------------------------------- the server


def _secret_key(path: Path) -> str:
    """The Flask secret key of basic auth's CSRF protection: made once, kept in ``path`` (0600)."""
    if not path.is_file():
        path.touch(mode=0o600)
        path.write_text(secrets.token_hex(32), encoding="utf-8")
    return path.read_text(encoding="utf-8").strip()


@dataclass
class ClassServer:
    """PostgreSQL + ``mlflow server`` with basic auth, all under ``root``.

    `start` brings both up and creates the class experiment; `stop` takes both down (also as
    a context manager). `start_mlflow` / `stop_mlflow` and ``postgres`` act on one part (the
    tests restart each under a running class).
    """

    root: Path
    admin_password: str
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    workers: int = DEFAULT_WORKERS
    experiment: str = DEFAULT_EXPERIMENT

    def __post_init__(self) -> None:
        self.root = self.root.expanduser().absolute()
        self.postgres = Postgres(self.root / "postgres")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Where students and the teacher reach it."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}"

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

    def _auth_config(self) -> Path:
        path = self.root / "basic_auth.ini"
        path.write_text(
            "[mlflow]\n"
            "default_permission = READ\n"
            f"database_uri = {self.postgres.uri(AUTH_DB)}\n"
            f"admin_username = {ADMIN_USERNAME}\n"
            f"authorization_function = {_AUTHORIZATION_FUNCTION}\n"
            # a password's hash is checked once a minute per account and worker, not on every
            # request (scrypt costs ~0.1 s of CPU: a class logs many requests a second)
            f"auth_cache_ttl_seconds = {AUTH_CACHE_TTL_S}\n",
            encoding="utf-8",
        )
        return path

    def start(self, timeout: float = 300) -> None:
        """PostgreSQL, then the MLflow server, then the class experiment."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.postgres.init()
        self.postgres.start()
        for db in (TRACKING_DB, AUTH_DB):
            self.postgres.ensure_database(db)
        self.start_mlflow(timeout)
        class_experiment_id(self.url, self.admin, self.experiment)

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
        }
        mlflow = str(Path(sys.executable).with_name("mlflow"))
        cmd = [
            mlflow, "server", "--backend-store-uri", self.postgres.uri(TRACKING_DB),
            "--artifacts-destination", str(self.artifacts), "--host", self.host,
            "--port", str(self.port), "--workers", str(self.workers), "--app-name", "basic-auth",
        ]  # fmt: skip
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        while not healthy(self.url):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop_mlflow()
                text = self.log.read_text(encoding="utf-8", errors="replace").strip()
                last = text.splitlines()[-1] if text else "no output"
                raise ServerError(f"mlflow server did not start: {last} (see {self.log})")
            time.sleep(0.5)
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
        """The MLflow server, then PostgreSQL."""
        try:
            self.stop_mlflow()
        finally:
            self.postgres.stop()

    def __enter__(self) -> ClassServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
